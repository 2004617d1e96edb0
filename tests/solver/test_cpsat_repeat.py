"""solver.binding.cpsat: with a deterministic limit, CP-SAT's second run is skipped where it would
repeat the first one (the same hinted model, limit, seed and workers: the same search), and the
answer is the one the repeat gave; a run the wall clock cut short is repeated as before."""

from __future__ import annotations

import pytest

from tasksolve.solver.binding import cpsat as bc
from tasksolve.solver.binding.model import BindingModel
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import load_spec


@pytest.fixture(scope="module")
def problem() -> BindingProblem:
    return BindingProblem(load_spec("alderlake-ids"))


def _count_solves(monkeypatch) -> list[int]:
    calls: list[int] = []
    solve = BindingModel.solve

    def counted(self, *args, **kwargs):
        calls.append(1)
        return solve(self, *args, **kwargs)

    monkeypatch.setattr(BindingModel, "solve", counted)
    return calls


def _answer(result: bc.BindingResult):
    plans = [(list(map(int, s.contexts)), s.objective, s.bound, s.gap, s.status, s.found_by) for s in result.solutions]
    steps = [(s.step, s.outcome, s.detail) for s in result.steps if s.step != "CP-SAT (second run)"]
    return result.status, plans, steps


def _second_run(result: bc.BindingResult):
    return next(s for s in result.steps if s.step == "CP-SAT (second run)")


def _solve(problem: BindingProblem) -> bc.BindingResult:
    return bc.solve_binding(problem, time_limit=60, workers=1, seed=0, deterministic_time=0.5)


def test_a_second_run_that_would_repeat_the_first_is_skipped_with_the_same_answer(problem, monkeypatch):
    calls = _count_solves(monkeypatch)
    skipped = _solve(problem)
    n_skipped = len(calls)
    solve = bc._Solve.cpsat
    monkeypatch.setattr(bc._Solve, "cpsat", lambda self, hint, limit, repeat=None: solve(self, hint, limit))
    repeated = _solve(problem)  # the second run as it was: always run
    assert _second_run(skipped).outcome == "skipped" and _second_run(skipped).detail == bc.REPEAT_DETAIL
    assert _second_run(repeated).outcome != "skipped"
    assert skipped.solutions and _answer(skipped) == _answer(repeated)
    assert 2 * n_skipped == len(calls) - n_skipped  # the repeat's solves, saved


def test_the_key_of_a_run_is_its_hinted_model_and_limit(problem):
    model, other = BindingModel(problem, "total_throughput"), BindingModel(problem, "total_throughput")
    assert bc._repeatable(model, None) is None  # no deterministic limit: runs never repeat exactly
    assert bc._repeatable(model, 0.25) == bc._repeatable(other, 0.25) != bc._repeatable(model, 0.5)
    usable = sorted(problem.usable)
    model.hint(usable[:20])
    other.hint(usable[4:24])
    assert bc._repeatable(model, 0.25) != bc._repeatable(other, 0.25)
    other.hint(usable[:20])
    assert bc._repeatable(model, 0.25) == bc._repeatable(other, 0.25)


class _CutShort:
    """A solver as the wall clock left it: below its deterministic limit, no proof."""

    def __init__(self, solver) -> None:
        self._solver = solver

    def __getattr__(self, name: str):
        return getattr(self._solver, name)

    @property
    def deterministic_time(self) -> float:
        return 0.0


def test_a_run_the_wall_clock_cut_short_is_repeated(problem, monkeypatch):
    solve = BindingModel.solve

    def cut_short(self, *args, **kwargs):
        status, contexts, solver = solve(self, *args, **kwargs)
        return status, contexts, _CutShort(solver)

    monkeypatch.setattr(BindingModel, "solve", cut_short)
    result = _solve(problem)
    assert result.repeatable is None and _second_run(result).outcome != "skipped"
