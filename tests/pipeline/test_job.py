"""`solver.pipeline.job`: the pipeline job as library calls (quiet, with an optional progress callback)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tasksolve.solver.pipeline.compare import METHOD_NAMES, Steps
from tasksolve.solver.pipeline.job import parse_methods, solve_pipeline
from tasksolve.solver.pipeline.problem import PipelineError
from tasksolve.solver.pipeline.sweep import plot_targets, sweep_pipeline
from tests.pipeline.helpers import make_spec

TASKS = {"a": 10, "b": 30, "c": 20}
EDGES = [("a", "b", 64), ("b", "c", 64)]


def spec(**kwargs):
    return make_spec(TASKS, EDGES, communication={"pair": 1, "machine": 3}, **kwargs)


def test_solve_is_quiet_and_reports_every_step(capsys):
    calls = []
    job = solve_pipeline(
        spec(),
        methods=["lata", "cpsat"],
        time_limit=5,
        workers=1,
        oracle="analytic",
        progress=lambda text, done, total: calls.append((text, done, total)),
    )
    assert capsys.readouterr() == ("", "")
    assert [c[0] for c in calls[:4]] == [
        "lata",
        "cpsat (CP-SAT, up to 5 s)",
        "measuring the lata plan (analytic)",
        "measuring the cpsat plan (analytic)",
    ]
    # then CP-SAT's next best plans (search.top_k in all), each measured
    extra = [c[0] for c in calls[4:]]
    assert 0 < len(extra) < 5 and all(t.startswith("measuring CP-SAT's plan ") for t in extra)
    assert [c[1] for c in calls] == list(range(len(calls))) and calls[-1][2] == len(calls)
    assert job.chosen == "cpsat" and job.meets_bound
    data = job.to_dict()
    assert list(data) == [
        "spec",
        "app",
        "contexts",
        "instances",
        "blocks",
        "covers_workload",
        "left_out",
        "sequential_cycles",
        "critical_path_cycles",
        "latency_max",
        "latency_max_cycles",
        "method",
        "status",
        "bound",
        "gap",
        "latency",
        "throughput",
        "meets_bound",
        "plan",
        "comparison",
        "trace",
        "notes",
        "written",
    ]
    assert set(job.measured) == {"lata", "cpsat"} and data["notes"] == []


def test_infeasible_bound_adds_an_explaining_step():
    calls = []
    with pytest.raises(PipelineError, match="cannot be met"):
        solve_pipeline(
            spec(latency_max=40),
            methods=["lata"],
            time_limit=5,
            workers=1,
            oracle="none",
            progress=lambda *c: calls.append(c),
        )
    # the critical path is 60 > 40: refused before any method runs
    assert calls == []
    # a -> (b | c) -> d: the critical path (55) needs b and c in parallel, which costs messages
    p = make_spec(
        {"a": 10, "b": 40, "c": 40, "d": 5},
        [("a", "b", 64), ("a", "c", 64), ("b", "d", 64), ("c", "d", 64)],
        communication={"pair": 1, "machine": 3},
        latency_max=55,
    )
    with pytest.raises(PipelineError, match="minimum achievable latency"):
        solve_pipeline(p, methods=["lata"], time_limit=5, workers=1, oracle="none", progress=lambda *c: calls.append(c))
    assert calls[-1][0].startswith("finding the minimum latency") and calls[-1][1:] == (1, 2)


def test_sweep_writes_plots_into_the_directory(tmp_path):
    calls = []
    result = sweep_pipeline(
        spec(),
        methods=["lata", "parallel"],
        fractions=[0.9, 1.0],
        cores=[2, 4],
        workers=1,
        out_dir=tmp_path / "figs",
        progress=lambda *c: calls.append(c),
    )
    assert sorted(result.plots) == [
        str(tmp_path / "figs" / "sweep-cores.png"),
        str(tmp_path / "figs" / "sweep-latency.png"),
    ]
    # a chain: its critical path is the sequential time, so L0 = 90% is skipped (its 2 steps counted as done)
    assert [c[1] for c in calls] == [2, 3, 4, 5, 6, 7] and {c[2] for c in calls} == {8}
    assert calls[0][0] == "L0 = 100%: lata" and calls[-1][0] == "4 cores: parallel"
    assert {k for k, _ in result.points} == {"latency", "cores"}
    with pytest.raises(PipelineError, match="only 4 usable contexts"):
        sweep_pipeline(spec(), methods=["lata"], cores=[2, 8])


def test_plot_targets():
    assert plot_targets(["latency"]) == {}
    assert {k: v.name for k, v in plot_targets(["cores", "latency"], plot_file="f.svg").items()} == {
        "cores": "f-cores.svg",
        "latency": "f-latency.svg",
    }
    assert plot_targets(["latency"], out_dir="d", plot_file="f.pdf")["latency"].name == "f.pdf"
    assert plot_targets(["cores"], out_dir="d")["cores"].as_posix() == "d/sweep-cores.png"


def test_parse_methods():
    assert parse_methods("all") == list(METHOD_NAMES)
    assert parse_methods(" LATA, cpsat,lata") == ["lata", "cpsat"]
    with pytest.raises(PipelineError, match="did you mean `lata`"):
        parse_methods("latta")
    with pytest.raises(PipelineError, match="--method"):
        parse_methods(" , ")


@given(st.lists(st.sampled_from(["start", "skip", "add"]), max_size=30), st.integers(0, 5))
def test_steps_count_up_and_never_exceed_the_total(ops, total):
    seen = []
    steps = Steps(lambda text, done, n: seen.append((done, n)), total)
    for op in ops:
        if op == "start":
            steps.start("x")
        elif op == "skip":
            steps.skip(2)
        else:
            steps.add(3)
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and len(set(dones)) == len(dones)
    assert all(d < n for d, n in seen)


def test_cpsat_keeps_distinct_next_best_plans_within_the_bound():
    from tasksolve.solver.pipeline import cpsat
    from tasksolve.solver.pipeline.brute import brute_force
    from tasksolve.solver.pipeline.candidates import check_candidate
    from tasksolve.solver.pipeline.evaluation import evaluate
    from tasksolve.solver.pipeline.problem import PipelineProblem

    p = PipelineProblem.from_spec(spec(latency_max=80), latency_max="spec")
    r = cpsat.solve(p, time_limit=10, workers=1, top_k=4)
    best, _, _ = brute_force(p, comm="lca")
    keys = {c.key() for c in [r.candidate, *r.alternatives]}
    assert len(r.alternatives) == 3 and len(keys) == 4  # distinct plans
    ranks = [evaluate(p, c).rank() for c in r.alternatives]
    assert ranks == sorted(ranks) and all(rank >= best.rank() for rank in ranks)
    assert all(check_candidate(p, c) == [] and evaluate(p, c).feasible for c in r.alternatives)


class _Fake:
    """A measurer whose throughput is the plan's thread count and latency a given constant."""

    latency = 0.0

    def __init__(self, *args, **kwargs) -> None:
        pass

    def measure(self, plan):
        from tasksolve.solver.pipeline.compare import Measured

        return Measured(len(plan.bindings), self.latency, self.latency, 0.0, "fake", 0.0)


@pytest.mark.parametrize("latency, chooses", [(0.0, True), (1.0, False)])
def test_the_best_measured_plan_within_the_bound_is_chosen(monkeypatch, latency, chooses):
    """CP-SAT's K best plans are measured; the best *measured* one whose measured latency meets the
    bound replaces the model's best (here: the one with most threads), else the model's stays."""
    import tasksolve.solver.pipeline.job as job_module

    monkeypatch.setattr(job_module, "Measurer", _Fake)
    monkeypatch.setattr(_Fake, "latency", latency)
    job = solve_pipeline(spec(latency_max=80), methods=["cpsat"], time_limit=5, workers=1, oracle="analytic")
    r = job.results["cpsat"]
    options = [r.candidate, *r.alternatives]
    if chooses:
        assert r.candidate.threads == max(c.threads for c in options)
        assert job.measured["cpsat"].throughput == r.candidate.threads
    else:
        assert any("none of its" in n for n in job.notes)
