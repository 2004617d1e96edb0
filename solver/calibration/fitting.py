"""Task demands fitted to measured throughputs: the closed form's parameters by least squares.

The model fitted is the closed form of `simulate.analytic` (docs/design.md, "Semantics every
oracle shares"): instance ``i`` of a plan has throughput ``clock / max_{t in i} work_t / rate_t``
with ``rate_t = min(1, min_r capacity_r / load_r)`` and ``load_r`` the summed ``demand`` of the
threads sharing r's domain.  Its parameters per task (application, task) are ``cycles`` and the
``demand`` on each resource the task lists (``fit_all_resources`` adds the others, from 0).

Given measured per-instance throughputs ``y_pi`` of plans ``p`` -- and, when the oracle reports
them (the simulation and the closed form do; a user's program does not), every thread's time per
packet ``s_pt = utilization / throughput of its instance`` (TSBSched's thread times, PPoPP'10
§3.3) -- the fit minimises ``sum_pi (log x_pi(theta) - log y_pi)^2 + sum_pt (log s_pt(theta) -
log s_pt)^2`` over ``theta = (log cycles, demands in [0, 1])`` with
`scipy.optimize.least_squares` (trust-region reflective, bounds).  The model is piecewise smooth:
a demand whose resource is never saturated in any plan does not change any prediction, so a
gradient method cannot move it from where it starts; the fit therefore runs from the spec's
values and from `starts` seeded random points and keeps the best (multi-start).  A parameter is
**identified** when moving it by 5% changes some prediction, every start that fits as well agrees
on it within 1% (a fit through the kinks of the max can have several exact solutions far apart),
and its 95% profile-likelihood interval lies within 5% of the value: holding it 5% lower or higher
and refitting all the others costs more than ``chi2(1, 0.95) / 2`` residual variances (Raue et
al., "Structural and practical identifiability analysis ... exploiting the profile likelihood",
Bioinformatics 25(15), 2009).  One that is not is reported as not identified by the experiments and keeps the spec's
value where that changes no prediction -- typically the demand on a resource no plan saturates,
or, from throughputs alone, the cycles of a thread that is never its instance's bottleneck.

``idle_demand`` (what a busy-polling task loads while it waits) is not part of the closed form,
so it cannot be fitted from it: the calibrated spec keeps each task's ratio of idle to busy
demand per resource.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from tasksolve.simulate.analytic import BatchModel
from tasksolve.specs import Spec

IDENTIFICATION_STEP = 0.05  # relative move of a parameter that must change a prediction
IDENTIFICATION_TOLERANCE = 1e-9  # ... by more than this (log-throughput)
POOR_FIT = 0.02  # rms relative error above which the fit is reported as poor
PROFILE_CHI2 = 3.841  # chi-squared quantile, 1 degree of freedom, 95%
EQUAL_COST = 1e-9  # two fits whose costs differ by less are equally good
AGREEMENT = 0.01  # equally good fits must agree on a parameter to this (relative)
SIGNIFICANT_DIGITS = 6  # of the values written into the calibrated spec
CYCLES_RANGE = 8.0  # random starts draw cycles within [prior / 8, prior * 8]
COMM_RANGE = (0.1, 1e5)  # cycles per message a fitted communication cost may take


@dataclass(frozen=True)
class Parameter:
    """One fitted number: a task's ``cycles`` or its ``demand`` on one resource, or the cycles of
    a message between threads sharing one level of the topology (``level``; app and task empty)."""

    app: str
    task: str
    resource: str | None  # None: cycles
    level: str | None = None  # a communication cost

    @property
    def name(self) -> str:
        if self.level is not None:
            return f"communication.{self.level}"
        what = "cycles" if self.resource is None else f"demand.{self.resource}"
        return f"{self.app}.{self.task}.{what}"


@dataclass
class FittedParameter:
    parameter: Parameter
    prior: float
    value: float
    identified: bool

    def to_dict(self) -> dict:
        return {
            "name": self.parameter.name,
            "app": self.parameter.app,
            "task": self.parameter.task,
            "resource": self.parameter.resource,
            "level": self.parameter.level,
            "prior": self.prior,
            "value": self.value,
            "identified": self.identified,
        }


@dataclass
class Fit:
    parameters: list[FittedParameter]
    residuals: np.ndarray  # relative errors of the fitted model, one per (plan, instance)
    prior_residuals: np.ndarray  # the same for the spec's own values
    starts: int
    cost: float

    @property
    def rms(self) -> float:
        return float(np.sqrt(np.mean(self.residuals**2))) if len(self.residuals) else 0.0

    @property
    def warning(self) -> str | None:
        """One sentence when the fitted model leaves an error above `POOR_FIT` (rms, relative)."""
        if self.rms <= POOR_FIT:
            return None
        return (
            f"the fitted closed form is still {self.rms:.1%} (rms) off the measurements: it may not describe "
            "this program, or the fit stopped in a poor local optimum (try more --starts or --plans); "
            "parameters called identified are so only around this fit"
        )

    @property
    def rms_before(self) -> float:
        return float(np.sqrt(np.mean(self.prior_residuals**2))) if len(self.prior_residuals) else 0.0

    @property
    def worse_than_spec(self) -> bool:
        """Whether the spec's own values describe the measurements better than the fit (rms):
        such a fit is not to be written without being forced."""
        return self.rms > self.rms_before * (1 + 1e-9) + 1e-12  # beyond rounding

    @property
    def identified(self) -> list[str]:
        return [p.parameter.name for p in self.parameters if p.identified]

    @property
    def worst(self) -> float:
        return float(np.max(np.abs(self.residuals))) if len(self.residuals) else 0.0


class ParameterSpace:
    """The map from a parameter vector to the closed form's per-thread arrays."""

    def __init__(
        self, spec: Spec, fit_all_resources: bool = False, fit_communication: bool = False, fit_tasks: bool = True
    ) -> None:
        self.spec = spec
        self.fit_tasks = fit_tasks
        self.model = BatchModel(spec)
        resources = [r.name for r in spec.topology.resources]
        self.resource_index = {name: r for r, name in enumerate(resources)}
        used_apps = {app for app, _ in spec.instances}
        self.parameters: list[Parameter] = []
        prior = []
        for app in sorted(used_apps) if fit_tasks else []:
            for task_name, task in spec.applications[app].tasks.items():
                self.parameters.append(Parameter(app, task_name, None))
                prior.append(float(task.work))  # the model's cycles are per packet: cycles x frequency
                for resource in resources:
                    if fit_all_resources or task.demand.get(resource, 0) > 0:
                        self.parameters.append(Parameter(app, task_name, resource))
                        prior.append(float(task.demand.get(resource, 0.0)))
        self.comm_levels: list[tuple[int, int]] = []  # (parameter, level index: -1 machine)
        for level, cycles in communication_priors(spec.topology) if fit_communication else []:
            self.comm_levels.append((len(self.parameters), spec.topology.level_index(level)))
            self.parameters.append(Parameter("", "", None, level))
            prior.append(cycles)
        self.prior = np.array(prior)
        self.is_cycles = np.array([p.resource is None for p in self.parameters])  # log-scaled
        self.is_comm = np.array([p.level is not None for p in self.parameters])
        index = {(p.app, p.task, p.resource): j for j, p in enumerate(self.parameters)}
        threads = spec.threads
        self.base_demand = np.zeros((len(threads), len(resources)))
        self.cycles_of = np.array([index[(t.app, t.task, None)] for t in threads] if fit_tasks else [], dtype=int)
        self.demand_slots: list[tuple[int, int, int]] = []  # (thread, resource, parameter)
        for n, thread in enumerate(threads):
            task = spec.applications[thread.app].tasks[thread.task]
            for resource, value in task.demand.items():
                self.base_demand[n, self.resource_index[resource]] = value
            for resource, r in self.resource_index.items():
                j = index.get((thread.app, thread.task, resource))
                if j is not None:
                    self.demand_slots.append((n, r, j))

    # theta: log cycles for cycles, the demand itself for demands
    def to_theta(self, values: np.ndarray) -> np.ndarray:
        return np.where(self.is_cycles, np.log(np.maximum(values, 1e-12)), values)

    def to_values(self, theta: np.ndarray) -> np.ndarray:
        return np.where(self.is_cycles, np.exp(theta), theta)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        log_prior = np.log(np.maximum(self.prior, 1e-12))
        low = np.where(self.is_cycles, log_prior - 4 * math.log(CYCLES_RANGE), 0.0)
        high = np.where(self.is_cycles, log_prior + 4 * math.log(CYCLES_RANGE), 1.0)
        # a message costs COMM_RANGE cycles at most; a spec's 0 (no section) is no scale to start from
        low = np.where(self.is_comm, math.log(COMM_RANGE[0]), low)
        high = np.where(self.is_comm, math.log(COMM_RANGE[1]), high)
        return low, high

    def model_with(self, values: np.ndarray) -> BatchModel:
        if not self.fit_tasks:
            return self.model.with_communication({level: values[j] for j, level in self.comm_levels})
        demand = self.base_demand.copy()
        for n, r, j in self.demand_slots:
            demand[n, r] = values[j]
        model = self.model.with_parameters(values[self.cycles_of], demand)
        if self.comm_levels:
            model = model.with_communication({level: values[j] for j, level in self.comm_levels})
        return model

    def predict(
        self, values: np.ndarray, plans: np.ndarray, with_times: bool = False, totals: bool = False
    ) -> np.ndarray:
        """Log of the per-instance throughputs (plans x instances; with `totals`, the total, plans
        x 1) of the closed form with these values, followed with `with_times` by the log of every
        thread's time per packet (cycles, plans x threads): one row per plan."""
        model = self.model_with(values)
        result = model.evaluate(plans)
        figures = [result.total[:, None] if totals else result.per_instance]
        if with_times:
            figures.append(model.times(plans).T)
        with np.errstate(divide="ignore"):
            return np.log(np.hstack(figures))


def communication_priors(topology) -> list[tuple[str, float]]:
    """The levels whose message cost calibration can fit, with the topology's own cycles: every
    level two threads can share, when the topology has a direct communication section or none
    (the cache form's latencies and hit rates are not one number per level: not fitted)."""
    from tasksolve.specs.topology import CacheCommunication

    comm = topology.communication
    if isinstance(comm, CacheCommunication):
        return []
    cycles = {} if comm is None else comm.cycles
    return [(name, float(cycles.get(name, 0.0))) for name in topology.shared_level_names]


def _step(space: ParameterSpace, j: int, value: float) -> float:
    """The 5% move of parameter j that identification tries (demands: at least 5% of the unit)."""
    return IDENTIFICATION_STEP * (value if space.is_cycles[j] else max(value, IDENTIFICATION_STEP))


def _changes(predict: Callable[[np.ndarray], np.ndarray], reference: np.ndarray, trial: np.ndarray) -> bool:
    """Whether the values `trial` change some prediction from `reference`."""
    return bool(np.max(np.abs(predict(trial) - reference)) > IDENTIFICATION_TOLERANCE)


def _sensitive(space: ParameterSpace, values: np.ndarray, predict) -> list[bool]:
    """Whether a 5% move of each parameter (up or down) changes some prediction."""
    reference = predict(values)
    out = []
    for j in range(len(values)):
        step = _step(space, j, values[j])
        moved = False
        for sign in (1, -1):
            trial = values.copy()
            trial[j] = max(0.0, trial[j] + sign * step)
            if not space.is_cycles[j]:
                trial[j] = min(trial[j], 1.0)
            if _changes(predict, reference, trial):
                moved = True
                break
        out.append(moved)
    return out


def _profile_determined(
    space: ParameterSpace, residuals, best, low: np.ndarray, high: np.ndarray, j: int, threshold: float
) -> bool:
    """Whether parameter j is determined within `IDENTIFICATION_STEP`: refitting every other
    parameter with j held 5% below and 5% above its fitted value costs more than `threshold`
    (the profile-likelihood test of identifiability, Raue et al., Bioinformatics 25(15), 2009)."""
    others = np.array([k for k in range(len(best.x)) if k != j])
    if len(others) == 0:
        return True
    value = space.to_values(best.x)[j]
    step = _step(space, j, value)
    for moved in (value - step, value + step):
        theta_j = math.log(moved) if space.is_cycles[j] else moved
        if not low[j] <= theta_j <= high[j]:
            continue
        full = best.x.copy()
        full[j] = theta_j

        def partial(sub: np.ndarray, full=full) -> np.ndarray:
            trial = full.copy()
            trial[others] = sub
            return residuals(trial)

        result = least_squares(
            partial,
            np.clip(best.x[others], low[others], high[others]),
            bounds=(low[others], high[others]),
            method="trf",
            x_scale="jac",
            diff_step=1e-4,
            max_nfev=100 * len(others),
        )
        if result.cost - best.cost <= threshold:
            return False
    return True


def _ambiguous(space: ParameterSpace, results: list, best) -> list[bool]:
    """Whether another start reached an equally good fit (cost within `EQUAL_COST`) with this
    parameter more than `AGREEMENT` (relative) away: the measurements do not decide between them."""
    tied = [r for r in results if r.cost <= best.cost * (1 + EQUAL_COST) + EQUAL_COST]
    values = np.array([space.to_values(r.x) for r in tied])
    scale = np.maximum(np.abs(values).max(axis=0), 1e-9)
    return ((values.max(axis=0) - values.min(axis=0)) / scale > AGREEMENT).tolist()


def _prior_where_free(space: ParameterSpace, values: np.ndarray, identified: list[bool], predict) -> np.ndarray:
    """The fitted values, with the spec's own value back in every parameter the experiments do
    not identify, where that changes no prediction (a free parameter's fitted value is only where
    its start was)."""
    out = values.copy()
    reference = predict(values)
    for j in np.flatnonzero(~np.array(identified, dtype=bool)):
        trial = out.copy()
        trial[j] = space.prior[j]
        if not _changes(predict, reference, trial):
            out = trial
    return out


def fit(
    spec: Spec,
    plans: np.ndarray,
    measured: np.ndarray,
    times: np.ndarray | None = None,
    *,
    starts: int = 8,
    seed: int = 0,
    fit_all_resources: bool = False,
    fit_communication: bool = False,
    fit_tasks: bool = True,
) -> Fit:
    """Fit the closed form's cycles and demands to `measured` throughputs -- per instance (plans x
    instances, in `spec.instances` order), or the total (plans x 1) when that is all the oracle
    reports -- and, when the oracle reports them, every thread's time per packet `times` (plans x
    threads, cycles; module docstring).  `fit_communication` adds the cycles of a message at each
    level (`communication_priors`); with the tasks' cycles fitted too, a shift of every level's
    cost taken off its consumers' cycles changes no prediction, so only the differences between
    levels are identified (and the output says so); `fit_tasks=False` holds the tasks at the
    spec's values and fits the communication alone."""
    space = ParameterSpace(spec, fit_all_resources, fit_communication, fit_tasks)
    if not space.parameters:
        raise ValueError("nothing to fit: no task parameter and no communication level")
    plans = np.asarray(plans, dtype=np.intp)
    measured = np.asarray(measured, dtype=float)
    n_instances = len(spec.instances)
    if measured.ndim != 2 or len(measured) != len(plans) or measured.shape[1] not in (1, n_instances):
        raise ValueError(
            f"measured has shape {measured.shape}, expected ({len(plans)}, {n_instances}) or ({len(plans)}, 1)"
        )
    totals = measured.shape[1] == 1 and n_instances > 1
    with_times = times is not None
    observed = np.log(np.hstack([measured, times]) if with_times else measured).ravel()

    def predict(values: np.ndarray) -> np.ndarray:
        return space.predict(values, plans, with_times, totals).ravel()

    def residuals(theta: np.ndarray) -> np.ndarray:
        return predict(space.to_values(theta)) - observed

    low, high = space.bounds()
    rng = np.random.default_rng(seed)
    first = np.clip(space.to_theta(space.prior), low, high)
    points = [first] + [rng.uniform(low, high) for _ in range(starts)]
    tasks = space.is_cycles & ~space.is_comm
    for point in points[1:]:  # random cycles near the spec's: within CYCLES_RANGE
        spread = math.log(CYCLES_RANGE)
        point[tasks] = first[tasks] + rng.uniform(-spread, spread, int(tasks.sum()))
    results = [
        least_squares(
            residuals, point, bounds=(low, high), method="trf", x_scale="jac", diff_step=1e-4, max_nfev=100 * len(point)
        )
        for point in points
    ]
    best = min(results, key=lambda r: r.cost)
    values = space.to_values(best.x)
    sensitive = _sensitive(space, values, predict)
    ambiguous = _ambiguous(space, results, best)
    # a 95% profile interval: the cost may rise by chi2(1, 0.95) / 2 residual variances
    variance = 2.0 * best.cost / max(1, len(best.fun) - len(best.x))
    threshold = max(PROFILE_CHI2 / 2.0 * variance, EQUAL_COST)
    identified = [
        bool(sensitive[j] and not ambiguous[j] and _profile_determined(space, residuals, best, low, high, j, threshold))
        for j in range(len(values))
    ]
    final = _prior_where_free(space, values, identified, predict)
    fitted = [
        FittedParameter(p, float(space.prior[j]), float(final[j]), identified[j])
        for j, p in enumerate(space.parameters)
    ]
    relative = np.exp(space.predict(final, plans, totals=totals)) / measured - 1.0
    prior_relative = np.exp(space.predict(space.prior, plans, totals=totals)) / measured - 1.0
    return Fit(fitted, relative.ravel(), prior_relative.ravel(), len(points), float(best.cost))


def calibrated_spec(spec: Spec, parameters: list[FittedParameter]) -> Spec:
    """The spec with the fitted values, to `SIGNIFICANT_DIGITS` (idle demands keep their ratio to
    the busy demand)."""
    data = spec.model_dump(by_alias=True, exclude_none=True)
    comm = {f.parameter.level: float(f"{f.value:.{SIGNIFICANT_DIGITS}g}") for f in parameters if f.parameter.level}
    if comm:
        data["topology"]["communication"] = {"model": "direct", "cycles": comm}
    for fitted in parameters:
        p = fitted.parameter
        if p.level is not None:
            continue
        value = float(f"{fitted.value:.{SIGNIFICANT_DIGITS}g}")
        task = data["applications"][p.app]["tasks"][p.task]
        if p.resource is None:  # the fitted work per packet, back to cycles per visit
            task["cycles"] = float(f"{fitted.value / task.get('frequency', 1.0):.{SIGNIFICANT_DIGITS}g}")
            continue
        if p.resource in task.get("idle_demand", {}) and fitted.prior > 0:
            idle = min(1.0, task["idle_demand"][p.resource] * fitted.value / fitted.prior)
            task["idle_demand"][p.resource] = float(f"{idle:.{SIGNIFICANT_DIGITS}g}")
        if value > 0 or p.resource in task["demand"]:
            task["demand"][p.resource] = value
    return Spec.model_validate(data)
