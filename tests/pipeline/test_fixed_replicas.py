"""A pipeline spec's fixed replicas: ``replicas: N`` on a task fixes its stage at exactly N
replicas (`solver.pipeline.candidates`, "Fixed replicas"), kept by every method and refused
where no plan can keep it."""

from __future__ import annotations

import os
from fractions import Fraction

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.solver.cli import main
from tasksolve.solver.pipeline import cpsat
from tasksolve.solver.pipeline.brute import brute_force
from tasksolve.solver.pipeline.candidates import (
    Candidate,
    Group,
    NoPlan,
    check_candidate,
    fixed_violations,
    respect_fixed,
)
from tasksolve.solver.pipeline.chain_dp import chain_dp
from tasksolve.solver.pipeline.compare import METHOD_NAMES, compare, run_method
from tasksolve.solver.pipeline.evaluation import evaluate
from tasksolve.solver.pipeline.job import solve_pipeline
from tasksolve.solver.pipeline.local_search import climb
from tasksolve.solver.pipeline.plans import pipeline_problems, to_plan
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem
from tasksolve.solver.pipeline.sampling import random_candidate
from tasksolve.solver.pipeline.sweep import cores_sweep
from tasksolve.specs import load_plan, load_spec_text
from tasksolve.specs.errors import SpecError
from tests.pipeline.helpers import chains, dags, spec_text

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCALE = max(1, int(os.environ.get("TASKSOLVE_PIPELINE_EXAMPLES", "0")) // 25)
FLAT = [{"name": "cpu", "count": 6}]


def fixed_text(tasks, edges, replicas: dict[str, int], dispatch: dict[str, str] | None = None, **kwargs) -> str:
    """`tests.pipeline.helpers.spec_text` with `replicas` (and `dispatch`) on some tasks."""
    data = yaml.safe_load(spec_text(tasks, edges, **kwargs))
    for name, count in replicas.items():
        data["applications"]["g"]["tasks"][name]["replicas"] = count
    for name, how in (dispatch or {}).items():
        data["applications"]["g"]["tasks"][name]["dispatch"] = how
    return yaml.safe_dump(data, sort_keys=False)


def fixed_problem(tasks, edges, replicas, **kwargs) -> PipelineProblem:
    spec = load_spec_text(fixed_text(tasks, edges, replicas, **kwargs), feasibility=False)
    return PipelineProblem.from_spec(spec, latency_max=None)


def stage_of(problem: PipelineProblem, cand: Candidate, task: str) -> Group:
    return next(g for g in cand.groups if problem.tasks.index(task) in g.tasks)


@st.composite
def fixed_counts(draw, names, contexts: int):
    """Some tasks fixed at 2 or 3 replicas, the distinct counts within `contexts`."""
    counts = {t: draw(st.sampled_from([0, 0, 1, 2, 3])) for t in names}
    if sum({c for c in counts.values() if c > 1}) > contexts:
        counts = {t: min(c, 2) for t, c in counts.items()}
    return {t: c for t, c in counts.items() if c}


@settings(max_examples=15 * SCALE, **SETTINGS)
@given(dag=dags(max_tasks=5), data=st.data())
def test_cpsat_equals_brute_force_restricted_to_the_fixed_counts(dag, data):
    """On small random DAGs with some stages fixed at 2 or 3 replicas, CP-SAT's optimum (period,
    then latency, under the model's charge) is brute force's over the plans that keep the counts,
    and both plans keep them; no plan: CP-SAT finds none either."""
    tasks, edges = dag
    replicas = data.draw(fixed_counts(list(tasks), 4))
    outer = data.draw(st.integers(0, 40))
    communication = {"pair": data.draw(st.integers(0, outer)), "machine": outer}
    p = fixed_problem(tasks, edges, replicas, communication=communication)
    if data.draw(st.booleans()):
        p = p.with_bound(p.critical_path + data.draw(st.integers(0, p.sequential + 2 * outer)))
    best, cand, _ = brute_force(p, comm="lca")
    try:
        r = cpsat.solve(p, time_limit=30, workers=1, seed=0, use_lata_hint=False)
    except NoPlan:
        assert best is None
        return
    if best is None or not best.feasible:
        assert r.status == "INFEASIBLE"
        return
    assert fixed_violations(p, cand) == []
    assert r.status == "OPTIMAL", r.notes
    assert check_candidate(p, r.candidate) == []
    model = evaluate(p, r.candidate, comm="lca")
    assert (model.period, model.latency) == (best.period, best.latency)
    for name, count in replicas.items():
        if count > 1:
            assert stage_of(p, r.candidate, name).replicas == count


@settings(max_examples=10 * SCALE, **SETTINGS)
@given(dag=dags(max_tasks=6, max_work=300), data=st.data())
def test_every_method_keeps_the_fixed_counts_or_says_it_has_no_plan(dag, data):
    """Every method's plan keeps the counts; a method without one is named with its reason; the
    random sampling design draws only plans that keep them, and local search climbs among them."""
    tasks, edges = dag
    replicas = data.draw(fixed_counts(list(tasks), 6))
    p = fixed_problem(tasks, edges, replicas, levels=FLAT, communication={"machine": data.draw(st.integers(0, 50))})
    no_plan: dict[str, str] = {}
    results = compare(p, list(METHOD_NAMES), time_limit=20, workers=1, seed=0, no_plan=no_plan)
    assert set(results) | set(no_plan) == set(METHOD_NAMES)
    for name, result in results.items():
        assert check_candidate(p, result.candidate) == [], name
    if results:
        import numpy as np

        start = random_candidate(p, np.random.default_rng(0))
        assert check_candidate(p, start) == []
        top, _, _ = climb(p, start)
        assert check_candidate(p, top) == []


def test_a_stage_fixed_at_three_replicas_runs_three_threads(tmp_path):
    """`tasksolve pipeline`'s plan.yaml: the stage of `b` runs exactly three threads although the
    free choice (brute force without the count) would give it another number."""
    tasks, edges = {"a": 30, "b": 90, "c": 20}, [("a", "b", 64), ("b", "c", 64)]
    free = fixed_problem(tasks, edges, {}, levels=FLAT, communication={"machine": 5})
    _, unfixed, _ = brute_force(free)
    assert stage_of(free, unfixed, "b").replicas != 3
    path = tmp_path / "spec.yaml"
    path.write_text(fixed_text(tasks, edges, {"b": 3}, levels=FLAT, communication={"machine": 5}))
    code = main(
        ["pipeline", str(path), "--time-limit", "20", "--workers", "1", "--oracle", "none", "--out", str(tmp_path)]
    )
    assert code == 0
    plan = load_plan(tmp_path / "plan.yaml")
    threads = [name for name, thread in plan.threads.items() if "b" in thread.tasks]
    assert len(threads) == 3 and len({plan.threads[name].stage for name in threads}) == 1
    p = fixed_problem(tasks, edges, {"b": 3}, levels=FLAT, communication={"machine": 5})
    job = solve_pipeline(load_spec_text(path.read_text()), methods="all", oracle="none", time_limit=20, workers=1)
    for name, result in job.results.items():
        assert stage_of(p, result.candidate, "b").replicas == 3, name
    assert job.result.evaluation.period == brute_force(p)[0].period  # CP-SAT's optimum under the count
    spec = load_spec_text(path.read_text())
    assert pipeline_problems(spec, plan) == []
    two = Candidate((Group((0,), 1, (0,)), Group((1,), 2, (1, 2)), Group((2,), 1, (3,))))
    assert any("2 replicas where its tasks' `replicas` fix 3" in x for x in pipeline_problems(spec, to_plan(p, two)))


def test_different_counts_in_a_chain_take_separate_stages():
    """a(x2) -> b(x3) -> c(x2): `a` and `c` may not share a stage across `b`, so every plan has
    three stages of 2, 3 and 2 replicas; the chain DP, brute force and CP-SAT agree."""
    tasks, edges = {"a": 40, "b": 90, "c": 40}, [("a", "b", 64), ("b", "c", 64)]
    p = fixed_problem(
        tasks, edges, {"a": 2, "b": 3, "c": 2}, levels=[{"name": "cpu", "count": 8}], communication={"machine": 6}
    )
    best, cand, _ = brute_force(p)
    assert sorted(g.replicas for g in cand.groups) == [2, 2, 3]
    assert chain_dp(p).period == best.period == 32  # b: 90 cycles + a 6-cycle message, over 3
    for name in METHOD_NAMES:
        result = run_method(p, name, time_limit=20, workers=1)
        assert [(len(g.tasks), g.replicas) for g in result.candidate.groups] == [(1, 2), (1, 3), (1, 2)], name
        assert check_candidate(p, result.candidate) == [], name
    # a plan mixing the counts is repaired by cutting where they differ
    mixed = Candidate((Group((0, 1, 2), 7),))
    assert fixed_violations(p, mixed) and check_candidate(p, respect_fixed(p, mixed)) == []


def test_counts_no_plan_can_keep_are_refused_with_exit_code_2(tmp_path, capsys):
    """a(x2) -> b(x3) -> c(x2) needs 7 threads: on 6 contexts every method says it has no plan
    and the job is refused (exit 2); more fixed threads than contexts are refused when the spec
    loads, the field located; so is `dispatch: hash`."""
    tasks, edges = {"a": 40, "b": 90, "c": 40}, [("a", "b", 64), ("b", "c", 64)]
    text = fixed_text(tasks, edges, {"a": 2, "b": 3, "c": 2}, levels=FLAT)
    with pytest.raises(PipelineError, match=r"no plan keeps the replica counts the spec fixes \(`a` x2, `b` x3"):
        solve_pipeline(load_spec_text(text), methods="all", oracle="none", time_limit=10, workers=1)
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    assert main(["pipeline", str(path), "--time-limit", "10", "--workers", "1", "--oracle", "none"]) == 2
    assert "no plan keeps the replica counts" in capsys.readouterr().err
    too_many = fixed_text(tasks, edges, {"a": 4, "b": 3}, levels=FLAT)
    with pytest.raises(
        SpecError, match=r"applications\.g\.tasks\.a\.replicas: .*at least 4 \+ 3 = 7 threads.* 6 usable"
    ):
        load_spec_text(too_many)
    twice = yaml.safe_load(fixed_text(tasks, edges, {"b": 4}, levels=FLAT))
    twice["workload"][0]["instances"] = 2
    with pytest.raises(SpecError, match=r"tasks\.b\.replicas: .*2 instances x \(4\) = 8 threads"):
        load_spec_text(yaml.safe_dump(twice))
    with pytest.raises(SpecError, match=r"tasks\.b\.dispatch: .*take packets in turn"):
        load_spec_text(fixed_text(tasks, edges, {"b": 2}, {"b": "hash"}, levels=FLAT))


def test_the_cap_on_replicas_bounds_the_free_stages_only():
    """`max_replicas` (CP-SAT) and brute force's cap bound the free stages; a fixed count above the
    cap is kept, and the two agree.  `r` feeds `a` (60 cycles, fixed at 3) and `b` (40 cycles,
    free); the latency bound keeps `a` and `b` apart, so the capped `b` runs alone on one replica
    and sets the period, while without the cap it takes more."""
    tasks, edges = {"r": 1, "a": 60, "b": 40}, [("r", "a", 0), ("r", "b", 0)]
    p = fixed_problem(tasks, edges, {"a": 3}, levels=FLAT, communication={"machine": 0}).with_bound(75)
    best, cand, _ = brute_force(p, max_replicas=1)
    r = cpsat.solve(p, time_limit=20, workers=1, max_replicas=1, use_lata_hint=False)
    for plan in (cand, r.candidate):
        assert (stage_of(p, plan, "a").replicas, stage_of(p, plan, "b").replicas) == (3, 1)
    assert r.evaluation.period == best.period == 40
    uncapped = cpsat.solve(p, time_limit=20, workers=1, use_lata_hint=False)
    assert uncapped.evaluation.period < 40 and stage_of(p, uncapped.candidate, "a").replicas == 3


@settings(max_examples=10 * SCALE, **SETTINGS)
@given(chain=chains(max_tasks=5), data=st.data())
def test_chain_dp_equals_brute_force_under_fixed_counts(chain, data):
    tasks, edges = chain
    replicas = data.draw(fixed_counts(list(tasks), 5))
    p = fixed_problem(tasks, edges, replicas, levels=[{"name": "cpu", "count": 5}], communication={"machine": 7})
    best, _, _ = brute_force(p)
    dp = chain_dp(p)
    if best is None:
        assert dp.period is None
    else:
        assert (best.period, best.latency) == (dp.period, dp.latency)


def test_a_core_sweep_marks_the_methods_with_no_plan():
    """a(x2) -> b(x3) -> c(x2) on 6 and 8 of 8 contexts: at 6 every method has no plan (NO_PLAN
    points, nothing to plot), at 8 each has one."""
    tasks, edges = {"a": 40, "b": 90, "c": 40}, [("a", "b", 64), ("b", "c", 64)]
    p = fixed_problem(tasks, edges, {"a": 2, "b": 3, "c": 2}, levels=[{"name": "cpu", "count": 8}])
    points = cores_sweep(p, [6, 8], ["lata", "parallel", "cpsat"], time_limit=10, workers=1)
    assert {(pt.x, pt.method, pt.status) for pt in points if pt.x == 6} == {
        (6, m, "NO_PLAN") for m in ("lata", "parallel", "cpsat")
    }
    assert all(pt.throughput is None for pt in points if pt.x == 6)
    assert all(pt.throughput is not None and pt.threads == 7 for pt in points if pt.x == 8)


def test_a_fixed_count_above_sixteen_keeps_the_period_exact():
    """`a` fixed at 17 replicas (above `MAX_EXACT_REPLICAS`, and the cap of 2 on the free `b`):
    17 joins the period multiplier, so CP-SAT's period 1000/17 is exact and proven (its bound
    equals it), as brute force finds."""
    tasks, edges = {"a": 1000, "b": 100}, [("a", "b", 0)]
    p = fixed_problem(tasks, edges, {"a": 17}, levels=[{"name": "cpu", "count": 20}], communication={"machine": 0})
    best, _, _ = brute_force(p, max_replicas=2)
    r = cpsat.solve(p, time_limit=20, workers=1, max_replicas=2, use_lata_hint=False)
    assert r.status == "OPTIMAL" and stage_of(p, r.candidate, "a").replicas == 17
    assert r.evaluation.period == best.period == r.bound == Fraction(1000, 17)
    assert not any("resolved" in note for note in r.notes)
