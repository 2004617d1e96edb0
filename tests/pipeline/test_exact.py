"""CP-SAT against the truth: the chain dynamic programme and brute force."""

import os
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.solver.pipeline import cpsat
from tasksolve.solver.pipeline.brute import brute_force, set_partitions
from tasksolve.solver.pipeline.candidates import check_candidate
from tasksolve.solver.pipeline.chain_dp import chain_dp, is_chain
from tasksolve.solver.pipeline.evaluation import evaluate
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem
from tests.pipeline.helpers import chains, dags, make_spec

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
# TASKSOLVE_PIPELINE_EXAMPLES=300 multiplies the examples of the property tests for a deeper run.
SCALE = max(1, int(os.environ.get("TASKSOLVE_PIPELINE_EXAMPLES", "0")) // 25)


def test_set_partitions_are_the_bell_numbers():
    assert [sum(1 for _ in set_partitions(n)) for n in range(1, 7)] == [1, 2, 5, 15, 52, 203]


def test_chain_dp_on_a_hand_example():
    # a(30) -> b(50) -> c(20), messages cost 10, 3 contexts
    spec = make_spec(
        {"a": 30, "b": 50, "c": 20},
        [("a", "b", 64), ("b", "c", 64)],
        levels=[{"name": "cpu", "count": 3}],
        communication={"machine": 10},
    )
    p = PipelineProblem.from_spec(spec, latency_max=None)
    assert chain_dp(p).period == Fraction(100, 3)  # everything, three replicas
    assert chain_dp(p, replication=False).period == 60  # [a] [b] [c]: b + message
    bounded = p.with_bound(110)  # at most one cut
    assert chain_dp(bounded, replication=False).period == 80  # [a] [b c] = 30 | 80
    assert chain_dp(bounded, replication=False).latency == 110
    assert chain_dp(p.with_bound(99)).period is None  # below the sequential time


def test_chain_dp_refuses_placement_dependent_costs_and_non_chains():
    spec = make_spec({"a": 3, "b": 4}, [("a", "b", 64)], communication={"pair": 1, "machine": 9})
    with pytest.raises(PipelineError, match="placement"):
        chain_dp(PipelineProblem.from_spec(spec, latency_max=None))
    fork = make_spec(
        {"a": 3, "b": 4, "c": 5},
        [("a", "b", 64), ("a", "c", 64)],
        levels=[{"name": "cpu", "count": 2}],
        communication={"machine": 1},
    )
    assert not is_chain(PipelineProblem.from_spec(fork, latency_max=None))
    busy = make_spec(
        {"a": 3, "b": 4},
        [("a", "b", 64)],
        communication={"pair": 9, "machine": 9},
        resources=[{"name": "port", "level": "pair", "capacity": 1.0}],
        demand={"a": {"port": 0.5}},
    )
    with pytest.raises(PipelineError, match="contention on port"):
        chain_dp(PipelineProblem.from_spec(busy, latency_max=None))


def _chain_problem(chain, contexts, cost, slack):
    tasks, edges = chain
    spec = make_spec(tasks, edges, levels=[{"name": "cpu", "count": contexts}], communication={"machine": cost})
    p = PipelineProblem.from_spec(spec, latency_max=None)
    return p.with_bound(p.sequential + slack) if slack is not None else p


@settings(max_examples=25 * SCALE, **SETTINGS)
@given(
    chain=chains(max_tasks=6),
    contexts=st.integers(1, 5),
    cost=st.integers(0, 30),
    slack=st.one_of(st.none(), st.integers(-5, 60)),
    replication=st.booleans(),
)
def test_cpsat_equals_the_chain_dp(chain, contexts, cost, slack, replication):
    """Interval mapping of a chain for the minimum period under a latency bound: CP-SAT's optimum
    (period, then latency) equals the DP's, with and without replication."""
    p = _chain_problem(chain, contexts, cost, slack)
    dp = chain_dp(p, replication=replication)
    r = cpsat.solve(p, time_limit=20, workers=1, max_replicas=None if replication else 1, use_lata_hint=False)
    if dp.period is None:
        assert r.status == "INFEASIBLE"
        return
    assert r.status == "OPTIMAL"
    assert check_candidate(p, r.candidate) == []
    assert r.evaluation.period == dp.period
    assert r.evaluation.latency == dp.latency
    assert r.bound == dp.period
    ev_dp = evaluate(p, dp.candidate(p))
    assert (ev_dp.period, ev_dp.latency) == (dp.period, dp.latency)


@settings(max_examples=15 * SCALE, **SETTINGS)
@given(
    chain=chains(max_tasks=5),
    contexts=st.integers(1, 4),
    cost=st.integers(0, 30),
    slack=st.one_of(st.none(), st.integers(0, 60)),
)
def test_chain_dp_equals_brute_force(chain, contexts, cost, slack):
    p = _chain_problem(chain, contexts, cost, slack)
    best, _, _ = brute_force(p)
    dp = chain_dp(p)
    if dp.period is None:
        assert not best.feasible
    else:
        assert (best.period, best.latency) == (dp.period, dp.latency)


PORT = [{"name": "port", "level": "pair", "capacity": 1.0}, {"name": "bus", "level": "machine", "capacity": 1.5}]


@settings(max_examples=30 * SCALE, **SETTINGS)
@given(dag=dags(max_tasks=5), data=st.data())
def test_cpsat_equals_brute_force_on_small_dags(dag, data):
    """Grouping, replication and mapping (costs by shared level, growing outward or not; with or
    without contention on a per-pair port and a machine bus) on 2-4 contexts of a 2x2 machine:
    CP-SAT's optimum (period, then latency) is brute force's under the model's charge (a
    replica pays the level holding both groups), and never better than brute force's under each
    replica's mean cost; the two agree when costs do not depend on placement."""
    tasks, edges = dag
    inner, outer = data.draw(st.integers(0, 30)), data.draw(st.integers(0, 60))
    contexts = data.draw(st.sampled_from([None, ["pair0", "pair1.core0"], ["pair0"]]))
    shares = st.sampled_from([0.0, 0.3, 0.5, 0.9])
    contended = data.draw(st.booleans())
    demand = {t: {"port": data.draw(shares), "bus": data.draw(shares)} for t in tasks} if contended else None
    flat = data.draw(st.booleans())
    communication = {"pair": outer, "machine": outer} if flat else {"pair": inner, "machine": outer}
    spec = make_spec(
        tasks,
        edges,
        communication=communication,
        contexts=contexts,
        resources=PORT if contended else None,
        demand=demand,
    )
    p = PipelineProblem.from_spec(spec, latency_max=None)
    slack = data.draw(st.one_of(st.none(), st.integers(0, 2 * (p.sequential + 2 * outer) - p.critical_path)))
    if slack is not None:
        p = p.with_bound(p.critical_path + slack)
    best, _, _ = brute_force(p, comm="lca")
    r = cpsat.solve(p, time_limit=30, workers=1, seed=0)
    if not best.feasible:
        assert r.status == "INFEASIBLE"
        return
    assert r.status == "OPTIMAL", r.notes
    assert check_candidate(p, r.candidate) == []
    model = evaluate(p, r.candidate, comm="lca")
    assert model.feasible
    assert (model.period, model.latency) == (best.period, best.latency)
    mean, _, _ = brute_force(p)
    assert mean.rank() <= r.evaluation.rank() <= model.rank()
    if flat:
        assert (r.evaluation.period, r.evaluation.latency) == (mean.period, mean.latency)


def test_contention_changes_the_optimum():
    """Two heavy port users: without contention the best plan puts them on one pair (cheap
    messages); with a port per pair of capacity 1 they go to separate pairs, and CP-SAT finds that
    (brute force agrees)."""
    tasks, edges = {"a": 100, "b": 100}, [("a", "b", 64)]
    free = PipelineProblem.from_spec(
        make_spec(tasks, edges, communication={"pair": 5, "machine": 30}), latency_max=None
    )
    demand = {"a": {"port": 0.9}, "b": {"port": 0.9}}
    busy = PipelineProblem.from_spec(
        make_spec(tasks, edges, communication={"pair": 5, "machine": 30}, resources=PORT, demand=demand),
        latency_max=None,
    )
    for p in (free, busy):
        best, cand, _ = brute_force(p, max_replicas=1)
        r = cpsat.solve(p, time_limit=30, workers=1, seed=0, max_replicas=1, use_lata_hint=False)
        assert r.status == "OPTIMAL" and (r.evaluation.period, r.evaluation.latency) == (best.period, best.latency)
    assert evaluate(free, brute_force(free, max_replicas=1)[1]).period == 105  # a | b on one pair
    best, cand, _ = brute_force(busy, max_replicas=1)
    assert best.period == 130  # a | b on two pairs: no slowdown, the far message
    pairs = {c // 2 for g in cand.groups for c in g.contexts}
    assert len(pairs) == 2


def test_min_latency_equals_brute_force():
    for costs in ({"pair": 4, "machine": 30}, {"pair": 0, "machine": 1}):
        spec = make_spec(
            {"a": 10, "b": 30, "c": 25, "d": 5},
            [("a", "b", 64), ("a", "c", 64), ("b", "d", 64), ("c", "d", 64)],
            communication=costs,
        )
        p = PipelineProblem.from_spec(spec, latency_max=None)
        best_latency = min(evaluate(p, c).latency for c in _all_candidates(p))  # replicas never help latency
        found, lower, status = cpsat.min_latency(p, time_limit=20, workers=1)
        assert status == "OPTIMAL" and found == lower == best_latency
        assert p.critical_path <= best_latency <= p.sequential


def _all_candidates(p):
    from tasksolve.solver.pipeline.brute import context_assignments, set_partitions
    from tasksolve.solver.pipeline.candidates import Candidate, Group, group_order

    for parts in set_partitions(p.n):
        if len(parts) > p.n_contexts:
            continue
        base = Candidate(tuple(Group(tuple(x)) for x in parts))
        if group_order(p, base) is None:
            continue
        for ctx in context_assignments((1,) * len(parts), p.contexts):
            yield base.with_contexts(ctx)


def test_remap_moves_contended_threads_apart_to_meet_the_bound():
    """The hint's mapping is repaired on the closed form: two heavy port users on one pair miss a
    300-cycle bound (latency 180 + 189 = 369), on two pairs they meet it (100 + 130)."""
    import time

    from tasksolve.solver.pipeline.candidates import Candidate, Group

    demand = {"a": {"port": 0.9}, "b": {"port": 0.9}}
    spec = make_spec(
        {"a": 100, "b": 100},
        [("a", "b", 64)],
        communication={"pair": 5, "machine": 30},
        resources=PORT,
        demand=demand,
    )
    p = PipelineProblem.from_spec(spec, latency_max=300)
    packed = Candidate((Group((0,), 1, (0,)), Group((1,), 1, (1,))))
    assert evaluate(p, packed).latency == 369 and not evaluate(p, packed).feasible
    repaired = cpsat.remap(p, packed, deadline=time.perf_counter() + 10)
    assert check_candidate(p, repaired) == []
    assert evaluate(p, repaired).feasible and evaluate(p, repaired).latency == 230
