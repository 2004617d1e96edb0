"""The closed-form pipeline model (solver/pipeline/problem.py) against hand-computed figures and
against the independent implementation in `simulate.analytic`."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve.solver.pipeline.candidates import Candidate, Group, check_candidate
from tasksolve.solver.pipeline.evaluation import evaluate
from tasksolve.solver.pipeline.plans import to_plan
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem
from tasksolve.specs import load_spec
from tests.pipeline.helpers import dags, make_spec

FLAT = [{"name": "cpu", "count": 4}]


def chain3(**kw):
    spec = make_spec(
        {"a": 30, "b": 50, "c": 20}, [("a", "b", 64), ("b", "c", 64)], levels=FLAT, communication={"machine": 10}, **kw
    )
    return PipelineProblem.from_spec(spec, latency_max=None)


def G(tasks, replicas=1, contexts=None):
    return Group(tuple(tasks), replicas, None if contexts is None else tuple(contexts))


def test_unreplicated_chain_times_period_latency():
    p = chain3()
    ev = evaluate(p, Candidate((G([0], 1, [0]), G([1], 1, [1]), G([2], 1, [2]))))
    assert ev.times == (30, 60, 30)  # the consumer pays the message (10 cycles)
    assert ev.period == 60 and ev.latency == 120
    assert ev.throughput == pytest.approx(1e9 / 60)
    assert ev.stages == (0, 1, 2)


def test_replication_divides_period_not_latency():
    p = chain3()
    ev = evaluate(p, Candidate((G([0], 1, [0]), G([1, 2], 2, [1, 2]))))
    assert ev.times == (30, 80)  # b+c = 70, plus the message from a
    assert ev.period == 40  # two replicas take packets in turn: 80 / 2
    assert ev.latency == 110  # a packet still spends 80 cycles in one replica
    assert ev.bottleneck == 1
    three = evaluate(p, Candidate((G([0], 1, [0]), G([1, 2], 3, [1, 2, 3]))))
    assert three.period == 30 and three.bottleneck == 0  # 80/3 < 30: the first stage limits


def test_messages_inside_a_group_are_free():
    p = chain3()
    ev = evaluate(p, Candidate((G([0, 1, 2], 4, [0, 1, 2, 3]),)))
    assert ev.times == (100,) and ev.period == 25 and ev.latency == 100


def two_level(costs=None):
    spec = make_spec({"a": 10, "b": 10}, [("a", "b", 64)], communication=costs or {"pair": 5, "machine": 40})
    return PipelineProblem.from_spec(spec, latency_max=None)


@pytest.mark.parametrize("ctx_b, cost", [([1], 5), ([2], 40), ([3], 40), ([1, 2], 40), ([1], 5)])
def test_communication_by_the_level_holding_both_groups(ctx_b, cost):
    p = two_level()
    ev = evaluate(p, Candidate((G([0], 1, [0]), G([1], len(ctx_b), ctx_b))))
    assert ev.comm == (0, cost)


def test_unmapped_candidates_pay_the_costliest_level():
    p = two_level({"pair": 50, "machine": 7})  # costs need not grow outward
    ev = evaluate(p, Candidate((G([0]), G([1]))))
    assert ev.pessimistic and ev.comm == (0, 50)
    mapped = evaluate(p, Candidate((G([0], 1, [0]), G([1], 1, [2]))))
    assert mapped.comm == (0, 7)


def test_join_latency_is_the_longest_path_and_stage_latency_sums_stages():
    spec = make_spec(
        {"a": 10, "b": 40, "c": 5, "d": 10},
        [("a", "b", 64), ("a", "c", 64), ("b", "d", 64), ("c", "d", 64)],
        levels=FLAT,
        communication={"machine": 3},
    )
    p = PipelineProblem.from_spec(spec, latency_max=None)
    cand = Candidate((G([0], 1, [0]), G([1], 1, [1]), G([2], 1, [2]), G([3], 1, [3])))
    ev = evaluate(p, cand)
    assert ev.times == (10, 43, 8, 16)  # d receives two messages
    assert ev.latency == 10 + 43 + 16
    assert ev.critical == (0, 1, 3)
    assert ev.stage_latency == ev.latency  # b sets stage 1
    relabelled = Candidate(cand.groups, (0, 1, 2, 3))  # c alone in stage 2 adds its time
    assert evaluate(p, relabelled).stage_latency == 10 + 43 + 8 + 16


def test_cache_model_costs_in_ticks():
    import math

    spec = load_spec("xeon-lata-dag")
    app = spec.applications["dag"]
    p = PipelineProblem.from_spec(spec)
    assert p.scale == 10  # 34.3 cycles per line at the shared L2
    e = next(e for e in p.edges if p.tasks[e.source] == "rx")
    lines = math.ceil(app.edge_bytes("rx", "parse") / 64)
    assert e.at(1) == lines * 343 and e.at(-1) == lines * 2170  # 14*0.9 + 217*0.1 = 34.3; memory 217
    bound = spec.constraints.latency_max.to_cycles(spec.topology.clock)
    assert p.latency_max == round(bound * 10)
    assert p.sequential == round(app.total_cycles * 10)
    finish: dict[str, float] = {}
    for task in app.topological_order:
        finish[task] = app.tasks[task].cycles + max((finish[q] for q in app.predecessors[task]), default=0)
    assert p.critical_path == round(max(finish.values()) * 10)


@pytest.mark.parametrize("text, cycles", [("75%", "75%"), ("2800", 2800), ("1.5us", 3000), (None, None)])
def test_latency_bound_forms(text, cycles):
    spec = load_spec("xeon-lata-dag")
    p = PipelineProblem.from_spec(spec, latency_max=text)
    if cycles == "75%":
        cycles = 0.75 * spec.applications["dag"].total_cycles
    assert (p.latency_max is None and cycles is None) or p.cycles(p.latency_max) == cycles


@pytest.mark.parametrize("bad", ["fast", "-3us", "75 parsecs"])
def test_bad_latency_bounds_are_rejected(bad):
    with pytest.raises(PipelineError, match="latency-max"):
        PipelineProblem.from_spec(load_spec("xeon-lata-dag"), latency_max=bad)


def test_cores_keeps_the_first_usable_contexts():
    p = PipelineProblem.from_spec(load_spec("xeon-lata-dag"), cores=3)
    assert p.contexts == (0, 1, 2)
    with pytest.raises(PipelineError):
        PipelineProblem.from_spec(load_spec("xeon-lata-dag"), cores=9)


def test_check_candidate_finds_every_kind_of_invalid_candidate():
    p = chain3()
    assert check_candidate(p, Candidate((G([0, 1, 2], 1, [0]),))) == []
    assert any("no group" in m for m in check_candidate(p, Candidate((G([0, 1]),))))
    assert any("groups 0 and 1" in m for m in check_candidate(p, Candidate((G([0, 1]), G([1, 2])))))
    assert any("before its predecessor" in m for m in check_candidate(p, Candidate((G([1, 0, 2]),))))
    assert any("cycle" in m for m in check_candidate(p, Candidate((G([0, 2]), G([1])))))
    assert any("threads for 4" in m for m in check_candidate(p, Candidate((G([0, 1, 2], 5),))))
    assert any("two threads" in m for m in check_candidate(p, Candidate((G([0], 1, [1]), G([1, 2], 1, [1])))))
    assert any("earlier stage" in m for m in check_candidate(p, Candidate((G([0]), G([1, 2])), (1, 1))))


@settings(max_examples=25, deadline=None)
@given(dag=dags(max_tasks=6), data=st.data())
def test_closed_form_matches_the_analytic_oracle(dag, data):
    """`simulate.analytic` (an independent implementation of the same semantics) agrees with
    `evaluate` without resource demands, on a flat topology or not, with replicas: each replica
    pays the mean cost of the producer replicas it hears from in both."""
    pytest.importorskip("tasksolve.simulate.oracle")
    from tasksolve.simulate.oracle import make_oracle

    tasks, edges = dag
    flat = data.draw(st.booleans())
    spec = make_spec(
        tasks,
        edges,
        levels=FLAT if flat else None,
        communication={"machine": 9} if flat else {"pair": 3, "machine": 20},
    )
    p = PipelineProblem.from_spec(spec, latency_max=None)
    # a random valid candidate: cut a topological order into consecutive groups
    cuts = sorted(data.draw(st.sets(st.integers(1, p.n - 1), max_size=min(3, p.n - 1))))
    bounds = [0] + cuts + [p.n]
    groups = [tuple(range(a, b)) for a, b in zip(bounds, bounds[1:])]
    free = list(data.draw(st.permutations(range(4))))
    reps = [data.draw(st.integers(1, 2)) for _ in groups]
    if sum(reps) > 4:
        reps = [1] * len(groups)
    ctx = []
    for r in reps:
        ctx.append(free[:r])
        free = free[r:]
    cand = Candidate(tuple(Group(g, r, tuple(c)) for g, r, c in zip(groups, reps, ctx)))
    ev = evaluate(p, cand)
    m = make_oracle(spec, "analytic").evaluate(to_plan(p, cand))
    assert m.throughput == pytest.approx(ev.throughput, rel=1e-9)
    assert m.latency_mean == pytest.approx(ev.latency_seconds, rel=1e-9)


@pytest.mark.parametrize("name", ["xeon-lata-dag", "t2-npire-router", "t2-npire-locks"])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_contended_closed_form_is_the_binding_closed_form(name, data):
    """A mapped pipeline candidate is a binding of its threads: on the example topologies, with
    contention and replicas on any contexts, `evaluate` gives `simulate.analytic`'s throughput and
    latency of the same plan.  The one difference is the stated rounding of a group's mean demand
    up to a thousandth: each load is over by less than k/1000 for k threads, and a slowdown is a
    multiple of 1/Q rounded up, so the pipeline figures are never better and off by at most
    ``threads/1000/min capacity + 1/Q`` relative."""
    from tasksolve.simulate.analytic import evaluate as analytic

    spec = load_spec(name)
    p = PipelineProblem.from_spec(spec, latency_max=None)
    # groups: consecutive runs of a random topological order (any such cut is acyclic)
    order, ready = [], [t for t in range(p.n) if not p.preds[t]]
    while ready:
        t = ready.pop(data.draw(st.integers(0, len(ready) - 1)))
        order.append(t)
        ready += [s for s in p.succs[t] if all(q in order for q in p.preds[s]) and s not in ready]
    cuts = sorted(data.draw(st.sets(st.integers(1, p.n - 1), max_size=7)))
    parts = [tuple(order[a:b]) for a, b in zip([0] + cuts, cuts + [p.n])]
    reps = [data.draw(st.integers(1, 3)) for _ in parts]
    while sum(reps) > p.n_contexts:
        reps[reps.index(max(reps))] -= 1
    free = list(data.draw(st.permutations(p.contexts)))
    ctx = []
    for r in reps:
        ctx.append(free[:r])
        free = free[r:]
    cand = Candidate(tuple(Group(part, r) for part, r in zip(parts, reps))).with_contexts(ctx)
    assert check_candidate(p, cand) == []
    ev = evaluate(p, cand)
    m = analytic(spec, to_plan(p, cand))
    assert ev.contention
    tol = cand.threads / 1000 / min(r.capacity / 1000 for r in p.resources) + 1 / p.slowdown_unit
    assert ev.throughput <= m.throughput * (1 + 1e-12)
    assert ev.throughput >= m.throughput / (1 + tol)
    assert ev.latency_seconds >= m.latency_mean * (1 - 1e-12)
    assert ev.latency_seconds <= m.latency_mean * (1 + tol)


def test_contended_closed_form_is_exact_when_demands_are_round():
    """With every group's mean demand a multiple of 0.001 there is no rounding: equal to 1e-12."""
    from tasksolve.simulate.analytic import evaluate as analytic

    spec = load_spec("t2-npire-router")
    p = PipelineProblem.from_spec(spec, latency_max=None)
    # one task per thread on contexts 0-15 (cores 0 and 1): ifu and l1 saturate
    cand = Candidate(tuple(G([t], 1, [t]) for t in range(16)))
    ev = evaluate(p, cand)
    m = analytic(spec, to_plan(p, cand))
    assert max(ev.slowdown) > 1  # contention is charged
    assert ev.throughput == pytest.approx(m.throughput, rel=1e-12)
    assert ev.latency_seconds == pytest.approx(m.latency_mean, rel=1e-12)


def test_a_lock_bounds_the_period_as_in_the_binding_closed_form():
    """NPIRE's synchronisation (`solver.pipeline.sync`): on t2-npire-locks, with every task
    replicated to about 100 cycles of work and messages a packet, the wholly critical `queue` task is held back by its
    lock (200 cycles a packet whatever its replicas): the period is the lock's busy time, the
    bottleneck is `queue`, and throughput and latency (the classifier signals early) equal
    `simulate.analytic`'s within the stated demand rounding."""
    import math

    from tasksolve.simulate.analytic import evaluate as analytic
    from tasksolve.solver.pipeline.evaluation import slowdowns
    from tasksolve.solver.pipeline.sync import lock_period

    spec = load_spec("t2-npire-locks")
    p = PipelineProblem.from_spec(spec, latency_max=None)
    queue = p.tasks.index("queue")
    reps = [4 if t == queue else math.ceil(p.work[t] / p.scale / 100 + 1) for t in range(p.n)]
    slots = iter(range(64))
    ctx = [[next(slots) for _ in range(r)] for r in reps]
    cand = Candidate(tuple(Group((t,), r) for t, r in enumerate(reps))).with_contexts(ctx)
    assert check_candidate(p, cand) == []
    ev = evaluate(p, cand)
    busy, holder = lock_period(p.sync, cand.groups, slowdowns(p, cand))
    assert holder == queue and ev.bottleneck == queue
    assert ev.period == busy > max(t / g.replicas for t, g in zip(ev.times, cand.groups))
    m = analytic(spec, to_plan(p, cand))
    assert ev.throughput == pytest.approx(m.throughput, rel=1e-2)
    assert ev.throughput <= m.throughput * (1 + 1e-12)
    assert ev.latency_seconds == pytest.approx(m.latency_mean, rel=1e-2)
