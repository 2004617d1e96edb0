"""Solve the binding problem: the K best plans of the CP-SAT model, with a local search and a bound.

The model itself is `solver.binding.model.BindingModel` (the closed form of docs/design.md encoded
exactly).  Around it, `solve_binding` runs the steps its docstring lists: the hint is first
improved by iterated local search on the closed form (`solver.binding.local_search`), and for
total throughput the bound reported is the tighter of CP-SAT's and the configuration LP's
(`solver.binding.configurations`): on large instances CP-SAT's linear relaxation stays near the
contention-free bound, the configuration LP does not.  The K best distinct plans come from
re-solving with a no-good on each plan found; thanks to the model's symmetry breaking each is the
unique representative of its class.  Every step's outcome is recorded (`StepOutcome`): a failed
step is visible in the result, never silent.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field

from tasksolve.solver.binding.configuration_lp import (
    ConfigurationBound,
    enumeration_fits,
    enumeration_seconds,
)
from tasksolve.solver.binding.level_plan import LevelResult
from tasksolve.solver.binding.local_search import LocalSearchResult
from tasksolve.solver.binding.model import THROUGHPUT_RESOLUTION, BindingModel, ModelTooLarge, check_size
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.binding.rounding import Rounding
from tasksolve.solver.binding.steps import (
    StepOutcome,
    better_start,
    bound_and_plan,
    exact_value,
    heuristic_search,
    level_step,
)
from tasksolve.specs import UsableTree
from tasksolve.specs.objective import Objective

__all__ = ["BindingResult", "BindingSolution", "StepOutcome", "solve_binding"]

LOAD_SECONDS_PER_LITERAL = 4e-5  # CP-SAT's overrun of its time limit per placement literal (measured)
MODEL_TOO_LARGE = "MODEL_TOO_LARGE"  # status of a CP-SAT step whose model was refused before the solve
REPEAT_DETAIL = "it would repeat the first run: the same model, hint and deterministic limit"


@dataclass
class BindingSolution:
    """One plan found by CP-SAT (context per thread) with the model's figures."""

    contexts: list[int]
    status: str
    objective: float  # in the objective's unit: packets/s, or seconds for latency
    bound: float
    gap: float  # relative distance between objective and bound
    wall_time: float
    bound_source: str = "cpsat"  # or "configuration LP"
    found_by: str = "cpsat"  # or "local search" (when CP-SAT did not reach the hint)


@dataclass
class BindingResult:
    """The K best distinct plans, best first."""

    objective_kind: str
    solutions: list[BindingSolution] = field(default_factory=list)
    status: str = "UNKNOWN"
    wall_time: float = 0.0
    symmetry_constraints: int = 0
    local_search: LocalSearchResult | None = None
    configuration_bound: ConfigurationBound | None = None
    notes: list[str] = field(default_factory=list)
    steps: list[StepOutcome] = field(default_factory=list)
    rounding: Rounding = field(default_factory=Rounding)  # how far the integer model is from the closed form
    #: what a repeat of this run would do again: the hinted model's text and its deterministic limit
    #: (None: no deterministic limit, or a solve ended on the wall clock before it)
    repeatable: str | None = None

    @property
    def best(self) -> BindingSolution | None:
        return self.solutions[0] if self.solutions else None

    @property
    def failed_steps(self) -> list[StepOutcome]:
        """The steps that failed on a valid input: the answer may be weaker than it should be."""
        return [step for step in self.steps if step.outcome == "failed"]


def solve_binding(
    problem: BindingProblem,
    *,
    objective: str | None = None,
    top_k: int = 1,
    time_limit: float = 30.0,
    workers: int = 2,
    seed: int = 0,
    hint: list[int] | None = None,
    symmetry: bool = True,
    deterministic_time: float | None = None,
    local_search: bool = True,
    configuration: bool = True,
) -> BindingResult:
    """The `top_k` best distinct plans of the closed-form model (best first).

    Steps:

    0. where the configurations of a domain are too many to enumerate (total throughput): the
       level LP's bound and plan (`solver.binding.level_plan`, at most 30% of the time); its plan
       replaces the hint when better;
    1. iterated local search from `hint` (at most 400 rounds and 25% of `time_limit`, 10% where
       step 3 comes first; 2 rounds per second of `deterministic_time` and no clock when runs
       must be repeatable);
    2. CP-SAT hinted with its plan, for 25% of the time (all of it when no configuration bound
       applies), unless the model is too large (`model.check_size`); OPTIMAL ends here;
    3. the configuration bound (total throughput only; the level LP's where step 0 ran); where
       its enumeration is estimated at over 25% of the time, it runs before step 2, which then
       has the time left and step 4 is skipped; its columns give a plan (`steps.bound_and_plan`);
    4. CP-SAT again for the time left, hinted with the best plan so far; skipped where it would
       repeat step 2 (a deterministic limit, and the same model and hint as step 2's run, which
       no wall clock cut short: the same search, so the same plans and bound).

    `time_limit` is shared by all steps and all K solves; `deterministic_time` (CP-SAT's
    deterministic limit, split between steps 2 and 4) makes runs repeatable with a fixed `seed`
    and `workers`.  If CP-SAT ends below the local search's plan, that plan comes first.
    """
    objective = objective or problem.spec.objective
    options = (top_k, time_limit, workers, seed, symmetry, deterministic_time, local_search, configuration)
    return _Solve(problem, objective, *options).run(hint)


@dataclass
class _Solve:
    """One `solve_binding` run: its settings and what the steps found so far, one method per step
    (the steps of `solve_binding`'s docstring)."""

    problem: BindingProblem
    objective: str
    top_k: int
    time_limit: float
    workers: int
    seed: int
    symmetry: bool
    deterministic_time: float | None
    local_search: bool
    configuration: bool
    start: float = field(default_factory=time.perf_counter)
    steps: list[StepOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    level: LevelResult | None = None
    heuristic: LocalSearchResult | None = None
    bound_info: ConfigurationBound | None = None

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    @property
    def bounded(self) -> bool:
        """Step 3 applies: the configuration bound bounds total throughput only."""
        return self.configuration and self.objective == "total_throughput"

    @property
    def cpsat_deterministic(self) -> float | None:
        """Each CP-SAT run's deterministic limit: half of it each where two runs share it."""
        if self.deterministic_time is None:
            return None
        return (0.5 if self.bounded else 1.0) * self.deterministic_time

    def run(self, hint: list[int] | None) -> BindingResult:
        problem, limit = self.problem, self.time_limit
        if self.bounded and not enumeration_fits(problem):  # step 0
            wall = None if self.deterministic_time is not None else 0.3 * limit
            self.level = level_step(problem, self.steps, self.notes, wall)
            hint = better_start(problem, self.objective, hint, self.level)
        # an enumeration that would take over a quarter of the time runs before CP-SAT, which then has
        # the time left in one run (the 60-thread T2: 1.65M configurations)
        early = self.bounded and self.level is None and self.deterministic_time is None
        early = early and enumeration_seconds(problem) > 0.25 * limit
        self.heuristic = self.local_search_step(hint, (0.1 if early else 0.25) * limit)
        self.bound_info = self.level.bound if self.level is not None else None
        if early:
            self.bound_and_plan(limit - self.elapsed())
        hint = self.heuristic.contexts if self.heuristic is not None else hint
        result = self.first_run(hint, early)
        if early:
            self.steps.append(StepOutcome("CP-SAT (second run)", "skipped", "the bound ran first: one CP-SAT run"))
        elif self.bounded and result.status != "OPTIMAL" and result.status != "INFEASIBLE":
            if self.level is None:  # the bound with the time left, then its plan with half of what remains
                left = None if self.deterministic_time is not None else max(1.0, limit - self.elapsed())
                self.bound_and_plan(left, (1.0, 0.5))
            result = self.second_run(result, hint)
        else:
            self.steps.append(_no_bound_outcome(self.bounded, self.configuration, result.status))
        self.finish(result)
        result.wall_time = self.elapsed()
        return result

    def cpsat(self, hint: list[int] | None, limit: float, repeat: BindingResult | None = None) -> BindingResult | None:
        """`_solve_model` with this run's settings; None where it would repeat `repeat`."""
        return _solve_model(
            self.problem,
            self.objective,
            self.top_k,
            limit,
            self.workers,
            self.seed,
            hint,
            self.symmetry,
            self.cpsat_deterministic,
            repeat,
        )

    def local_search_step(self, hint: list[int] | None, share: float) -> LocalSearchResult | None:
        """Step 1: iterated local search from the hint for `share` seconds, its outcome recorded."""
        if not self.local_search:
            self.steps.append(StepOutcome("local search", "skipped"))
            return None
        problem, objective, seed = self.problem, self.objective, self.seed
        if self.deterministic_time is not None:
            found = heuristic_search(problem, objective, hint, seed, max(10, int(2 * self.deterministic_time)), None)
        else:
            found = heuristic_search(problem, objective, hint, seed, 400, share)
        outcome = "ok" if found is not None else "not applicable"
        detail = "" if found is not None else "no plan to start from satisfies the constraints"
        self.steps.append(StepOutcome("local search", outcome, detail))
        return found

    def bound_and_plan(self, left: float | None, shares: tuple[float, float] | None = None) -> None:
        """Step 3: the configuration bound and its columns' plan (`steps.bound_and_plan`)."""
        extra = () if shares is None else (shares,)
        self.bound_info, self.heuristic = bound_and_plan(
            self.problem,
            self.objective,
            self.steps,
            self.notes,
            self.heuristic,
            self.seed,
            self.local_search,
            left,
            *extra,
        )

    def first_run(self, hint: list[int] | None, early: bool) -> BindingResult:
        """Step 2: CP-SAT hinted with the best plan so far, its outcome recorded; where CP-SAT
        refused the model and no step follows, the local search goes on from its plan for 90% of
        the time left (a 2000-thread spec: it stopped at its 10% share); the local search's plan
        kept when better."""
        limit = self.time_limit
        share = 0.25 if self.bounded and not early else 1.0
        result = self.cpsat(hint, max(0.05 * limit, share * limit - (0 if share < 1 else self.elapsed())))
        more = None if self.deterministic_time is not None or (self.bounded and not early) else limit - self.elapsed()
        self.steps.append(_cpsat_outcome("CP-SAT", result))
        heuristic = self.heuristic
        if result.status == MODEL_TOO_LARGE and heuristic is not None and more is not None and more > 1.0:
            found = heuristic_search(
                self.problem, self.objective, heuristic.contexts, self.seed + 1, 10_000, 0.9 * more
            )
            better = found is not None and found.value > heuristic.value
            detail = f"CP-SAT refused the model: {0.9 * more:.1f} s more" + (", a better plan" if better else "")
            self.steps.append(StepOutcome("local search (continued)", "ok", detail))
            self.heuristic = found if better else heuristic
        if self.heuristic is not None:
            _keep_heuristic(result, self.problem, self.heuristic)
        return result

    def second_run(self, result: BindingResult, hint: list[int] | None) -> BindingResult:
        """Step 4: CP-SAT again for the time left, hinted with the best plan so far; the better result."""
        remaining = self.time_limit - self.elapsed()
        if self.deterministic_time is None and remaining <= 1.0:
            self.steps.append(StepOutcome("CP-SAT (second run)", "skipped", "no time left"))
            return result
        again = self.cpsat(result.best.contexts if result.best is not None else hint, remaining, result)
        if again is None:  # deterministic: the same search again, so the same plans and bound
            self.steps.append(StepOutcome("CP-SAT (second run)", "skipped", REPEAT_DETAIL))
            return result
        self.steps.append(_cpsat_outcome("CP-SAT (second run)", again))
        return _better(result, again)

    def finish(self, result: BindingResult) -> None:
        """Notes, steps, the local search's plan first when better, the LP's bound where tighter."""
        if result.rounding.note() is not None:
            self.notes.append(result.rounding.note())
        heuristic, bound_info = self.heuristic, self.bound_info
        result.local_search, result.configuration_bound = heuristic, bound_info
        result.notes = [*result.notes, *self.notes]
        result.steps = self.steps
        if heuristic is not None:
            _keep_heuristic(result, self.problem, heuristic)
            result.solutions = result.solutions[: self.top_k]
        if bound_info is not None:
            for solution in result.solutions:
                if bound_info.value < solution.bound:
                    solution.bound, solution.bound_source = bound_info.value, bound_info.source
                    solution.gap = max(0.0, (solution.bound - solution.objective) / solution.objective)


def _no_bound_outcome(bounded: bool, configuration: bool, status: str) -> StepOutcome:
    """Step 3 when it does not run: CP-SAT answered, or the bound does not apply."""
    if bounded:
        return StepOutcome("configuration bound", "skipped", f"CP-SAT answered {status}")
    detail = "it bounds the total-throughput objective only" if configuration else "turned off"
    return StepOutcome("configuration bound", "not applicable", detail)


def _cpsat_outcome(step: str, result: BindingResult) -> StepOutcome:
    """A CP-SAT run is ok when it answered; no plan within the time limit is the limit's doing, not
    a failure; an invalid model is a failure (a bug to report)."""
    if result.status == "MODEL_INVALID":
        return StepOutcome(step, "failed", "CP-SAT rejected the model (MODEL_INVALID)")
    if result.status == MODEL_TOO_LARGE:
        return StepOutcome(step, "skipped", result.notes[0] if result.notes else "the model is too large")
    if result.status == "UNKNOWN":
        return StepOutcome(step, "no answer in time", "no plan and no proof within its share of the time limit")
    return StepOutcome(step, "ok", result.status)


def _better(first: BindingResult, second: BindingResult) -> BindingResult:
    """The run with the better best plan, with the tighter of the two CP-SAT bounds."""
    if second.best is None:
        return first
    if first.best is None:
        return second
    objective = Objective.of(first.objective_kind)
    keep = second if objective.better(second.best.objective, first.best.objective) else first
    other = first if keep is second else second
    for solution in keep.solutions[:1]:
        tighter = min(solution.bound, other.best.bound, key=objective.score)  # the bound nearer the plans
        if tighter != solution.bound:
            solution.bound = tighter
            solution.gap = (
                abs(tighter - solution.objective) / abs(solution.objective) if solution.objective else math.inf
            )
    if second.status == "OPTIMAL":
        keep.status = "OPTIMAL"
    keep.wall_time = first.wall_time + second.wall_time
    return keep


def _plan_form(problem: BindingProblem):
    """Plan (context per thread) -> its canonical form under the hardware's symmetries."""
    tree = UsableTree.of(problem.topology, problem.usable)
    return lambda contexts: tree.canonical_form({c: t for t, c in enumerate(contexts)})


def _keep_heuristic(result: BindingResult, problem: BindingProblem, heuristic: LocalSearchResult) -> None:
    """Put the local search's plan first when CP-SAT ended below it (the model's value is the
    closed form's, up to the throughput resolution)."""
    objective = Objective.of(result.objective_kind)
    value = objective.score(heuristic.value)  # the local search maximises the score
    best = result.best
    if best is not None:
        better = (
            value < best.objective * (1 - 1e-9)
            if objective.minimize
            else value > best.objective * (1 + 2.0 / THROUGHPUT_RESOLUTION)
        )
        if not better:
            return
    form = _plan_form(problem)
    heuristic_form = form(heuristic.contexts)
    result.solutions = [s for s in result.solutions if form(s.contexts) != heuristic_form]
    bound = best.bound if best is not None else (0.0 if objective.minimize else math.inf)
    gap = abs(bound - value) / abs(value) if value else math.inf
    result.solutions.insert(
        0, BindingSolution(list(heuristic.contexts), "FEASIBLE", value, bound, gap, 0.0, found_by="local search")
    )
    if result.status not in ("OPTIMAL", "FEASIBLE"):
        result.status = "FEASIBLE"


def _solve_model(
    problem: BindingProblem,
    objective: str,
    top_k: int,
    time_limit: float,
    workers: int,
    seed: int,
    hint: list[int] | None,
    symmetry: bool,
    deterministic_time: float | None,
    repeat: BindingResult | None = None,
) -> BindingResult | None:
    """CP-SAT alone: the K best distinct plans of the model; None, without a solve, where the run
    would repeat `repeat` (`_repeatable`)."""
    start = time.perf_counter()
    try:
        check_size(problem, None if deterministic_time is not None else time_limit)
        model = BindingModel(problem, objective, symmetry=symmetry)
        invalid = model.model.validate()
        if invalid:
            raise ModelTooLarge(f"CP-SAT would reject the model: {invalid}")
    except ModelTooLarge as exc:  # checked before the solve: the other steps answer instead
        result = BindingResult(objective_kind=objective, status=MODEL_TOO_LARGE, notes=[f"no CP-SAT run: {exc}"])
        result.wall_time = time.perf_counter() - start
        return result
    if hint is not None:
        model.hint(hint)
    repeatable = _repeatable(model, deterministic_time)
    if repeat is not None and repeatable is not None and repeatable == repeat.repeatable:
        return None
    result = BindingResult(
        objective_kind=model.objective,
        symmetry_constraints=model.symmetry_constraints,
        rounding=model.rounding,
        repeatable=repeatable,
    )
    seen: set = set()
    form = _plan_form(problem)
    overrun = LOAD_SECONDS_PER_LITERAL * sum(len(row) for row in problem.allowed)
    first = True
    attempts = 0
    while len(result.solutions) < top_k and attempts < 20 * top_k:
        attempts += 1
        # CP-SAT overruns its limit by the time it takes to load the model (2 s at 49k literals)
        remaining = time_limit - (time.perf_counter() - start) - overrun
        if deterministic_time is not None:
            remaining = time_limit  # repeatable: every solve gets the same deterministic budget
        elif remaining <= 0.05:
            break
        status, contexts, solver = model.solve(remaining, workers, seed, deterministic_time)
        if deterministic_time is not None and status not in ("OPTIMAL", "INFEASIBLE"):
            if solver.deterministic_time < deterministic_time:  # the wall clock ended it: a repeat may go further
                result.repeatable = None
        if status == "OPTIMAL" and not model.rounding.exact:
            status = "FEASIBLE"  # optimal for the rounded model only: no proof of the closed form's optimum
        if first:
            result.status = status
            first = False
        if contexts is None:
            break
        model.exclude(contexts)
        # plans equal up to the hardware's symmetries are one plan to a person, even where the
        # constraints (pins, forbids) break the symmetry for the model: skip those
        key = form(contexts)
        if key in seen:
            continue
        seen.add(key)
        figures = _figures(problem, model, contexts, solver.best_objective_bound)
        if figures is None:
            continue
        value, bound = figures
        gap = abs(bound - value) / abs(value) if value else math.inf
        result.solutions.append(BindingSolution(contexts, status, value, bound, gap, solver.wall_time))
    result.wall_time = time.perf_counter() - start
    return result


def _repeatable(model: BindingModel, deterministic_time: float | None) -> str | None:
    """The hinted model's text and the deterministic limit, hashed: two runs with the same key (and
    the same seed and workers, one `_Solve`'s) search alike, unless the wall clock cuts one short;
    None without a deterministic limit."""
    if deterministic_time is None:
        return None
    return hashlib.sha256(f"{deterministic_time!r}\n{model.model.proto}".encode()).hexdigest()


def _figures(problem: BindingProblem, model: BindingModel, contexts: list[int], raw_bound: float):
    """(the plan's value, the bound) of one CP-SAT solution, in the objective's unit, or None for a
    rounded model's plan that breaks ``latency_max``.  The value is the plan's closed-form value,
    never the model's integer one: the model floors each instance's rate (``T_i = floor(K / P_i)``),
    so its objective is up to one unit per instance below the plan's own value, which a certificate
    would read as beating a proven optimum.  A rounded model or a coarse throughput widens the
    bound by the model's pessimism (`model.Rounding`)."""
    if model.objective == "total_throughput":
        raw_bound += len(problem.instance_threads)  # T_i = floor(K / P_i) loses < 1 each
    bound = model.objective_value(raw_bound)
    value, meets = exact_value(problem, model.objective, contexts)
    if not model.rounding.exact and not meets:
        return None
    if model.rounding.exact and getattr(model, "resolution", THROUGHPUT_RESOLUTION) >= THROUGHPUT_RESOLUTION:
        return value, bound
    minimize = Objective.of(model.objective).minimize
    pessimism = model.rounding.pessimism
    bound = bound / pessimism if minimize else bound * pessimism
    if model.rounding.latency_pessimistic:
        bound = 0.0 if minimize else math.inf  # early signals left out: no bound on latencies
    return value, bound
