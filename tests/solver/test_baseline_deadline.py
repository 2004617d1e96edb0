"""The comparison's baselines within the solve's time: past a quarter of the time limit no more
naive or balanced plans are measured after the first (a server's simulation takes seconds a plan:
the ten naive and ten balanced plans took a minute of a 60-second job), and the rows count what
was measured; a deterministic solve measures them all, so its table repeats."""

from __future__ import annotations

import time

from tasksolve.solver.binding.compare import solve
from tasksolve.specs import load_spec

SPEC = "t2-ipfwd-l1-x2"


def _methods(report) -> list[str]:
    return [row.method for row in report.comparison]


def test_baselines_past_the_deadline_measure_their_first_plans_only():
    spec = load_spec(SPEC)
    late = time.perf_counter() - 1000.0  # a solve that started long ago: every deadline has passed
    options = dict(oracle_kind="analytic", time_limit=20, workers=1, samples=200, seed=0)
    report = solve(spec, ["cpsat", "random", "balanced"], started=late, **options)
    rows = _methods(report)
    assert "naive avg of 1" in rows and "naive worst of 1" in rows
    assert "balanced best of 1" in rows and "balanced worst of 1" in rows
    assert report.status in ("OPTIMAL", "FEASIBLE")  # CP-SAT still ran (its own minimum share)


def test_a_deterministic_solve_measures_every_baseline_plan():
    spec = load_spec(SPEC)
    late = time.perf_counter() - 1000.0
    options = dict(oracle_kind="analytic", time_limit=2, workers=1, samples=200, seed=0, deterministic=True)
    rows = _methods(solve(spec, ["cpsat", "random", "balanced"], started=late, **options))
    assert "naive avg of 10" in rows and "balanced best of 10" in rows
