"""A bound on the simulated optimum that measures what the fluid LP cannot rule out.

The fluid LP (`solver.certify.fluid_bound`) bounds each placement class from above; on specs where
deterministic work makes two threads start together it stays a few percent above the simulation
(docs/design.md, "A bound on the simulation": +4.4% and +8.0% on the two confined L1 variants of
the truth study), too loose to prove a plan 3% below the optimum.  Where the classes can be
enumerated (`fluid_max.enumerated_max`), a branch and bound over them closes that gap: each class
``c`` is bounded by

    ``U_c = min(LP_c, m_c + k h_c)``

with ``LP_c`` its fluid bound (rigorous), ``m_c`` its simulated figure and ``h_c`` its 95%
half-width, ``k = z(1 - alpha / N) / z(0.975)`` widening every half-width to a one-sided upper
limit that holds for all ``N`` allowed classes at once (Bonferroni, ``alpha = 1 - confidence``).
Then ``max_c U_c`` bounds the simulated optimum over every plan the spec allows.  Classes are
visited by their contention-free ceiling (`fluid_max.contention_free`, at least ``LP_c``),
best first; a class whose ceiling or LP is at most the bound so far needs no simulation, and the
walk ends when no ceiling left exceeds it.  Only the classes the LP cannot rule out are simulated,
through the run's one-measurement-per-class table (`solver.certify.measure.ClassOracle`, seeded by
class), so a class the sample already measured costs nothing.

Where the simulation is deterministic (every ``h_c = 0``, as on the IPFwd examples: fixed work,
no random arrivals) the bound is exact up to the LP's proven part; otherwise it holds at the
stated simultaneous confidence, and its `source` says so.  The walk gives up (returns None) when
the bound passes the plan's threshold (the largest bound that would still prove the plan: then no
complete walk could prove it either) or at the deadline: a partial walk bounds nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tasksolve.simulate.oracle import SimulationOracle
    from tasksolve.solver.certify.certification import Certification, Sample
    from tasksolve.solver.certify.measure import ClassOracle
    from tasksolve.solver.certify.truth import ClassTable
    from tasksolve.solver.pipeline.problem import PipelineProblem
    from tasksolve.specs import Spec

#: a half-width below this share of the figure is rounding: the measurement is exact (deterministic)
EXACT = 1e-9


@dataclass
class MeasuredBound:
    """An upper bound on the simulated optimum over every allowed placement class (packets/s),
    (a `solver.certify.bounds.Bound`)."""

    value: float
    metric: str
    classes: int  # allowed placement classes
    simulated: int  # classes whose bound is their measurement's upper limit (the LP could not rule them out)
    new: int  # of those, simulated for the bound (the rest were in the run's table)
    widening: float  # k: half-widths multiplied by this for the simultaneous upper limits
    confidence: float
    noisy: bool  # some measurement the bound uses has a non-zero half-width
    seconds: float
    oracle: str = "des"
    unit: str = "placement classes"  # what was enumerated (`measured_pipeline_bound`: pipeline plans)

    objective = None  # no solver plan's value
    proven_optimum = None  # measurements are never a proven optimum
    status = ""  # no solver ran
    failed_steps = ()
    plan_value = None  # no per-plan bound
    plan_note = None

    @property
    def source(self) -> str:
        limits = f", {self.confidence:.0%} simultaneous upper limits" if self.noisy else ""
        what = "fluid LP" if self.unit == "placement classes" else "contention-free closed form"
        return f"{what} and simulation ({self.simulated} of {self.classes} {self.unit} simulated{limits})"

    def to_dict(self) -> dict[str, object]:
        return {
            "oracle": self.oracle,
            "label": f"upper bound on the simulation's optimum ({self.source})",
            "value": self.value,
            "metric": self.metric,
            "method": "measured enumeration",
            "unit": self.unit,
            "classes": self.classes,
            "simulated": self.simulated,
            "simulated_for_bound": self.new,
            "widening": self.widening,
            "confidence": self.confidence,
            "seconds": self.seconds,
        }


def widening(classes: int, confidence: float = 0.95) -> float:
    """``k = z(1 - alpha / N) / z(0.975)``, ``alpha = 1 - confidence``: a 95% two-sided half-width
    (every oracle's, `simulate.measurement`) times ``k`` is a one-sided upper limit holding for all
    `classes` at once (Bonferroni).  The denominator is the half-width's own level, whatever
    `confidence` is asked for."""
    from scipy.stats import norm

    alpha = 1.0 - confidence
    return float(norm.ppf(1.0 - alpha / max(classes, 1)) / norm.ppf(0.975))


@dataclass
class _Walk:
    """What `_walk` found: the bound, how many items it rests on a measurement for, and whether
    any of those measurements is noisy."""

    best: float = -np.inf
    simulated: int = 0
    noisy: bool = False


def _walk(ceilings, k: float, measure, *, tighter=None, threshold: float, deadline: float | None) -> _Walk | None:
    """The branch and bound of the module docstring over items ``0..n-1`` visited by decreasing
    ceiling: an item's bound is its ceiling, or ``tighter(i, best)`` (at most it) when given, and
    where that exceeds the bound so far, ``min(bound, value + k * half_width)`` of
    ``measure(i) -> (value, half_width)``.  None past `threshold` or at `deadline`."""
    found = _Walk()
    for i in np.argsort(-np.asarray(ceilings, dtype=float), kind="stable"):
        if ceilings[i] <= found.best:
            break
        if (deadline is not None and time.monotonic() >= deadline) or found.best > threshold:
            return None
        cap = ceilings[i] if tighter is None else tighter(i, found.best)
        if cap <= found.best:
            continue
        value, hw = measure(i)
        upper = value + k * hw
        if upper < cap:
            found.simulated += 1
            found.noisy = found.noisy or hw > EXACT * abs(value)
        found.best = max(found.best, min(cap, upper))
    return None if found.best > threshold else found


def measured_bound(
    spec: Spec,
    oracle: ClassOracle | ClassTable,
    *,
    objective: str | None = None,
    settings=None,
    threshold: float = np.inf,
    deadline: float | None = None,
    confidence: float = 0.95,
) -> MeasuredBound | None:
    """The branch and bound of the module docstring over `spec`'s allowed classes, measuring on
    `oracle` (the run's `ClassOracle`, or a `truth.ClassTable` of every class); None when the classes are not enumerable, the bound passes
    `threshold`, or `deadline` (a `time.monotonic()` reading) comes first."""
    from tasksolve.simulate.des import DesSettings
    from tasksolve.simulate.model import binding_structure, compile_contexts
    from tasksolve.solver.certify.fluid_bound import plan_problem, solve_problem
    from tasksolve.solver.certify.fluid_max import CLASS_LIMIT, allowed_reps, contention_free
    from tasksolve.specs.counting import count_distinct
    from tasksolve.specs.symmetry import UsableTree

    objective = objective or spec.objective
    if spec.problem != "binding" or objective not in ("total_throughput", "min_throughput"):
        return None
    begin = time.perf_counter()
    count = count_distinct(
        UsableTree.of(spec.topology, spec.usable_contexts), len(spec.threads), max_work=50 * CLASS_LIMIT
    )
    if count is None or count > CLASS_LIMIT:
        return None
    reps = allowed_reps(spec)
    if not len(reps):
        return None
    settings = settings or DesSettings.from_spec(spec)
    structure = binding_structure(spec)
    k = widening(len(reps), confidence)
    fresh: list[bool] = []

    def lp(c: int, best: float) -> float:
        graph = compile_contexts(spec, reps[c], structure)
        return solve_problem(plan_problem(graph, settings), objective, enough=best).value

    def measure(c: int) -> tuple[float, float]:
        fresh.append(not oracle.has(reps[c]))
        m = oracle.evaluate_contexts([int(x) for x in reps[c]])
        return m.value(objective), float(m.natural_half_width(objective) or 0.0)

    ceiling = contention_free(spec, reps, objective)
    found = _walk(ceiling, k, measure, tighter=lp, threshold=threshold, deadline=deadline)
    if found is None:
        return None
    seconds = time.perf_counter() - begin
    return MeasuredBound(
        float(found.best), objective, len(reps), found.simulated, sum(fresh), k, confidence, found.noisy, seconds
    )


#: the most pipeline plans `measured_pipeline_bound` enumerates
PIPELINE_LIMIT = 5000


def measured_pipeline_bound(
    problem: PipelineProblem,
    oracle: SimulationOracle,
    *,
    seed: int = 0,
    threshold: float = np.inf,
    deadline: float | None = None,
    confidence: float = 0.95,
) -> MeasuredBound | None:
    """The same walk over every pipeline plan within the latency bound (`solver.pipeline.brute`'s
    space, which holds every plan the samples and the solvers reach), each plan's ceiling its
    contention-free closed form -- at least its simulated throughput (`solver.pipeline.bound`, "On
    the simulation"): plans with the highest ceilings are simulated (`oracle`, plan ``i`` of the
    walk seeded by ``class_seed(seed, ("pipeline plan", i))``) until no ceiling left exceeds the
    bound.  None with NPIRE synchronisation, a shared queue, more than `PIPELINE_LIMIT`
    candidates, past `threshold` or at `deadline`."""
    from dataclasses import replace

    from tasksolve.solver.certify.measure import class_seed
    from tasksolve.solver.pipeline.brute import every_candidate
    from tasksolve.solver.pipeline.candidates import check_candidate
    from tasksolve.solver.pipeline.evaluation import evaluate
    from tasksolve.solver.pipeline.plans import to_plan

    if problem.sync or oracle.settings.shared_queue:
        return None
    begin, free, plans = time.perf_counter(), replace(problem, resources=(), demand=()), []
    for visited, mapped in enumerate(every_candidate(problem)):
        if visited >= PIPELINE_LIMIT or (deadline is not None and time.monotonic() >= deadline):
            return None
        if not check_candidate(problem, mapped) and evaluate(problem, mapped).feasible:
            plans.append((evaluate(free, mapped).throughput, mapped))
    if not plans:
        return None
    plans.sort(key=lambda p: -p[0])  # plan i of the walk is the i-th by ceiling: its seed says so
    k = widening(len(plans), confidence)

    def measure(i: int) -> tuple[float, float]:
        m = oracle.evaluate(to_plan(problem, plans[i][1], "bound"), seed=class_seed(seed, ("pipeline plan", i)))
        return m.throughput, float(m.half_width or 0.0)

    found = _walk([p[0] for p in plans], k, measure, threshold=threshold, deadline=deadline)
    if found is None:
        return None
    seconds = time.perf_counter() - begin
    return MeasuredBound(
        float(found.best), "total_throughput", len(plans), found.simulated, found.simulated, k, confidence,
        found.noisy, seconds, unit="pipeline plans",
    )  # fmt: skip


def for_certification(cert: Certification, sample: Sample) -> MeasuredBound | None:
    """`measured_bound` (`measured_pipeline_bound` on a pipeline) for a certification
    (`solver.certify.certification`) where it can help: a plan measured on the simulation whose
    verdict on `sample` is not yet `proven`, before the finalists' climbs (a `proven` makes them
    unneeded), until the budget's `climb_deadline` (none without a budget); None elsewhere.  The
    walk stops once the bound could no longer prove the plan even without its half-width
    (`precise` may still narrow that)."""
    if cert.oracle_kind != "des" or cert.plan is None or cert.measured is None or cert.noisy is not None:
        return None
    pipeline = cert.service.pipeline
    if cert.minimize or (pipeline is None and cert.classes is None):
        return None
    deadline = cert.budget.climb_deadline
    if (deadline is not None and time.monotonic() >= deadline) or cert.judge(sample).decision.verdict == "proven":
        return None
    objective = cert.spec.objective
    gap = cert.target_gap
    threshold = cert.measured.natural(objective) / (1.0 - gap) if gap < 1 else np.inf
    options = {"threshold": threshold, "deadline": deadline, "confidence": cert.confidence}
    if pipeline is not None:
        return measured_pipeline_bound(pipeline, cert.oracle, seed=cert.service.seed, **options)
    return measured_bound(cert.spec, cert.classes, **options)
