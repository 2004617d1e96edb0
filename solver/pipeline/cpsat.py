"""The pipeline problem solved exactly with CP-SAT, on the model of `solver.pipeline.model`.

Objective: minimise ``Pm`` (maximise throughput), then, the period fixed at its optimum, minimise
``Lat`` (second phase, with the time left).  `min_latency` minimises ``Lat`` alone (the smallest
achievable latency, for the "infeasible bound" message).  The solve is hinted with a candidate
(by default LATA's answer, or List's when only that one meets the bound), its mapping first
improved by local search on the closed form (`remap`, a tenth of the time at most).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from fractions import Fraction

from ortools.sat.python import cp_model

from tasksolve.solver import cpsat
from tasksolve.solver.pipeline.candidates import Candidate, NoPlan, check_candidate, fixed_violations, respect_fixed
from tasksolve.solver.pipeline.evaluation import MethodResult, evaluate
from tasksolve.solver.pipeline.model import MAX_EXACT_REPLICAS, add_hint, build_model, extract
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem


def _solver(time_limit: float, workers: int, seed: int) -> cp_model.CpSolver:
    return cpsat.make_solver(time_limit=time_limit, workers=workers, seed=seed)


def solve(
    problem: PipelineProblem,
    *,
    time_limit: float = 30.0,
    workers: int = 2,
    seed: int = 0,
    hint: Candidate | None = None,
    hints: Sequence[Candidate] = (),
    use_lata_hint: bool = True,
    min_latency_phase: bool = True,
    max_replicas: int | None = None,
    top_k: int = 1,
) -> MethodResult:
    """Maximise throughput under the latency bound, exactly (module docstring).

    Returns a `MethodResult` with status OPTIMAL (proven), FEASIBLE (time limit), INFEASIBLE
    (no candidate meets the bound) or UNKNOWN (nothing found in time); `bound` is the proven
    lower bound of the period (ticks).  With INFEASIBLE/UNKNOWN the candidate is the hint (or the
    sequential thread) and `claims_feasible` is False.  With ``top_k > 1``, `alternatives` holds
    up to ``top_k - 1`` more distinct plans, next best first (`next_best`), for re-measuring.
    `hints`: more candidates to hint with; the best of them and `hint` after `remap` is used."""
    t0 = time.perf_counter()
    total_limit = time_limit
    if top_k > 1:  # the next best plans get the last third: the whole solve stays within the limit
        time_limit = time_limit * 2 / 3
    notes: list[str] = []
    hint = choose_hint(problem, hint, hints, use_lata_hint, deadline=t0 + time_limit / 10)
    pm = build_model(problem, latency_bound=problem.latency_max, max_replicas=max_replicas)
    if hint is not None:
        add_hint(pm, hint)
    pm.model.minimize(pm.period)
    solver = _solver(max(0.1, time_limit - (time.perf_counter() - t0)), workers, seed)
    code = cpsat.solve(solver, pm.model)
    status = solver.status_name(code)
    if status == "INFEASIBLE" and problem.sync:
        status = "UNKNOWN"  # early signals shorten latencies the model does not see
    if status not in ("OPTIMAL", "FEASIBLE"):
        return _no_solution(problem, hint, status, time.perf_counter() - t0, solver.wall_time)
    cand = extract(pm, solver)
    if (
        hint is not None
        and check_candidate(problem, hint) == []
        and evaluate(problem, hint).rank() < evaluate(problem, cand).rank()
    ):
        cand = hint  # the time limit stopped the search before it caught up with its hint
        notes.append("the hint is better than the solution found in time; kept the hint")
    best_pm = int(solver.value(pm.period))
    ev = evaluate(problem, cand)
    bound = _period_bound(pm, solver, ev)
    spent = time.perf_counter() - t0
    if status == "OPTIMAL" and min_latency_phase and spent < time_limit:
        cand, ev = _latency_phase(problem, pm, best_pm, cand, ev, time_limit - spent, workers, seed, notes)
    if not pm.exact_period:
        notes.append(f"period resolved to 1/{pm.multiplier} tick (more than {MAX_EXACT_REPLICAS} replicas possible)")
    if problem.sync:  # the model leaves them out (solver.pipeline.sync): no proof, no bound
        notes.append(
            "the model leaves out NPIRE's synchronisation (locks, optimistic retries, early signals); "
            "the plan is judged with them, and neither optimality nor a bound is claimed"
        )
        status = "FEASIBLE" if status == "OPTIMAL" else status
        bound = None
    alternatives = []
    if top_k > 1:
        left = max(0.5, total_limit - (time.perf_counter() - t0))
        alternatives = next_best(
            problem, cand, top_k - 1, time_limit=left, workers=workers, seed=seed, max_replicas=max_replicas
        )
        notes.append(f"{len(alternatives)} next best distinct plan(s) kept for re-measuring")
    return MethodResult(
        method="cpsat",
        candidate=cand,
        evaluation=ev,
        status=status,
        bound=bound,
        claims_feasible=ev.feasible,
        seconds=time.perf_counter() - t0,
        notes=notes,
        alternatives=alternatives,
    )


def _period_bound(pm, solver, ev) -> Fraction:
    """CP-SAT's proven lower bound of the period, in ticks, never above the plan's own period."""
    # Pm = max_g ceil(M T_g / R_g): exact when M is a multiple of every R, else within one unit
    bound_pm = math.ceil(max(0.0, solver.best_objective_bound) - 1e-6) - (0 if pm.exact_period else 1)
    return min(Fraction(max(0, bound_pm), pm.multiplier * pm.unit), ev.period)


def _no_solution(problem: PipelineProblem, hint, status: str, seconds: float, wall: float) -> MethodResult:
    """CP-SAT found no plan (INFEASIBLE, UNKNOWN, ...): the hint, or the sequential thread (cut
    where the fixed replica counts differ, `respect_fixed`), with no feasibility claimed and no
    bound; `NoPlan` when neither keeps the fixed counts."""
    from tasksolve.solver.pipeline.evaluation import first_contexts, sequential_candidate

    fallback = hint if hint is not None and not fixed_violations(problem, hint) else None
    if fallback is None:
        sequential = respect_fixed(problem, sequential_candidate(problem))
        if sequential is None:
            raise NoPlan(f"CP-SAT status {status} after {wall:.2f}s, and no fallback keeps the fixed replica counts")
        fallback = first_contexts(problem, sequential)
    return MethodResult(
        method="cpsat",
        candidate=fallback,
        evaluation=evaluate(problem, fallback),
        status=status,
        bound=None,
        claims_feasible=False,
        seconds=seconds,
        notes=[f"CP-SAT status {status} after {wall:.2f}s"],
    )


def _latency_phase(problem, pm, best_pm: int, cand, ev, seconds: float, workers: int, seed: int, notes: list[str]):
    """With the optimal period fixed, the lowest latency within it (the second phase of the
    module docstring): (candidate, evaluation), the better of this phase's and the given."""
    pm.model.add(pm.period <= best_pm)
    pm.model.clear_hints()
    add_hint(pm, cand)
    pm.model.minimize(pm.latency)
    solver2 = _solver(max(0.05, seconds), workers, seed)
    code2 = cpsat.solve(solver2, pm.model)
    if code2 in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        cand2 = extract(pm, solver2)
        ev2 = evaluate(problem, cand2)
        if ev2.rank() <= ev.rank():
            cand, ev = cand2, ev2
        notes.append(f"latency phase: {solver2.status_name(code2)}")
    return cand, ev


def next_best(
    problem: PipelineProblem,
    best: Candidate,
    k: int,
    *,
    time_limit: float,
    workers: int = 2,
    seed: int = 0,
    max_replicas: int | None = None,
) -> list[Candidate]:
    """Up to `k` more distinct plans meeting the bound, best period first, besides `best`: the
    model solved again and again, each solution excluded by a no-good on its grouping ``x`` and
    bin counts ``y`` (as `solver.binding.cpsat` excludes its plans); all of it, model building
    included, within `time_limit` seconds, each solve taking an equal share of what is left.  A
    solve that finds nothing, or no time left, ends the list."""
    start = time.perf_counter()
    pm = build_model(problem, latency_bound=problem.latency_max, max_replicas=max_replicas)
    add_hint(pm, best)
    pm.model.minimize(pm.period)
    seen = {best.key()}
    out: list[Candidate] = []
    for i in range(k + 1):
        left = time_limit - (time.perf_counter() - start)
        if left <= 0.05:
            break
        solver = _solver(left / (k + 1 - i), workers, seed)
        if cpsat.solve(solver, pm.model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break
        cand = extract(pm, solver)
        if cand.key() not in seen and check_candidate(problem, cand) == []:
            seen.add(cand.key())
            out.append(cand)
            if len(out) == k:
                break
        exclude(pm, solver)
    out.sort(key=lambda c: evaluate(problem, c).rank())
    return out


def exclude(pm, solver: cp_model.CpSolver) -> None:
    """A no-good: at least one ``x[t,g]`` or one ``y[g,d]`` differs from `solver`'s solution."""
    m = pm.model
    lits = [~v if solver.value(v) else v for v in pm.x.values()]
    for (g, d), var in pm.y.items():
        value = int(solver.value(var))
        same = m.new_bool_var(f"nogood[{g},{d}]={value}")
        m.add(var == value).only_enforce_if(same)
        m.add(var != value).only_enforce_if(~same)
        lits.append(~same)
    m.add_bool_or(lits)


def choose_hint(
    problem: PipelineProblem,
    hint: Candidate | None,
    hints: Sequence[Candidate],
    use_lata_hint: bool,
    *,
    deadline: float,
) -> Candidate | None:
    """The candidate CP-SAT is hinted with: the best by the closed form of `hint` and `hints`
    (LATA's and List's plans when none is given and `use_lata_hint`), each valid mapped one
    first improved by `remap` until `deadline`; `hint` itself when none of them is mapped."""
    if hint is None and not hints and use_lata_hint:
        from tasksolve.solver.pipeline.baselines import list_hlfet
        from tasksolve.solver.pipeline.lata import lata

        hints = []
        for method in (lata, list_hlfet):  # LATA's, or the latency reference
            try:
                hints.append(method(problem).candidate)
            except NoPlan:  # it keeps no fixed replica counts here; CP-SAT may
                continue
    options = [
        c for c in [*([hint] if hint is not None else []), *hints] if c.mapped and not check_candidate(problem, c)
    ]
    if not options:
        return hint
    options = [remap(problem, c, deadline=deadline) for c in options]
    return min(options, key=lambda c: evaluate(problem, c).rank())


def remap(problem: PipelineProblem, cand: Candidate, *, deadline: float) -> Candidate:
    """The hint's mapping improved by first-improvement local search on the closed form: move one
    thread to a free context or swap two threads' contexts while `Evaluation.rank` improves (meets
    the bound, then period, latency), until no move helps or `deadline` (``perf_counter``) passes.
    Under contention a heuristic's mapping often misses the bound that a better one meets, and
    CP-SAT finds a plan within the bound far sooner from a hint that meets it."""
    ctx = [list(g.contexts) for g in cand.groups]
    best = evaluate(problem, cand).rank()
    improved = True
    while improved and time.perf_counter() < deadline:
        improved = False
        free = sorted(set(problem.contexts) - {c for cs in ctx for c in cs})
        slots = [(g, i) for g, cs in enumerate(ctx) for i in range(len(cs))]
        for (g, i), (kind, target) in (
            (s, m) for s in slots for m in [("move", c) for c in free] + [("swap", t) for t in slots if t[0] != s[0]]
        ):
            trial = [list(cs) for cs in ctx]
            if kind == "move":
                trial[g][i] = target
            else:
                h, j = target
                trial[g][i], trial[h][j] = trial[h][j], trial[g][i]
            trial_cand = cand.with_contexts(trial)
            if check_candidate(problem, trial_cand) == [] and (rank := evaluate(problem, trial_cand).rank()) < best:
                best, ctx, improved = rank, trial, True
                break
            if time.perf_counter() >= deadline:
                break
    return cand.with_contexts(ctx)


def min_latency(
    problem: PipelineProblem, *, time_limit: float = 10.0, workers: int = 2, seed: int = 0
) -> tuple[int | None, int, str]:
    """The smallest latency any candidate achieves (ticks): ``(best found, proven lower bound,
    status)``; best is None when nothing was found in time."""
    pm = build_model(problem.with_bound(None), latency_bound=None)
    from tasksolve.solver.pipeline.evaluation import first_contexts, sequential_candidate

    add_hint(pm, first_contexts(problem, sequential_candidate(problem)))
    pm.model.minimize(pm.latency)
    solver = _solver(time_limit, workers, seed)
    code = cpsat.solve(solver, pm.model)
    status = solver.status_name(code)
    lower = (
        max(problem.critical_path, math.ceil(solver.best_objective_bound / pm.unit - 1e-6))
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        else problem.critical_path
    )
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        cand = extract(pm, solver)
        return evaluate(problem, cand).latency, lower, status
    return None, lower, status


__all__ = ["PipelineError", "build_model", "min_latency", "solve"]
