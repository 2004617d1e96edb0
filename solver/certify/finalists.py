"""The finalists climbed on the oracle itself: known plans that are local optima of the simulation.

The local-optima design climbs on the closed form and screens on the simulation
(`solver.certify.designs`): its draw bound is a statement about those restarts, not about the
simulation's own local optima, which may never be drawn (issue "Verdicts a person can act on").
Where affordable, the finalists -- the certified plan and the best sampled plan -- climb on the
oracle itself: steepest ascent in which each step measures, through the run's one-measurement-
per-class table (`solver.certify.measure.ClassOracle`), the `CLIMB_SCREEN` placement classes the
closed form ranks best among the move/swap neighbours (`solver.binding.local_search`), and moves
to the best of them only when it beats the current plan beyond both half-widths.  It stops at a
plan no screened neighbour beats beyond noise, after `CLIMB_STEPS` moves, or at the deadline.

The climbs' ends are *known plans* of the certificate (measured on the same oracle): they can only
make a verdict more cautious -- a plan they beat beyond noise by more than the target is
`not_certified` (rule 3), one they beat beyond noise is not `best_found` (rule 7) -- never
more positive.  The draw bound still covers the closed-form restarts only (`SamplesSummary.covers`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.certify.verdict import beats as beyond_noise
from tasksolve.specs.oracles import noun

if TYPE_CHECKING:
    from tasksolve.simulate.measurement import Measurement
    from tasksolve.solver.certify.budget import Budget
    from tasksolve.solver.certify.measure import ClassOracle
    from tasksolve.specs import Spec

#: placement classes measured on the oracle per step (the closed form's best neighbours)
CLIMB_SCREEN = 6
#: the most moves per finalist
CLIMB_STEPS = 20


def beats(a: Measurement, b: Measurement, objective: str) -> bool:
    """Measurement `a` is better than `b` beyond both 95% half-widths (plus 1e-9 relative): the
    verdict's own test (`verdict.beats`) on the two measurements' figures (larger is better)."""
    half = [float(m.natural_half_width(objective) or 0.0) for m in (a, b)]
    return beyond_noise(a.value(objective), half[0], b.value(objective), half[1], minimize=False)


def climb(
    spec: Spec, oracle: ClassOracle, start: Sequence[int], objective: str, seed: int = 0, deadline: float | None = None
) -> tuple[list[int], Measurement, int]:
    """(the plan reached, its measurement, moves) climbing on `oracle` (a `ClassOracle`) from
    `start` (module docstring); `deadline` is a `time.monotonic()` reading."""
    from tasksolve.solver.binding.local_search import LocalSearch

    search = LocalSearch(spec, objective, seed=seed)
    plan = np.asarray(start, dtype=np.intp)
    here = oracle.evaluate_contexts(plan)
    moves = 0
    while moves < CLIMB_STEPS and (deadline is None or time.monotonic() < deadline):
        candidates = search.neighbours(plan)
        if not len(candidates):
            break
        predicted = search.values(candidates)
        seen, best = {oracle.key(plan)}, None
        for i in np.argsort(-predicted, kind="stable"):
            if len(seen) > CLIMB_SCREEN or not np.isfinite(predicted[i]):
                break
            key = oracle.key(candidates[i])
            if key in seen:
                continue
            seen.add(key)
            measured = oracle.evaluate_contexts(candidates[i])
            if best is None or measured.value(objective) > best[1].value(objective):
                best = (candidates[i], measured)
        if best is None or not beats(best[1], here, objective):
            break
        plan, here, moves = best[0], best[1], moves + 1
    return [int(c) for c in plan], here, moves


def climb_finalists(
    spec: Spec,
    oracle: ClassOracle,
    finalists: list[tuple[str, Sequence[int]]],
    objective: str,
    seed: int,
    deadline: float | None,
    where: str,
) -> list[KnownPlan]:
    """Known plans (natural values) from climbing each finalist (label,
    contexts) on `oracle` (`where`: the oracle in words); finalists of one placement class climb once."""
    out, done = [], set()
    for label, contexts in finalists:
        key = oracle.key(contexts)
        if key in done or (deadline is not None and time.monotonic() >= deadline):
            continue
        done.add(key)
        reached, measured, moves = climb(spec, oracle, contexts, objective, seed=seed, deadline=deadline)
        hw = float(measured.natural_half_width(objective) or 0.0)
        label = f"{label} climbed on the {where} ({moves} moves)"
        out.append(KnownPlan(label, measured.natural(objective), hw, tuple(reached)))
    return out


def climbs(
    spec: Spec,
    classes: ClassOracle | None,
    finalists: list[tuple[str, Sequence[int]]],
    oracle_kind: str,
    seed: int,
    budget: Budget,
) -> list[KnownPlan]:
    """The finalists' climbs (`climb_finalists`) as known plans, where they can help: within the
    budget's `climb_deadline` (none without a budget: no climb), on binding plans (`classes`: the
    run's one-measurement-per-class oracle; None for pipeline plans) measured on another oracle
    than the closed form (where the solver's own plans already are local optima).  The caller
    climbs only while the verdict is undecided and not on a noisy oracle (there the known plans of
    one noisy run each are listed, never compared, so climbing would spend the program's runs for
    nothing)."""
    deadline = budget.climb_deadline
    if deadline is None or time.monotonic() >= deadline or oracle_kind == "analytic" or classes is None:
        return []
    return climb_finalists(spec, classes, finalists, spec.objective, seed, deadline, noun(oracle_kind))
