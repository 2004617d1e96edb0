"""Small pipeline specs for the tests: random DAGs and chains as YAML, built in memory."""

from __future__ import annotations

import yaml
from hypothesis import strategies as st

from tasksolve.specs import load_spec_text


def spec_text(
    tasks: dict[str, float],
    edges: list[tuple[str, str, int]],
    *,
    levels=None,
    communication=None,
    contexts=None,
    latency_max=None,
    clock="1GHz",
    name="test",
    resources=None,
    demand=None,
) -> str:
    """`resources`: topology resources (``{name, level, capacity}``); `demand`: per task, its
    demands (``{task: {resource: share}}``)."""
    data = {
        "tasksolve": 1,
        "name": name,
        "topology": {
            "name": "t",
            "clock": clock,
            "levels": levels or [{"name": "pair", "count": 2}, {"name": "core", "count": 2}],
        },
        "problem": "pipeline",
        "applications": {
            "g": {
                "tasks": {
                    t: {"cycles": c, **({"demand": demand[t]} if demand and demand.get(t) else {})}
                    for t, c in tasks.items()
                },
                "edges": [{"from": a, "to": b, "bytes": f"{n}B" if n else 0} for a, b, n in edges],
            }
        },
        "workload": [{"app": "g", "instances": 1}],
    }
    if communication is not None:
        data["topology"]["communication"] = communication
    if resources is not None:
        data["topology"]["resources"] = resources
    constraints = {}
    if contexts is not None:
        constraints["contexts"] = contexts
    if latency_max is not None:
        constraints["latency_max"] = latency_max
    if constraints:
        data["constraints"] = constraints
    return yaml.safe_dump(data, sort_keys=False)


def make_spec(*args, **kwargs):
    """The spec loaded without the loader's feasibility checks: these tests reach the pipeline's
    own refusal of a bound below the critical path."""
    return load_spec_text(spec_text(*args, **kwargs), feasibility=False)


@st.composite
def dags(draw, min_tasks=2, max_tasks=5, max_work=60):
    """A single-entry DAG: task j > 0 has 1-2 predecessors among the earlier tasks."""
    n = draw(st.integers(min_tasks, max_tasks))
    names = [f"t{i}" for i in range(n)]
    tasks = {name: draw(st.integers(1, max_work)) for name in names}
    edges = []
    for j in range(1, n):
        preds = draw(st.lists(st.integers(0, j - 1), min_size=1, max_size=min(2, j), unique=True))
        for i in sorted(preds):
            edges.append((names[i], names[j], draw(st.sampled_from([0, 64, 128]))))
    return tasks, edges


@st.composite
def chains(draw, min_tasks=2, max_tasks=6, max_work=60):
    n = draw(st.integers(min_tasks, max_tasks))
    names = [f"t{i}" for i in range(n)]
    tasks = {name: draw(st.integers(1, max_work)) for name in names}
    edges = [(names[i], names[i + 1], 64) for i in range(n - 1)]
    return tasks, edges
