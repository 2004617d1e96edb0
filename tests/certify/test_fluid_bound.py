"""The fluid bound on the simulation (`solver.certify.fluid_bound`, `fluid_max`, `bounds.simulation_bound`):
never below a simulated throughput beyond its half-width, exact without contention, at least the
closed form where the closed form is exact, and its maximum over plans at least the best simulated
class (brute force on small specs)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tasksolve.simulate.analytic import evaluate, solve
from tasksolve.simulate.des import DesSettings
from tasksolve.simulate.model import compile_plan
from tasksolve.simulate.oracle import SimulationOracle
from tasksolve.solver.binding.samplers import distinct_placements
from tasksolve.solver.certify.bounds import Rigorous, SimulationBound, simulation_bound
from tasksolve.solver.certify.fluid_bound import plan_bound, plan_problem, solve_problem
from tasksolve.solver.certify.fluid_max import enumerated_max, relaxed_max
from tasksolve.specs import Plan, PlanThread, load_spec
from tasksolve.specs import strategies as st_specs

FLOAT = 1e-9  # relative: float rounding (the bound carries a 1e-9 margin of its own)
SIM = {"packets": 4000, "warmup": 400, "precision": 0.02, "time_cap": 20.0}
FAST = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@st.composite
def spec_and_plan(draw, idle_equal: bool = False, max_threads: int = 5):
    data = draw(st_specs.spec_data(max_threads=max_threads, max_contexts=8, max_tasks=3))
    data["objective"] = draw(st.sampled_from(["total_throughput", "min_throughput"]))
    data.pop("oracle", None)
    if idle_equal:
        for app in data["applications"].values():
            for task in app["tasks"].values():
                task.pop("idle_demand", None)
                if "demand" in task:
                    task["idle_demand"] = dict(task["demand"])
    spec = st_specs.load(data)
    contexts = draw(st_specs.binding_plans(spec))
    return spec, Plan.from_contexts(spec, contexts)


@st.composite
def contended_spec(draw):
    """Small specs whose shared resources bind: 3-6 threads on 8 contexts (two levels), one
    resource per outer domain (capacity 1) and one machine-wide, every task loading both, idle
    demands from none to above the busy ones (busy-polling that costs more than work), chains or
    forks of 2-3 tasks with messages that cost more across domains."""
    outer = draw(st.sampled_from([2, 4]))
    topology = {
        "name": "box",
        "clock": "1GHz",
        "levels": [{"name": "core", "count": outer}, {"name": "strand", "count": 8 // outer}],
        "resources": [
            {"name": "near", "level": "core", "capacity": 1.0},
            {"name": "far", "level": "machine", "capacity": draw(st.sampled_from([1.0, 2.0]))},
        ],
        "communication": {"core": draw(st.sampled_from([0, 10])), "machine": draw(st.sampled_from([0, 90]))},
    }
    loads = st.sampled_from([0.0, 0.2, 0.5, 0.9])
    apps, workload = {}, []
    for a in range(draw(st.integers(1, 2))):
        n = draw(st.integers(2, 3))
        tasks = {
            f"t{k}": {
                "cycles": draw(st.sampled_from([100, 250, 600])),
                "demand": {"near": draw(st.sampled_from([0.3, 0.6, 0.9])), "far": draw(loads)},
                "idle_demand": {"near": draw(st.sampled_from([0.0, 0.3, 0.6, 1.0])), "far": draw(loads)},
            }
            for k in range(n)
        }
        fork = n == 3 and draw(st.booleans())
        edges = [{"from": "t0", "to": "t1", "bytes": "64B"}]
        if n == 3:
            edges.append({"from": "t0" if fork else "t1", "to": "t2", "bytes": "64B"})
        apps[f"app{a}"] = {"tasks": tasks, "edges": edges}
        workload.append({"app": f"app{a}", "instances": draw(st.integers(1, 2))})
    assume(sum(len(apps[w["app"]]["tasks"]) * w["instances"] for w in workload) <= 6)
    data = {
        "tasksolve": 1,
        "name": "contended",
        "topology": topology,
        "applications": apps,
        "workload": workload,
        "objective": draw(st.sampled_from(["total_throughput", "min_throughput"])),
    }
    return st_specs.load(data)


@st.composite
def contended_spec_and_plan(draw):
    spec = draw(contended_spec())
    return spec, Plan.from_contexts(spec, draw(st_specs.binding_plans(spec)))


@FAST
@given(st.one_of(contended_spec_and_plan(), spec_and_plan()), st.sampled_from([16, 2, None]))
def test_never_below_the_simulation(case, queue_capacity):
    spec, plan = case
    oracle = SimulationOracle(spec, queue_capacity=queue_capacity, **SIM)
    m = oracle.evaluate(plan)
    bound = plan_bound(spec, plan, settings=oracle.settings).value
    value = m.value(spec.objective)
    half = m.half_width if spec.objective == "total_throughput" else max(m.per_instance_half_width.values())
    assert bound >= value - half - FLOAT * value, (bound, value, half)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(spec_and_plan())
def test_exact_without_contention(case):
    """No contention: every thread runs at rate 1, and the bound is the contention-free rate."""
    spec, plan = case
    graph = compile_plan(spec, plan).idealised("contention")
    result = solve(graph)
    per_instance = graph.clock / result.period
    expected = per_instance.sum() if spec.objective == "total_throughput" else per_instance.min()
    found = solve_problem(plan_problem(graph, DesSettings.from_spec(spec)), spec.objective)
    assert found.value == pytest.approx(expected, rel=1e-7)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(spec_and_plan(idle_equal=True))
def test_at_least_the_closed_form_where_it_is_exact(case):
    """With idle_demand == demand the closed form is the simulation's throughput (docs/design.md),
    so the bound, an upper bound on the simulation, is at least the closed form."""
    spec, plan = case
    closed = evaluate(spec, plan).value(spec.objective)
    assert plan_bound(spec, plan).value >= closed * (1 - FLOAT)


def test_equal_to_the_simulation_on_an_uncontended_t2_plan():
    """intadd-x2 with every thread alone on a pipe: no slot is ever over capacity, the closed
    form is the simulation's throughput, and the bound equals it."""
    spec = load_spec("t2-ipfwd-intadd-x2")
    plan = Plan.from_contexts(spec, [0, 4, 8, 12, 16, 20])
    m = SimulationOracle(spec).evaluate(plan)
    bound = plan_bound(spec, plan).value
    assert m.throughput == pytest.approx(evaluate(spec, plan).throughput, rel=1e-6)
    assert bound == pytest.approx(evaluate(spec, plan).throughput, rel=1e-6)


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(contended_spec())
def test_maximum_over_plans_against_brute_force(spec):
    """Every placement class simulated (at most 150): the best is never above the enumerated
    maximum (beyond its half-width), which the relaxation never undercuts."""
    reps, _ = distinct_placements(spec)
    assume(len(reps) <= 150)
    oracle = SimulationOracle(spec, **SIM)
    settings_ = oracle.settings
    enumerated = enumerated_max(spec, settings_, spec.objective)
    relaxed = relaxed_max(spec, settings_, spec.objective)
    assert enumerated is not None and enumerated.classes == len(reps)
    assert relaxed.value >= enumerated.value * (1 - FLOAT)
    every = [plan_bound(spec, Plan.from_contexts(spec, row), settings=settings_).value for row in reps]
    assert enumerated.value == pytest.approx(max(every), rel=1e-7)  # the ceiling skipped none that matters
    for row in reps:
        m = oracle.evaluate(Plan.from_contexts(spec, [int(c) for c in row]))
        value = m.value(spec.objective)
        half = m.half_width if spec.objective == "total_throughput" else max(m.per_instance_half_width.values())
        assert enumerated.value >= value - half - FLOAT * value


def test_simulation_bound_on_t2_constrained_is_above_its_plans():
    """The bound object: about the simulation, enumerated over the allowed classes, above the
    plan the issue measured (4.435 Mpps), and its gap arithmetic."""
    spec = load_spec("t2-constrained")
    plan = Plan.from_contexts(spec, enumerated_max(spec, DesSettings.from_spec(spec), spec.objective).contexts)
    found = simulation_bound(spec, plan=plan)
    assert isinstance(found, SimulationBound)
    assert found.applies_to("des") and not found.applies_to("analytic")
    assert found.method == "enumeration" and found.classes > 0
    assert found.plan_value <= found.value * (1 + FLOAT)
    measured = SimulationOracle(spec).evaluate(plan)  # 4.435 Mpps, half-width 0.019
    assert found.value >= measured.throughput - measured.half_width
    assert found.proves(found.value, 0.0, 0.0)
    assert found.gap(0.99 * found.value, 0.0) == pytest.approx(0.01)
    assert not found.proves(0.9 * found.value, 0.01 * found.value, 0.05)
    assert found.to_dict()["oracle"] == "des"


def test_closed_form_bound_is_labelled_as_what_it_is():
    on_sim = Rigorous("OPTIMAL", 4.087e6, "cpsat", 4.087e6, None, applies=False)
    assert "closed form only" in on_sim.label and "not a bound on the simulation" in on_sim.label
    assert on_sim.to_dict()["oracle"] == "analytic"
    assert Rigorous("OPTIMAL", 1.0, "cpsat", 1.0, None).label.startswith("rigorous bound")


def test_no_bound_for_latency_or_pipelines():
    spec = load_spec("t2-ipfwd-intadd-x2")
    assert simulation_bound(spec, objective="latency") is None
    assert simulation_bound(load_spec("xeon-lata-dag")) is None


def test_relaxation_is_above_every_plan_bound_on_a_larger_spec():
    """l1-x8 (24 threads, too many classes to enumerate): the relaxation is above the per-plan
    bound of random plans."""
    spec = load_spec("t2-ipfwd-l1-x8")
    settings_ = DesSettings.from_spec(spec)
    relaxed = relaxed_max(spec, settings_, spec.objective)
    rng = np.random.default_rng(0)
    for _ in range(20):
        contexts = rng.permutation(64)[: len(spec.threads)]
        per_plan = plan_bound(spec, Plan.from_contexts(spec, contexts), settings=settings_).value
        assert relaxed.value >= per_plan * (1 - FLOAT)


@st.composite
def pipeline_case(draw):
    """A two-stage pipeline on SMALL_TOPOLOGY (a port per core, a bus per socket, messages dearer
    across sockets): x then y, each replicated 1-3 times, loading the port (idle demand from none
    to above the busy one), y's last cycles optionally under a lock or optimistic, and the
    simulation's options: shared queue, queue capacity, service law."""
    from tests.simulate import spec_from

    rx, ry = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    load = st.sampled_from([0.3, 0.6, 0.9])
    idle = st.sampled_from([0.0, 0.3, 0.9])
    critical = draw(
        st.sampled_from(["", ", critical: {lock: t, cycles: 40%}", ", critical: {lock: t, speculate: 20%}"])
    )
    body = f"""
applications:
  a:
    tasks:
      x: {{cycles: {draw(st.sampled_from([60, 150]))}, demand: {{port: {draw(load)}}}, idle_demand: {{port: {draw(idle)}}}}}
      y: {{cycles: {draw(st.sampled_from([100, 300]))}, demand: {{port: {draw(load)}, bus: 0.3}}, idle_demand: {{port: {draw(idle)}}}{critical}}}
    edges: [{{from: x, to: y, bytes: 64B}}]
workload: [{{app: a}}]
problem: pipeline
"""
    spec = spec_from(body)
    contexts = draw(st.permutations(range(8)))
    threads, bindings = {}, {}
    for k, (task, stage, r) in enumerate([("x", 0, r) for r in range(rx)] + [("y", 1, r) for r in range(ry)]):
        name = f"{task}{r}"
        threads[name] = PlanThread(app="a", instance=0, tasks=[task], stage=stage, replica=r)
        bindings[name] = spec.topology.context_names[contexts[k]]
    options = {
        "shared_queue": draw(st.booleans()),
        "queue_capacity": draw(st.sampled_from([16, 2, None])),
        "service": draw(st.sampled_from(["deterministic", "exponential"])),
    }
    return spec, Plan(bindings=bindings, threads=threads), options


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(pipeline_case())
def test_never_below_the_simulation_on_pipelines(case):
    """Replicated producers and consumers, shared queues, locks, random work: the per-plan bound
    stays above the simulated throughput (beyond its half-width)."""
    spec, plan, options = case
    oracle = SimulationOracle(spec, **SIM, **options)
    m = oracle.evaluate(plan)
    bound = plan_bound(spec, plan, settings=oracle.settings).value
    assert bound >= m.throughput - m.half_width - FLOAT * m.throughput, (bound, m.throughput, m.half_width)


# ---------------------------------------------------------------- joint-state cuts (constraint 9)
def _simulation_rates(spec, plan, nb) -> np.ndarray:
    """u's rate in every state of its neighbours, by the simulation's own rule and tables
    (`Simulation._compute_rate` on loads built from `tslots`), independent of `fluid_cuts`."""
    from tasksolve.simulate.des.run import Simulation

    sim = Simulation(compile_plan(spec, plan), DesSettings.from_spec(spec), None)
    out = []
    for state in nb.states:
        busy = {nb.u} | {v for v, on in zip(nb.others, state) if on}
        sim.load = [0] * len(sim.load)
        for t in range(sim.T):
            for slot, b, i in sim.tslots[t]:
                sim.load[slot] += b if t in busy else i
        out.append(sim._compute_rate(nb.u))
    return np.array(out)


@FAST
@given(contended_spec_and_plan(), st.data())
def test_cut_states_follow_the_simulation_and_every_cut_holds_in_every_state(case, data):
    """(9a): the rate `fluid_cuts` gives each state is the simulation's (where it keeps the
    slot) or above it (slots counted at their best rate), and a separated cut -- at a random
    point -- satisfies ``a + c.S >= f(S)`` in every state exactly, so (9) holds at every
    instant of every run."""
    from tasksolve.solver.certify.fluid_cuts import neighbourhoods, separate

    spec, plan = case
    problem = plan_problem(compile_plan(spec, plan), DesSettings.from_spec(spec))
    nbs = neighbourhoods(problem.slots)
    assume(nbs)
    for nb in nbs:
        assert np.all(nb.rate >= _simulation_rates(spec, plan, nb) - 1e-12)
        b = data.draw(st.floats(0.05, 1.0))
        w = np.array([data.draw(st.floats(0.0, b)) for _ in nb.others])
        cut = separate(nb, b, w, y_u=1.0)
        if cut is not None:
            a, c = cut
            assert np.all(a + nb.states @ c >= nb.rate)
            assert a * b + w @ c < 1.0


@FAST
@given(contended_spec_and_plan(), st.sampled_from([16, 2, None]))
def test_cuts_tighten_and_stay_above_the_simulation(case, queue_capacity):
    """The bound with cuts (9) is at most the bound without them and never below the simulated
    value beyond its half-width."""
    spec, plan = case
    oracle = SimulationOracle(spec, queue_capacity=queue_capacity, **SIM)
    problem = plan_problem(compile_plan(spec, plan), oracle.settings)
    with_cuts = solve_problem(problem, spec.objective).value
    without = solve_problem(problem, spec.objective, cut_rounds=0).value
    assert with_cuts <= without * (1 + FLOAT)
    m = oracle.evaluate(plan)
    value = m.value(spec.objective)
    half = m.half_width if spec.objective == "total_throughput" else max(m.per_instance_half_width.values())
    assert with_cuts >= value - half - FLOAT * value, (with_cuts, value, half)


def test_cuts_make_t2_constrained_tight():
    """t2-constrained's best class: without cuts the LP is 2.2% above the simulation (the chord of
    P#1's pipe runs through loads that never occur); with them it is within 0.01% of a long run
    (3 million packets, half-width 0.03%) and not below it beyond that half-width."""
    from tasksolve.simulate.des import simulate

    spec = load_spec("t2-constrained")
    plan = Plan.from_contexts(spec, [0, 4, 1, 8, 9, 2])
    problem = plan_problem(compile_plan(spec, plan), DesSettings.from_spec(spec))
    long = simulate(spec, plan, precision=0.0005, packets=3_000_000, time_cap=None)
    bound = solve_problem(problem, spec.objective).value
    assert solve_problem(problem, spec.objective, cut_rounds=0).value > 1.02 * long.throughput
    assert long.throughput - long.half_width <= bound <= 1.0001 * long.throughput + long.half_width


# ---------------------------------------------------------------- pin and forbid in the enumeration
def _allowed_forms_by_brute_force(spec) -> set:
    """The canonical forms of every raw plan that obeys contexts, pin and forbid."""
    from tasksolve.solver.certify.allowed_classes import allowed_matrix
    from tasksolve.specs.symmetry import UsableTree

    tree = UsableTree.of(spec.topology, spec.usable_contexts)
    allowed = allowed_matrix(spec)
    T = len(spec.threads)
    forms: set = set()

    def extend(row: list[int]) -> None:
        if len(row) == T:
            forms.add(tree.canonical_form({c: t for t, c in enumerate(row)}))
            return
        for c in np.flatnonzero(allowed[len(row)]):
            if int(c) not in row:
                extend(row + [int(c)])

    extend([])
    return forms


@pytest.mark.parametrize(
    "name, constraints",
    [
        ("t2-constrained", None),
        ("intadd-x2@core0+pipe", {"forbid": {"a0#0.P": ["core0.pipe0"], "a0#1.R": ["core1"]}}),
        ("intadd-x2@core0+pipe", {"pin": {"a0#1.P": "core0.pipe1.strand2"}, "forbid": {"a0#0.T": ["core0"]}}),
    ],
)
def test_allowed_classes_equal_brute_force(name, constraints):
    """A class is kept iff some raw plan in it obeys pin and forbid: the matching test against
    every raw plan canonicalised."""
    from tasksolve.solver.certify.allowed_classes import allowed_classes
    from tasksolve.specs.symmetry import UsableTree

    spec = load_spec(name) if constraints is None else _variant_with(name, constraints)
    reps, _ = distinct_placements(spec)
    mask = allowed_classes(spec, reps)
    tree = UsableTree.of(spec.topology, spec.usable_contexts)
    forms = _allowed_forms_by_brute_force(spec)
    assert 0 < mask.sum() < len(reps)
    assert [tree.canonical_form({int(c): t for t, c in enumerate(row)}) in forms for row in reps] == list(mask)


def _variant_with(name: str, constraints: dict):
    """`bench/fluid_bound.py`'s intadd-x2@core0+pipe (two IPFwd-intadd instances on core0 and
    core1's first pipe) with extra constraints."""
    from tasksolve.specs.loader import load_spec_text

    assert name == "intadd-x2@core0+pipe"
    lines = ["tasksolve: 1", f"name: {name}", "topology: ultrasparc-t2", "applications:", "  a0: ipfwd-intadd"]
    lines += ["workload:", "  - {app: a0, instances: 2}", "constraints:", '  contexts: ["core0", "core1.pipe0"]']
    lines += [f"  {key}: {value}" for key, value in constraints.items()]
    return load_spec_text("\n".join(lines) + "\n", f"<{name}>")


def test_enumeration_skips_classes_pin_and_forbid_rule_out():
    """t2-constrained: fewer classes than without pin and forbid, the same maximum when the best
    class is allowed, and every allowed class's plan bound below the maximum."""
    from tasksolve.solver.certify.fluid_max import allowed_reps

    spec = load_spec("t2-constrained")
    settings_ = DesSettings.from_spec(spec)
    found = enumerated_max(spec, settings_, spec.objective)
    assert found.classes == len(allowed_reps(spec)) < 255
    for row in allowed_reps(spec)[:20]:
        assert plan_bound(spec, Plan.from_contexts(spec, row), settings=settings_).value <= found.value * (1 + FLOAT)
