"""Steps of `solver.binding.cpsat.solve_binding` around the CP-SAT runs: the level bound, the
configuration bound and the plan from the LP's columns, each recording its outcome
(`StepOutcome`: a failed step is visible in the result, never silent), and the start plans: the
iterated local search (`heuristic_search`) and the better of the hint and the level LP's plan
(`better_start`, by the closed form's value: `exact_value`)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from tasksolve.solver.binding.configuration_lp import ConfigurationBound, ConfigurationLPFailed, configuration_bound
from tasksolve.solver.binding.configuration_plan import lp_plan
from tasksolve.solver.binding.configurations import NotApplicable
from tasksolve.solver.binding.level_plan import LevelResult, solve_level
from tasksolve.solver.binding.local_search import LocalSearchResult, improve_plan
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs.objective import Objective


@dataclass
class StepOutcome:
    """What one step of `solve_binding` did: ``ok``, ``failed``, ``not applicable`` or ``skipped``."""

    step: str
    outcome: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"step": self.step, "outcome": self.outcome, "detail": self.detail}


def _bound_or_none(label: str, compute, steps: list[StepOutcome], notes: list[str]):
    """``compute()``, or None with the reason recorded as a note and a step: a bound that does not
    apply or failed is visible, never silent."""
    try:
        return compute()
    except (NotApplicable, ConfigurationLPFailed) as exc:
        outcome = "not applicable" if isinstance(exc, NotApplicable) else "failed"
        notes.append(f"no {label}: {exc}")
        steps.append(StepOutcome(label, outcome, str(exc)))
        return None


def level_step(
    problem: BindingProblem, steps: list[StepOutcome], notes: list[str], time_limit: float | None
) -> LevelResult | None:
    """Step 0 where the configurations of a whole domain are too many to enumerate: the level LP's
    bound and its rounded plan (`solver.binding.level_plan`), the outcome recorded."""
    level = _bound_or_none("level bound", lambda: solve_level(problem, time_limit=time_limit), steps, notes)
    if level is None:
        return None
    notes += level.notes
    converged = "converged" if level.bound.converged else "valid, not converged in the time limit"
    steps.append(StepOutcome("level bound", "ok", f"{level.bound.level}: {converged}"))
    return level


def configuration_step(
    problem: BindingProblem, objective: str, steps: list[StepOutcome], notes: list[str], time_limit: float | None
) -> ConfigurationBound | None:
    """Step 3: the configuration bound, its outcome recorded (a failure is visible, never silent)."""
    bound = _bound_or_none(
        "configuration bound",
        lambda: configuration_bound(problem, objective=objective, time_limit=time_limit),
        steps,
        notes,
    )
    if bound is None:
        return None
    if not bound.converged:
        notes.append("the configuration LP did not converge in time: its bound is valid but loose")
    steps.append(
        StepOutcome(
            "configuration bound", "ok", "converged" if bound.converged else "valid, not converged in the time limit"
        )
    )
    return bound


def _lp_plan_step(
    problem: BindingProblem,
    objective: str,
    bound: ConfigurationBound | None,
    heuristic: LocalSearchResult | None,
    seed: int,
    time_limit: float,
    steps: list[StepOutcome],
) -> LocalSearchResult | None:
    """The configuration LP's plan improved by local search (`configuration_plan.lp_plan`) for
    `time_limit` seconds; the better of it and `heuristic`, the outcome recorded."""
    if bound is None or not bound.solution or time_limit <= 0.5:
        return heuristic
    try:
        improved = lp_plan(problem, objective, bound, seed, time_limit)
    except ValueError as exc:  # pins, forbids, caps or the latency bound the rounding broke
        steps.append(StepOutcome("LP plan", "not applicable", str(exc)))
        return heuristic
    better = heuristic is None or improved.value > heuristic.value
    kept = "kept" if better else "the first local search's plan is better"
    steps.append(StepOutcome("LP plan", "ok", f"from the configuration LP's columns: {improved.value:.6g} ({kept})"))
    return improved if better else heuristic


def bound_and_plan(
    problem, objective, steps, notes, heuristic, seed, local_search, time_left, shares=(0.85, 0.75)
) -> tuple:
    """Step 3, then the plan from its columns: the bound with ``shares[0]`` of `time_left`, the
    plan with ``shares[1]`` of what is left after it (no plan without a clock: `time_left` None
    runs the bound to convergence); (bound, the better local-search result)."""
    start = time.perf_counter()
    limit = None if time_left is None else max(1.0, shares[0] * time_left)
    bound = configuration_step(problem, objective, steps, notes, limit)
    if local_search and time_left is not None:
        left = time_left - (time.perf_counter() - start)
        heuristic = _lp_plan_step(problem, objective, bound, heuristic, seed, shares[1] * left, steps)
    return bound, heuristic


def exact_value(problem: BindingProblem, objective: str, contexts: list[int]) -> tuple[float, bool]:
    """The closed form's value of a plan (objective's unit) and whether it meets ``latency_max``
    (True without one), from one evaluation."""
    import numpy as np

    found = problem.batch.evaluate(np.array([contexts]))
    value = Objective.of(objective).score(float(found.values(objective)[0]))
    bound = problem.latency_bound_cycles
    meets = bound is None or float(found.latency_max[0]) * problem.topology.clock <= bound * (1 + 1e-9)
    return value, meets


def heuristic_search(
    problem: BindingProblem, objective: str, hint: list[int] | None, seed: int, rounds: int, time_limit: float | None
) -> LocalSearchResult | None:
    """Iterated local search from the hint (or from one random plan); None if there is no start."""
    from tasksolve.solver.binding.samplers import SamplerError, uniform_plans

    start = hint
    if start is None:
        try:
            start = list(map(int, uniform_plans(problem.spec, 1, seed)[0]))
        except SamplerError:
            return None
    try:
        return improve_plan(
            problem.spec,
            start,
            objective=objective,
            seed=seed,
            rounds=rounds,
            time_limit=time_limit,
            model=problem.batch,
        )
    except ValueError:  # the start breaks a cap or the latency bound
        return None


def better_start(
    problem: BindingProblem, objective: str, hint: list[int] | None, level: LevelResult | None
) -> list[int] | None:
    """The hint or the level LP's plan, whichever the closed form values more."""
    if level is None or level.plan is None:
        return hint
    if hint is None or level.plan_value >= exact_value(problem, objective, hint)[0]:
        return level.plan
    return hint
