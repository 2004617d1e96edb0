"""The feasibility checks run when a spec loads (`specs.feasibility`): placement by maximum flow,
checked against brute force; latency_max against the critical path, checked against the closed
form on every placement drawn."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from tasksolve.solver.cli import main
from tasksolve.specs import load_spec, load_spec_text
from tasksolve.specs import strategies as spec_st
from tasksolve.specs.errors import SpecError
from tasksolve.specs.feasibility import check_feasibility, check_placement, critical_path

T2 = """tasksolve: 1
name: s
topology: ultrasparc-t2
applications:
  ipfwd: ipfwd-intadd
workload:
  - {app: ipfwd, instances: 2}
constraints:
"""


def exists_placement(spec) -> bool:
    """Brute force (exhaustive backtracking): some injective map of the threads into usable
    contexts obeys pins, forbids and every cap."""
    topo = spec.topology
    cons = spec.constraints
    allowed = []
    for name in spec.thread_names:
        avoid = {c for d in cons.forbid.get(name, []) for c in topo.contexts_of(*topo.parse_domain(d))}
        ok = [c for c in spec.usable_contexts if c not in avoid]
        if name in cons.pin:
            ok = [c for c in ok if c == topo.parse_context(cons.pin[name])]
        allowed.append(ok)
    caps = [(-1 if level == "machine" else topo.level_index(level), cap) for level, cap in cons.max_threads.items()]
    used: set[int] = set()
    counts: dict[tuple[int, int], int] = {}

    def place(t: int) -> bool:
        if t == len(allowed):
            return True
        for c in allowed[t]:
            keys = [(k, 0 if k < 0 else topo.domain_of(c, k)) for k, _ in caps]
            if c in used or any(counts.get(key, 0) >= cap for key, (_, cap) in zip(keys, caps)):
                continue
            used.add(c)
            for key in keys:
                counts[key] = counts.get(key, 0) + 1
            if place(t + 1):
                return True
            used.discard(c)
            for key in keys:
                counts[key] -= 1
        return False

    return place(0)


@st.composite
def tight_specs(draw):
    """Small binding specs with tight constraints: a usable subset, caps on one or two levels,
    pins and forbids drawn independently (so that many admit no placement)."""
    data = draw(spec_st.spec_data(max_threads=5, max_contexts=8, constraints=False))
    data["problem"] = "binding"
    spec = spec_st.load(data)
    topo = spec.topology
    contexts = topo.context_names
    domains = sorted({".".join(c.split(".")[:k]) for c in contexts for k in range(1, len(topo.level_names) + 1)})
    n = len(spec.threads)
    assume(n <= len(contexts))
    usable = draw(st.lists(st.sampled_from(contexts), min_size=n, max_size=n + 2, unique=True))
    cons: dict = {"contexts": usable}
    levels = draw(st.lists(st.sampled_from(topo.level_names + ["machine"]), min_size=1, max_size=2, unique=True))
    cons["max_threads"] = {level: draw(st.integers(1, 2)) for level in levels}
    pinned = draw(st.lists(st.sampled_from(spec.thread_names), max_size=2, unique=True))
    cons["pin"] = dict(
        zip(pinned, draw(st.lists(st.sampled_from(usable), min_size=len(pinned), max_size=len(pinned), unique=True)))
    )
    forbidden = draw(st.lists(st.sampled_from(spec.thread_names), max_size=3, unique=True))
    cons["forbid"] = {
        t: draw(st.lists(st.sampled_from(domains), min_size=1, max_size=2, unique=True)) for t in forbidden
    }
    data["constraints"] = cons
    try:
        return spec_st.load(data)
    except SpecError:  # a plain mistake (pin outside the contexts, ...), not a feasibility question
        assume(False)


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(tight_specs())
def test_the_placement_check_is_exact(spec):
    feasible = exists_placement(spec)
    event(f"feasible: {feasible}")
    assert (check_placement(spec) == []) == feasible


@pytest.mark.parametrize(
    "constraints, field, fragment",
    [
        (
            "  contexts: [core0]\n  max_threads: {pipe: 2}\n",
            "constraints.max_threads.pipe",
            "max_threads {pipe: 2} leaves room for 4 of the 6 threads in the 8 contexts of constraints.contexts",
        ),
        (
            "  contexts: [core0.pipe0, core1.pipe0]\n  max_threads: {core: 2}\n",
            "constraints.max_threads.core",
            "leaves room for 4 of the 6 threads",
        ),
        ("  max_threads: {machine: 5}\n", "constraints.max_threads.machine", "room for 5 of the 6"),
        (
            '  contexts: [core0]\n  max_threads: {pipe: 3}\n  pin: {"ipfwd#0.R": "core0.pipe0.strand0", '
            '"ipfwd#0.P": "core0.pipe0.strand1", "ipfwd#0.T": "core0.pipe0.strand2", "ipfwd#1.R": "core0.pipe0.strand3"}\n',
            "constraints.pin",
            "with these pins with max_threads {pipe: 3}, only 5 of the 6 threads",
        ),
        (
            '  contexts: [core0]\n  max_threads: {pipe: 4}\n  forbid: {"ipfwd#0.R": [core0.pipe0], "ipfwd#0.P": [core0.pipe0], '
            '"ipfwd#0.T": [core0.pipe0], "ipfwd#1.R": [core0.pipe0], "ipfwd#1.P": [core0.pipe0]}\n',
            "constraints.forbid",
            "only 5 of the 6",
        ),
    ],
)
def test_impossible_placements_are_named_and_located(constraints, field, fragment):
    with pytest.raises(SpecError) as info:
        load_spec_text(T2 + constraints, "spec.yaml")
    ((file, line, col, path, message),) = info.value.problems
    assert (file, line is not None, col is not None) == ("spec.yaml", True, True)
    assert field in str(info.value) and fragment in message, message


def test_the_opt_out_loads_an_impossible_spec():
    text = T2 + "  contexts: [core0]\n  max_threads: {pipe: 2}\n  latency_max: 10ns\n"
    spec = load_spec_text(text, feasibility=False)
    assert [p.path for p in check_feasibility(spec)] == [
        ("constraints", "max_threads", "pipe"),
        ("constraints", "latency_max"),
    ]


def test_validate_and_solve_refuse_what_cannot_be_met(tmp_path, capsys):
    (tmp_path / "cap.yaml").write_text(T2 + "  contexts: [core0]\n  max_threads: {pipe: 2}\n")
    (tmp_path / "lat.yaml").write_text(T2 + "  latency_max: 10ns\n")
    for name, where in (
        ("cap.yaml", ":10:23: constraints.max_threads.pipe:"),
        ("lat.yaml", ":9:16: constraints.latency_max:"),
    ):
        for command in (["validate"], ["solve", "--time-limit", "1", "--method", "cpsat"], ["count"]):
            assert main([command[0], str(tmp_path / name), *command[1:]]) == 2
            err = capsys.readouterr().err
            assert name + where in err and "Traceback" not in err, err


def test_the_latency_bound_names_the_critical_path():
    spec = load_spec("t2-ipfwd-intadd-x2")
    cycles, path = critical_path(spec, "ipfwd")
    app = spec.applications["ipfwd"]
    comm = spec.topology.communication.cycles
    cheapest = min(comm.values())  # the T2's costs per level are direct
    assert path == ["R", "P", "T"]
    assert cycles == pytest.approx(sum(app.tasks[t].cycles for t in path) + 2 * cheapest)
    ok = T2 + f"  latency_max: {cycles}\n"
    assert load_spec_text(ok).constraints.latency_max.value == cycles
    with pytest.raises(SpecError, match="is below the shortest latency"):
        load_spec_text(T2 + f"  latency_max: {cycles * 0.999}\n")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.one_of(
        spec_st.spec_data(max_threads=7, max_contexts=16, constraints=False),
        spec_st.spec_data(max_threads=7, max_contexts=16, constraints=False, every_field=True),
    ),
    st.integers(0, 2**31 - 1),
)
def test_no_placement_beats_the_critical_path(data, seed):
    """Soundness: the closed form's latency of every drawn placement is at least the bound --
    with demands on every level, machine-wide loads, early signals, kinds of core and irregular
    trees (the every-field specs)."""
    from tasksolve.simulate.analytic import BatchModel

    spec = spec_st.load(data)
    if spec.problem != "binding":
        return
    rng = np.random.default_rng(seed)
    n = len(spec.threads)
    plans = np.array([rng.permutation(spec.usable_contexts)[:n] for _ in range(200)])
    latency = BatchModel(spec).evaluate(plans).latency_max * spec.topology.clock  # cycles
    bound = max(critical_path(spec, item.app)[0] for item in spec.workload)
    assert latency.min() >= bound * (1 - 1e-9)


def test_every_example_is_feasible():
    from tasksolve.specs.loader import builtin_names

    for name in builtin_names(""):
        assert check_feasibility(load_spec(name, feasibility=False)) == []


MACHINE_LOADED = """
tasksolve: 1
name: membw-bound
topology:
  name: one-socket
  clock: 1 GHz
  levels: [{name: core, count: 8}]
  resources: [{name: membw, level: machine, capacity: 1}]
applications:
  a:
    tasks:
      rx: {cycles: 1000, demand: {membw: 0.5}}
      tx: {cycles: 1000}
    edges: [{from: rx, to: tx}]
workload: [{app: a, instances: 2}]
constraints:
"""


def test_the_latency_bound_counts_the_load_no_placement_avoids():
    """Both rx threads load membw wherever they run: 2 x 0.5 = 100%, so no slowdown; with three
    instances 150%, so rx takes 1500 cycles on every plan and the path is 2500 cycles (2.5 us)."""
    three = MACHINE_LOADED.replace("instances: 2", "instances: 3")
    assert critical_path(load_spec_text(MACHINE_LOADED + "  latency_max: 2us\n"), "a")[0] == pytest.approx(2000)
    spec = load_spec_text(three + "  latency_max: 1s\n")
    assert critical_path(spec, "a")[0] == pytest.approx(2500)
    from tasksolve.simulate.analytic import BatchModel

    reached = BatchModel(spec).evaluate(np.arange(6)).latency_max[0] * spec.topology.clock
    assert reached == pytest.approx(2500)  # the bound is met: it is the least latency, not a guess
    with pytest.raises(SpecError, match="2500 cycles.*slowed by the load no placement avoids on membw"):
        load_spec_text(three + "  latency_max: 2.4us\n")
    load_spec_text(three + "  latency_max: 2.5us\n")
