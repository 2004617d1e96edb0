"""Tests of the cost oracles (`simulate`) and the samplers; helpers to build specs in memory."""

from __future__ import annotations

import textwrap

import numpy as np
import yaml

from tasksolve.specs import dump_spec, load_spec_text

# a small machine: 2 sockets x 2 cores x 2 strands (8 contexts); resource `port` per core,
# `bus` per socket; communication by innermost shared level
SMALL_TOPOLOGY = """
  name: small
  clock: 1GHz
  levels:
    - {name: socket, count: 2}
    - {name: core, count: 2}
    - {name: strand, count: 2}
  resources:
    - {name: port, level: core, capacity: 1.0}
    - {name: bus, level: socket, capacity: 1.0}
  communication: {core: 4, socket: 10, machine: 40}
"""


def spec_from(body: str, topology: str = SMALL_TOPOLOGY, feasibility: bool = True):
    """A spec from YAML text (``topology`` inlined); ``feasibility=False`` loads constraints that
    admit no placement (to test what the samplers say about them)."""
    text = "tasksolve: 1\nname: test\ntopology:\n" + textwrap.indent(textwrap.dedent(topology).strip("\n"), "  ") + "\n"
    return load_spec_text(text + textwrap.dedent(body), feasibility=feasibility)


def with_tasks(spec, change) -> object:
    """A copy of `spec` whose every task dict goes through `change(task_dict)`."""
    data = yaml.safe_load(dump_spec(spec))
    for app in data["applications"].values():
        for task in app["tasks"].values():
            change(task)
    return load_spec_text(yaml.safe_dump(data))


def spinning(spec):
    """idle_demand = demand for every task (the closed form is then exact for the simulation)."""
    return with_tasks(spec, lambda task: task.__setitem__("idle_demand", dict(task.get("demand", {}))))


def resting(spec):
    """idle_demand = 0 for every task (the closed form is then a pessimistic bound)."""
    return with_tasks(spec, lambda task: task.__setitem__("idle_demand", {}))


def random_pipeline_plan(spec, rng: np.random.Generator):
    """A random pipeline plan: each instance's tasks in topological order cut into consecutive
    groups (one stage each), one group replicated twice when contexts allow, random contexts."""
    from tasksolve.specs import Plan, PlanThread

    threads = {}
    per_instance = len(spec.usable_contexts) // len(spec.instances)
    for app, i in spec.instances:
        order = spec.applications[app].topological_order
        k = int(rng.integers(1, min(len(order), per_instance) + 1))
        cuts = (
            sorted(rng.choice(np.arange(1, len(order)), size=min(k - 1, len(order) - 1), replace=False).tolist())
            if len(order) > 1
            else []
        )
        bounds = [0] + cuts + [len(order)]
        for stage, (a, b) in enumerate(zip(bounds, bounds[1:])):
            threads[f"{app}#{i}.s{stage}r0"] = PlanThread(app=app, instance=i, tasks=order[a:b], stage=stage, replica=0)
    free = len(spec.usable_contexts) - len(threads)
    assert free >= 0
    if free >= 1:
        name = sorted(threads)[int(rng.integers(len(threads)))]
        th = threads[name]
        threads[name[:-1] + "1"] = th.model_copy(update={"replica": 1})
    contexts = rng.permutation(spec.usable_contexts)[: len(threads)]
    names = spec.topology.context_names
    return Plan(bindings={t: names[int(c)] for t, c in zip(threads, contexts)}, threads=threads)
