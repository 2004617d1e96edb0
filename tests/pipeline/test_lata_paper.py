"""LATA's steps against the rules of its paper (Kuang & Bhuyan, DAC'10), each on a small graph
whose figures are computed by hand, the spec fields they read (task frequency and code size,
topology i-cache), the replicated comparison systems, and the shape of Figure 14 on the example."""

from fractions import Fraction

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.solver.pipeline import baselines
from tasksolve.solver.pipeline.candidates import check_candidate
from tasksolve.solver.pipeline.lata import by_levels, eliminate, figures, hide, lata, shorten, switch, with_estimate
from tasksolve.solver.pipeline.lata_premap import bipartition
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem
from tasksolve.specs import dump_spec, load_spec, load_spec_text
from tasksolve.specs.errors import SpecsError
from tests.pipeline.helpers import dags, make_spec, spec_text

FLAT = [{"name": "cpu", "count": 4}]
LINE_10 = {"model": "cache", "line": "64B", "latency": {"machine": 10}}  # 10 cycles per line, anywhere


def named_groups(p, cand):
    return sorted((tuple(p.tasks[t] for t in g.tasks), g.replicas) for g in cand.groups)


def with_fields(text: str, task_fields: dict, topology_fields: dict | None = None):
    data = yaml.safe_load(text)
    for task, fields in task_fields.items():
        data["applications"]["g"]["tasks"][task].update(fields)
    data["topology"].update(topology_fields or {})
    return load_spec_text(yaml.safe_dump(data, sort_keys=False), feasibility=False)


# ------------------------------------------------------------------------------ Eq. 1-2
def test_eq2_estimate_by_hand():
    """§2.2: Comm_avg = T_L1*h1 + T_L2*(1-h1)*h2 + T_mem*(1-h1)*(1-h2) per line, times the lines
    (Eq. 1): 3*0.5 + 14*0.5*0.9 + 217*0.5*0.1 = 18.65 cycles a line; 130 B are 3 lines."""
    comm = {"model": "cache", "line": "64B", "latency": {"core": 3, "l2": 14, "machine": 217}}
    comm["hit_rate"] = {"core": 0.5, "l2": 0.9}
    levels = [{"name": "l2", "count": 2}, {"name": "core", "count": 2}]
    spec = make_spec({"a": 10, "b": 10}, [("a", "b", 130)], levels=levels, communication=comm)
    assert spec.topology.average_message_cycles(130) == pytest.approx(3 * 18.65)
    p = PipelineProblem.from_spec(spec, latency_max=None)
    assert p.edges[0].estimate == round(3 * 18.65 * p.scale)
    # the estimate does not depend on where the ends run: every crossing edge costs it
    assert set(with_estimate(p, "eq2").edges[0].cost) == {p.edges[0].estimate}


def test_direct_costs_average_over_context_pairs():
    """Direct form (the paper is silent; our choice): the mean over ordered pairs of distinct
    contexts.  pair: 2 > core: 2: of the 12 ordered pairs, 4 share a pair (5 cycles) and 8 only
    the machine (50): (4*5 + 8*50) / 12 = 35."""
    spec = make_spec({"a": 1, "b": 1}, [("a", "b", 64)], communication={"pair": 5, "machine": 50})
    assert spec.topology.average_message_cycles(64) == pytest.approx(35.0)


# ------------------------------------------------------------------------------ spec fields
def test_task_frequency_scales_its_work():
    """§2.4: each task is profiled for its execution time and its frequency; a packet costs a
    task visited half the time half its cycles."""
    spec = with_fields(spec_text({"a": 100, "b": 300}, [("a", "b", 64)]), {"b": {"frequency": 0.5}})
    assert spec.applications["g"].tasks["b"].work == 150
    assert spec.applications["g"].total_cycles == 250
    p = PipelineProblem.from_spec(spec, latency_max=None)
    assert [w / p.scale for w in p.work] == [100, 150]
    assert p.sequential / p.scale == 250


def test_frequency_is_honoured_by_the_oracles():
    """Two threads a | b with b visited a quarter of the time: b's work per packet is 100 cycles,
    so a (300) is the bottleneck: 1 GHz / 300 packets per second, latency 300 + 9 + 100 cycles --
    in the closed form, the analytic oracle and the simulation alike."""
    from tasksolve.simulate.oracle import make_oracle
    from tasksolve.solver.pipeline.candidates import Candidate, Group
    from tasksolve.solver.pipeline.evaluation import evaluate
    from tasksolve.solver.pipeline.plans import to_plan

    text = spec_text({"a": 300, "b": 400}, [("a", "b", 64)], levels=FLAT, communication={"machine": 9})
    spec = with_fields(text, {"b": {"frequency": 0.25}})
    p = PipelineProblem.from_spec(spec, latency_max=None)
    cand = Candidate((Group((0,), 1, (0,)), Group((1,), 1, (1,))))
    ev = evaluate(p, cand)
    assert ev.throughput == pytest.approx(1e9 / 300) and ev.latency_cycles == 300 + 9 + 100
    plan = to_plan(p, cand)
    analytic = make_oracle(spec, "analytic").evaluate(plan)
    assert analytic.throughput == pytest.approx(1e9 / 300, rel=1e-9)
    assert analytic.latency_mean == pytest.approx(409e-9, rel=1e-9)
    des = make_oracle(spec, "des").evaluate(plan)
    assert des.throughput == pytest.approx(1e9 / 300, rel=0.02)


@pytest.mark.parametrize(
    "fields",
    [{"frequency": 0}, {"frequency": -1}, {"frequency": True}, {"code_size": -5}, {"code_size": 1.5}],
)
def test_bad_task_fields_are_named(fields):
    with pytest.raises(SpecsError, match=next(iter(fields))):
        with_fields(spec_text({"a": 100, "b": 300}, [("a", "b", 64)]), {"b": fields})


def test_bad_icache_is_named():
    with pytest.raises(SpecsError, match="icache"):
        with_fields(spec_text({"a": 100}, []), {}, {"icache": 0})


# ------------------------------------------------------------------------------ §3.1, §3.2.1
def test_levels_and_latency_hiding_by_hand():
    """§3.1: one stage per level, one node per task; L = the stage maxima + the CCPs.  §3.2.1: the
    critical node x (50, stage 1) is hidden forward beside y (80): stage 1 is now c's 10."""
    spec = make_spec(
        {"a": 10, "x": 50, "c": 10, "y": 80, "e": 10},
        [("a", "x", 64), ("a", "c", 64), ("c", "y", 64), ("y", "e", 64), ("x", "e", 64)],
        levels=[{"name": "cpu", "count": 8}],
        communication={"machine": 20},
    )
    p = with_estimate(PipelineProblem.from_spec(spec, latency_max=None), "eq2")
    cand = by_levels(p)
    assert {p.tasks[g.tasks[0]]: s for g, s in zip(cand.groups, cand.stages)} == {
        "a": 0,
        "x": 1,
        "c": 1,
        "y": 2,
        "e": 3,
    }
    assert figures(p, cand).schedule_length == (10 + 50 + 80 + 10) + 3 * 20
    trace: list[dict] = []
    hidden = hide(p, cand, trace)
    assert [s["step"] for s in trace] == ["FoH"]
    stage = {p.tasks[g.tasks[0]]: s for g, s in zip(hidden.groups, hidden.stages)}
    assert stage["x"] == stage["y"] == 2
    f = figures(p, hidden)
    assert f.schedule_length == (10 + 10 + 80 + 10) + 3 * 20
    assert f.latency == 10 + 30 + 100 + 50  # a, c, y, e with their incoming messages
    assert f.tmax == figures(p, cand).tmax  # hiding moves no work


def test_q_prefers_the_reduction_that_costs_no_throughput():
    """§3.2.1: for the biggest CCP (a -> b, 20 cycles), elimination (a, b, c on one processor)
    shortens L by 15 but raises T_max from 50 to 55: Q = 15 / (1/50 - 1/55) = 8250; BaS (b onto
    a's processor) shortens L by 5 with T_max unchanged: Q infinite, so BaS is taken."""
    spec = make_spec(
        {"a": 10, "b": 5, "c": 40},
        [("a", "b", 128), ("a", "c", 64)],
        levels=FLAT,
        communication=LINE_10,
    )
    p = with_estimate(PipelineProblem.from_spec(spec, latency_max=66), "eq2")
    cand = by_levels(p)
    base = figures(p, cand)
    assert (base.length, base.tmax) == (10 + 40 + 20, 50)
    elim = figures(p, eliminate(p, cand, 0))
    assert (elim.length, elim.tmax) == (55, 55)
    assert Fraction(base.length - elim.length) / (Fraction(1, 50) - Fraction(1, 55)) == 8250
    bas = figures(p, switch(p, cand, 0, 1, backward=True))
    assert (bas.length, bas.tmax) == (65, 50)
    trace: list[dict] = []
    out = shorten(p, cand, trace)
    assert [s["step"] for s in trace] == ["BaS"] and "Q = inf" in trace[0]["detail"]
    assert named_groups(p, out) == [(("a", "b"), 1), (("c",), 1)]


def test_elimination_needs_a_single_predecessor_per_node():
    """Fig. 4: a stage is attached to the one before only if each of its nodes has one
    predecessor there; a join with two cannot be."""
    spec = make_spec(
        {"a": 10, "b": 10, "c": 10, "d": 10},
        [("a", "b", 64), ("a", "c", 64), ("b", "d", 64), ("c", "d", 64)],
        levels=FLAT,
        communication=LINE_10,
    )
    p = with_estimate(PipelineProblem.from_spec(spec, latency_max=None), "eq2")
    cand = by_levels(p)
    assert eliminate(p, cand, 1) is None  # d has b and c before it
    merged = eliminate(p, cand, 0)  # b and c each hang from a: one processor a, b, c
    assert named_groups(p, merged) == [(("a", "b", "c"), 1), (("d",), 1)]


# ------------------------------------------------------------------------------ i-cache
def icache_problem(icache=1000, codes=(600, 500, 300), bound=None):
    text = spec_text(
        {"a": 100, "b": 100, "c": 100}, [("a", "b", 64), ("b", "c", 64)], levels=FLAT, communication=LINE_10
    )
    spec = with_fields(text, {t: {"code_size": c} for t, c in zip("abc", codes)}, {"icache": icache})
    return PipelineProblem.from_spec(spec, latency_max=bound)


def test_the_icache_refuses_a_grouping():
    """§4: a processor holds at most `icache` instructions: a (600) and b (500) cannot share one;
    b and c (800) can."""
    p = with_estimate(icache_problem(), "eq2")
    cand = by_levels(p)
    assert switch(p, cand, 0, 1, backward=True) is None
    assert eliminate(p, cand, 0) is None
    assert named_groups(p, eliminate(p, cand, 1)) == [(("a",), 1), (("b", "c"), 1)]


def test_lata_and_the_np_systems_keep_the_icache():
    p = icache_problem(bound=250)  # below the sequential 300: something must be merged
    for result in [lata(p), baselines.greedy(p), baselines.random_pipeline(p, 3), baselines.bipar(p)]:
        assert check_candidate(p, result.candidate) == []
        for g in result.candidate.groups:
            assert sum(p.code[t] for t in g.tasks) <= 1000, result.method


def test_a_task_larger_than_the_icache_is_refused_by_name():
    with pytest.raises(PipelineError, match="task `a` has 1200 instructions"):
        lata(icache_problem(codes=(1200, 100, 100)))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag=dags(max_tasks=7, max_work=300), data=st.data())
def test_no_thread_outgrows_the_icache(dag, data):
    """Whatever the graph and the bound, LATA and the NP systems either keep every thread's code
    within the i-cache or refuse with a PipelineError; LATA's claim to meet L0 is true."""
    tasks, edges = dag
    codes = {t: data.draw(st.integers(0, 800)) for t in tasks}
    icache = data.draw(st.integers(max(max(codes.values()), 1), 2000))
    text = spec_text(tasks, edges, levels=FLAT, communication=LINE_10)
    spec = with_fields(text, {t: {"code_size": c} for t, c in codes.items()}, {"icache": icache})
    p = PipelineProblem.from_spec(spec, latency_max=None)
    share = data.draw(st.one_of(st.none(), st.floats(0.6, 1.2)))
    if share is not None:
        p = p.with_bound(max(p.critical_path, int(p.sequential * share)))
    methods = [lata, baselines.greedy, lambda q: baselines.random_pipeline(q, 1), baselines.bipar]
    for method in methods:
        try:
            r = method(p)
        except PipelineError as exc:
            assert "i-cache" in str(exc)
            continue
        assert check_candidate(p, r.candidate) == []
        assert all(sum(p.code[t] for t in g.tasks) <= icache for g in r.candidate.groups), r.method
        if r.claims_feasible and p.latency_max is not None:
            assert r.evaluation.latency <= p.latency_max


# ------------------------------------------------------------------------------ §3.3.1
def test_bipartition_shares_processors_in_proportion_to_work():
    """§3.3.1 on a 100-100-100-300 chain with equal CCPs and 4 processors: the balanced cut
    a b c | d gets 2 + 2; a | b c (a tie broken by order) gets 1 + 1; d alone is one stage with 2
    processors: two replicas taking packets in turn."""
    spec = make_spec(
        {"a": 100, "b": 100, "c": 100, "d": 300},
        [("a", "b", 64), ("b", "c", 64), ("c", "d", 64)],
        levels=FLAT,
        communication={"machine": 10},
    )
    p = with_estimate(PipelineProblem.from_spec(spec, latency_max=None), "eq2")
    out = bipartition(p, by_levels(p), 4)
    assert named_groups(p, out) == [(("a",), 1), (("b", "c"), 1), (("d",), 2)]
    assert named_groups(p, bipartition(p, by_levels(p), 2)) == [(("a", "b", "c"), 1), (("d",), 1)]


# ------------------------------------------------------------------------------ replicated systems
def xeon_with_icache(icache=4096):
    data = yaml.safe_load(dump_spec(load_spec("xeon-lata-dag")))
    data["topology"]["icache"] = icache
    return load_spec_text(yaml.safe_dump(data, sort_keys=False), file="xeon+icache")


def test_random_and_bipar_are_replicated_parallel_pipelines():
    """§1, §4: Random and Bipar are parallel pipelines ("each stage contains multiple parallel
    cores") with a per-processor memory limit: with a 4k i-cache the 6500-instruction graph needs
    at least two stages, and every context is used."""
    p = PipelineProblem.from_spec(xeon_with_icache(), latency_max=None)
    assert sum(p.code) == 6500
    for r in [baselines.random_pipeline(p, s) for s in range(3)] + [baselines.bipar(p)]:
        assert len(r.candidate.groups) >= 2 and r.evaluation.threads == p.n_contexts
        assert all(sum(p.code[t] for t in g.tasks) <= 4096 for g in r.candidate.groups)
    random_ = baselines.random_pipeline(p, 0)
    widths = [g.replicas for g in random_.candidate.groups]
    assert min(widths) >= p.n_contexts // len(widths)  # k deep, at least C // k wide


# ------------------------------------------------------------------------------ Figure 14
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(75, 100), st.integers(75, 100))
def test_throughput_does_not_fall_as_the_bound_loosens(x, y):
    """Figure 14: the looser L0, the higher (never lower) LATA's throughput, on the example."""
    spec = load_spec("xeon-lata-dag")
    lo, hi = sorted((x, y))
    a = lata(PipelineProblem.from_spec(spec, latency_max=f"{lo}%"))
    b = lata(PipelineProblem.from_spec(spec, latency_max=f"{hi}%"))
    assert a.evaluation.feasible and b.evaluation.feasible
    assert b.evaluation.period <= a.evaluation.period


def test_figure_14_ends_and_the_paper_order_at_75_percent():
    """§5.1: at L0 = 75% LATA's throughput lies between List's and Parallel's (which misses the
    bound); §5.3: with no constraint (100%) LATA matches the throughput of Parallel."""
    spec = load_spec("xeon-lata-dag")
    p75 = PipelineProblem.from_spec(spec, latency_max="75%")
    ours, par, lst = lata(p75).evaluation, baselines.parallel(p75).evaluation, baselines.list_hlfet(p75).evaluation
    assert ours.feasible and not par.feasible
    assert lst.throughput <= ours.throughput <= par.throughput
    p100 = PipelineProblem.from_spec(spec, latency_max="100%")
    assert lata(p100).evaluation.period == baselines.parallel(p100).evaluation.period


def test_one_node_false_leaves_parallels_plan_out():
    """`lata(..., one_node=False)`: the one-node plan (every CCP eliminated, replicated on every
    processor: Parallel's) is not a candidate, so with no constraint (100%) LATA returns a plan of
    its own steps -- no node holds every task -- and by default it returns Parallel's plan."""
    p100 = PipelineProblem.from_spec(load_spec("xeon-lata-dag"), latency_max="100%")
    default, own = lata(p100), lata(p100, one_node=False)
    assert [len(g.tasks) for g in default.candidate.groups] == [p100.n]
    assert own.evaluation.feasible and all(len(g.tasks) < p100.n for g in own.candidate.groups)
    assert own.evaluation.period >= default.evaluation.period
