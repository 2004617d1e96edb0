"""A rigorous bound on the best throughput of every pipeline plan on the closed form (the analytic
oracle), for the verdict's `proven` route (docs/design.md, "Verdicts", rule 4).

The pipeline CP-SAT model (`solver.pipeline.model`) charges a replicated group's messages at its
*worst* replica pair and group demands rounded *up*: its period bounds no plan from below, so its
dual bound bounds nothing (`solver.job.pipeline`).  Its **relaxation** (``relaxed=True``, the
model's docstring) charges the *closest* replica pair and demands rounded *down*; for every plan
``p``, with ``T_g`` the closed form's group time, ``S_t`` a replica's slowdown and ``m_t`` its
mean message cost,

    ``T_g = max_t (w_g + m_t) S_t >= (w_g + sum_e touch_e) max_t S_t`` and, for each incoming
    edge e, ``T_g >= max_t (w_g + m_t) >= w_g + all_e + sum_{e' != e} touch_e'``,

with ``touch_e`` the closest producer-consumer pair's cost of edge e and ``all_e`` the largest,
over consumer replicas, of the replica's closest producer's; so ``T_g >= E_g(relaxed)``

(the mean of pair costs is at least the least pair cost; a floored demand never raises a load,
so never a slowdown).  So the relaxed period and latency of every plan are at most its closed-form
period and latency: every plan within the latency bound is feasible in the relaxation, and the
relaxation's proven lower bound ``P*`` on its period (CP-SAT's ``best_objective_bound``, the
largest of a few seeded attempts, `ATTEMPTS`; one unit
of ``1/(M Q)`` tick off when ``M`` is not a multiple of every replica count) bounds every plan's
period.  ``clock * scale / P*`` then bounds the throughput of every plan (packets per second):
a bound that applies to the analytic oracle, whose figures for a mapped plan are the closed
form's with exact demands (`solver.pipeline.problem`, property-tested).

The argument needs, and `closed_form_bound` refuses (returns the reason) without: no NPIRE
synchronisation (an early signal shortens a latency the model does not see; locks add work it
does not charge, which is harmless, but the latency is not), exact units (work and message costs
integral in ticks; task demands and capacities exact in thousandths, which the caller checks on
the spec: `exact_demands`), an exact slowdown unit (``Q`` the least common multiple of the
capacities, not capped), and message costs that never rise from an outer level to an inner one
(else the closest pair is not the cheapest).  Checked against brute-force enumeration on small
specs (`tests/pipeline/test_bound.py`) and on the truth study (`bench/pipeline_truth.py`).

**On the simulation** (`simulation_bound`) the same relaxation of the problem *without
contention* (no resources: every slowdown 1) bounds every plan: a replica of group ``g`` spends on
each packet its work (random work has the same mean) plus the incoming messages' costs, each at
least its edge's closest-pair cost, at a rate of at most 1 (`simulate.des.dynamics`,
``_compute_rate``, ``_incoming``), and the packets of a group are dealt to its replicas in turn
(``k = j * stride + offset``), so every replica gets ``1/r`` of them: the simulated period is at
least the slowest replica's mean time over ``r``, which the relaxation's ``T_g`` and ``all``
charges bound from below exactly as above.  Plans within the closed form's latency bound are
within the contention-free relaxation's.  Refused with a shared queue (a replica free first takes
the next packet, so the slowest replica need not take its share) and with NPIRE synchronisation.
Checked on every plan of the three truth-study specs: the simulated throughput minus its
half-width never exceeds the contention-free closed form (`tests/pipeline/test_bound.py`).

**Several instances** (`PipelineProblem.copies`, `solver.pipeline.blocks`): a plan is one
instance's plan repeated on every instance's block, and the bound is `instances` x the bound on
one instance's block (`PipelineProblem.throughput`).  Each instance's throughput on either oracle
is at most its plan's on its block alone -- the other instances' threads only add load to the
domains the blocks share -- and the oracle's total is the sum over instances; so the bound holds
for those repeated plans (the certificate's samples), not for plans giving instances different
groupings.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

from tasksolve.solver.pipeline.candidates import Candidate
from tasksolve.solver.pipeline.problem import Q_MAX, PipelineProblem

#: shares of the time limit of CP-SAT's attempts, each with its own seed, hinted every other one
#: (a single-worker search from one seed can stall on a model another seed proves at once); the
#: last takes what is left, and the tightest dual bound of them all is kept (each is valid)
ATTEMPTS = (0.1, 0.1, 0.2, 1.0)


@dataclass(frozen=True)
class PipelineBound:
    """A `solver.certify.bounds.Bound`: ``value`` bounds the
    throughput of every pipeline plan on ``oracle``; no plan is known to reach it
    (``proven_optimum`` None)."""

    value: float
    period_ticks: Fraction
    status: str  # CP-SAT's status on the relaxation (OPTIMAL: its optimum, else its dual bound)
    seconds: float
    oracle: str = "analytic"
    proven_optimum: float | None = None
    source: str = "pipeline CP-SAT relaxation"

    objective = None  # the relaxation's plan is no plan (the rest of the `Bound` protocol)
    failed_steps = ()
    noisy = False
    confidence = None
    plan_value = None  # no per-plan bound
    plan_note = None

    def to_dict(self) -> dict:
        return {
            "oracle": self.oracle,
            "value": self.value,
            "period_cycles": float(self.period_ticks),
            "status": self.status,
            "seconds": self.seconds,
            "source": self.source,
        }


def refusal(problem: PipelineProblem, *, exact_demands: bool = True) -> str | None:
    """Why the relaxation's bound would not be rigorous for `problem` (module docstring), or None."""
    if problem.sync:
        return "the model leaves out NPIRE's synchronisation"
    if not problem.exact_units:
        return "work or message costs were rounded to a thousandth of a cycle"
    if not exact_demands:
        return "a task demand or a capacity is not a multiple of a thousandth"
    if problem.resources and math.lcm(*(r.capacity for r in problem.resources)) > Q_MAX:
        return "the slowdown unit was rounded"
    for e in problem.edges:
        costs = [e.at(k) for k in range(-1, problem.n_levels - 1)]
        if any(inner > outer for outer, inner in zip(costs, costs[1:])):
            return f"the message cost of an edge rises from an outer level to an inner one ({costs})"
    return None


def exact_demands(spec, problem: PipelineProblem) -> bool:
    """Whether every task demand and every capacity `problem` rounds to thousandths is exact."""
    app = spec.applications[problem.app]
    values = [float(v) for task in app.tasks.values() for v in task.demand.values()]
    values += [float(r.capacity) for r in spec.topology.resources if math.isfinite(float(r.capacity))]
    return all(abs(v * 1000 - round(v * 1000)) <= 1e-9 * max(1.0, abs(v * 1000)) for v in values)


def closed_form_bound(
    problem: PipelineProblem,
    *,
    time_limit: float,
    workers: int = 1,
    seed: int = 0,
    hint: Candidate | None = None,
    exact: bool = True,
) -> tuple[PipelineBound | None, str | None]:
    """(the bound of the module docstring, None) or (None, why there is none); `exact`: whether
    the spec's demands and capacities are exact thousandths (`exact_demands`)."""
    from ortools.sat.python import cp_model

    from tasksolve.solver import cpsat
    from tasksolve.solver.pipeline.model import add_hint, build_model

    why = refusal(problem, exact_demands=exact)
    if why is not None:
        return None, why
    start = time.perf_counter()
    pm = build_model(problem, latency_bound=problem.latency_max, relaxed=True)
    pm.model.minimize(pm.period)
    best, status = 0, "UNKNOWN"
    for attempt, share in enumerate(ATTEMPTS):
        left = time_limit - (time.perf_counter() - start)
        if left <= 0.05 and attempt:
            break
        pm.model.clear_hints()
        if hint is not None and attempt % 2 == 0:
            add_hint(pm, hint)
        budget = left if attempt == len(ATTEMPTS) - 1 else max(0.1, time_limit * share)
        solver = cpsat.make_solver(time_limit=max(0.1, budget), workers=workers, seed=seed + attempt)
        code = cpsat.solve(solver, pm.model)
        if code == cp_model.INFEASIBLE:
            return None, "the relaxation has no plan within the latency bound"
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            status = "OPTIMAL" if code == cp_model.OPTIMAL else "FEASIBLE"
            best = max(best, math.floor(max(0.0, solver.best_objective_bound) + 1e-6))
        if code == cp_model.OPTIMAL:
            break
    if status == "UNKNOWN":
        return None, f"CP-SAT found no plan of the relaxation in {time_limit:g} s"
    units = best - (0 if pm.exact_period else 1)
    if units <= 0:
        return None, "the relaxation's period bound is zero"
    period = Fraction(units, pm.multiplier * pm.unit)
    # every instance's (`PipelineProblem.throughput`); float rounding never lowers it
    value = problem.throughput(period) * (1 + 1e-12)
    return PipelineBound(value, period, status, time.perf_counter() - start), None


def simulation_bound(
    problem: PipelineProblem, settings, *, time_limit: float, workers: int = 1, seed: int = 0, hint=None
) -> tuple[PipelineBound | None, str | None]:
    """(a bound on every pipeline plan's simulated throughput, None) or (None, why there is none):
    `closed_form_bound` of the problem without contention (module docstring, "On the
    simulation"); `settings` the simulation's (`simulate.des.DesSettings`)."""
    from dataclasses import replace

    if getattr(settings, "shared_queue", False):
        return None, "with a shared queue a replica need not take its share of the packets"
    free = replace(problem, resources=(), demand=())
    found, why = closed_form_bound(free, time_limit=time_limit, workers=workers, seed=seed, hint=hint, exact=True)
    if found is None:
        return None, why
    return replace(found, oracle="des", source="pipeline CP-SAT relaxation without contention"), None
