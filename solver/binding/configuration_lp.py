"""An upper bound on total throughput: the configuration LP, solved by column generation.

The configurations of one sharing domain and their values are `solver.binding.configurations`'s
(its docstring states the model and why each value is an upper bound).

**Bound** (Gilmore & Gomory's configuration LP, solved by column generation -- Desrosiers &
Luebbecke, "A primer in column generation", 2005): choose how many L-domains of each kind take
each configuration, so that every thread type is placed exactly as often as the spec has it::

    maximise   sum_j v_j lambda_j
    subject to sum_j n_kj lambda_j = N_k   for every thread type k
               sum_{j of kind g} lambda_j <= m_g   (m_g L-domains of kind g)
               lambda >= 0

For any prices ``pi`` the Lagrangian value ``pi . N + sum_g m_g max(0, max_j (v_j - n_j . pi))``
is an upper bound on the LP, hence on every plan (weak duality); the bound reported is the least
of these over the column-generation iterations, and equals the LP optimum when the pricing finds
no improving configuration.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linprog

from tasksolve.solver.binding.configurations import (
    CHUNK,
    MAX_CONFIGURATIONS,
    ConfigurationValues,
    IndexedConfigurations,
    Layout,
    NotApplicable,
    ThreadTypes,
    count_configurations,
    index_configurations,
)
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.errors import SolverFailed

PRICING_BATCH = 8192  # configurations valued exactly at a time by partial pricing (`LazyValues`)
SECONDS_PER_CONFIGURATION = 6e-6  # indexing, partial pricing and LP (1.65M on the T2: 8.4 s at load 6.5)


class ConfigurationLPFailed(SolverFailed):
    """The configuration LP applies but its solver failed (the message has HiGHS's status)."""


@dataclass
class ConfigurationBound:
    """The bound and how it was obtained."""

    value: float  # upper bound on total throughput (packets/s)
    lp_value: float | None  # the configuration LP's optimum (None if not reached)
    level: str  # the level whose domains the configurations describe
    configurations: int
    columns: int
    iterations: int
    wall_time: float
    converged: bool
    source: str = "configuration LP"  # or "level LP" (`solver.binding.level_lp`)
    valued: int | None = None  # configurations whose exact value pricing needed (None: all)
    # the last LP's columns: (cell sizes of the kind, (cells, types) counts, lambda, value)
    solution: list[tuple[tuple[int, ...], np.ndarray, float, float]] = field(default_factory=list, repr=False)


def column_generation(
    counts: list[np.ndarray],
    values: list[np.ndarray],
    multiplicity: list[int],
    demand: np.ndarray,
    max_iterations: int = 500,
    add: int = 64,
    time_limit: float | None = None,
    solution: list[tuple[int, int, float]] | None = None,
) -> tuple[float, float | None, int, int, bool]:
    """Lagrangian bound of the configuration LP (module docstring).

    `counts[g]` (configs, K) -- an array, or `configurations.IndexedConfigurations` -- and
    `values[g]` describe kind g, which `multiplicity[g]` L-domains have.  Returns (bound, LP
    optimum or None, columns, iterations, converged); `solution`, when given, receives the last
    LP's columns as (kind, configuration, lambda).
    """
    start = time.perf_counter()
    K = len(demand)
    scale = _scale(values)
    big = 10.0 * max(1, int(demand.sum()))
    columns: list[tuple[int, int]] = []  # (kind, index)
    chosen: set[tuple[int, int]] = set()
    best_bound = math.inf
    lp_value = None
    converged = False
    iterations = 0
    while iterations < max_iterations:
        iterations += 1
        n = len(columns)
        c = np.concatenate([[-values[g][j] / scale for g, j in columns], np.full(K, big)])
        a_eq = np.zeros((K, n + K))
        a_ub = np.zeros((len(values), n + K))
        for col, (g, j) in enumerate(columns):
            a_eq[:, col] = counts[g][j]
            a_ub[g, col] = 1.0
        a_eq[:, n:] = np.eye(K)
        result = linprog(
            c,
            A_ub=a_ub,
            b_ub=np.array(multiplicity, dtype=float),
            A_eq=a_eq,
            b_eq=demand.astype(float),
            bounds=(0, None),
            method="highs",
        )
        if result.status != 0:
            raise ConfigurationLPFailed(f"the configuration LP failed: {result.message}")
        if solution is not None:
            solution[:] = [(g, j, float(v)) for (g, j), v in zip(columns, result.x[:n])]
        prices = -np.asarray(result.eqlin.marginals)
        kind_prices = -np.asarray(result.ineqlin.marginals)
        lagrangian = float(prices @ demand)
        candidates = []
        for g, (cnt, val) in enumerate(zip(counts, values)):
            reduced, choosable = _reduced(val, cnt @ prices, kind_prices[g], scale)
            lagrangian += multiplicity[g] * max(0.0, float(reduced.max()) if len(reduced) else 0.0)
            improving = choosable - kind_prices[g]
            top = np.argpartition(-improving, add)[:add] if len(improving) > add else np.arange(len(improving))
            candidates += [(float(improving[j]), g, int(j)) for j in top if improving[j] > 1e-9]
        best_bound = min(best_bound, lagrangian)
        fresh = [(g, j) for _, g, j in sorted(candidates, reverse=True) if (g, j) not in chosen][:add]
        if not fresh:
            artificial = float(result.x[n:].sum())
            converged = artificial <= 1e-9
            lp_value = -float(result.fun) if converged else None
            if converged:  # no improving column: the restricted LP's optimum is the LP's
                best_bound = min(best_bound, lp_value)
            break
        for key in fresh:
            chosen.add(key)
            columns.append(key)
        if time_limit is not None and time.perf_counter() - start > time_limit:
            break
    lp_value = None if lp_value is None else lp_value * scale
    return best_bound * scale, lp_value, len(columns), iterations, converged


class LazyValues:
    """The values of one kind's configurations, computed when pricing needs them (pricing by
    bounds): `ConfigurationValues.upper` for every configuration at once, the exact value only
    for those whose upper bound prices positive -- a configuration whose upper bound's reduced
    cost is not positive cannot improve the LP, so the LP is the enumerated one."""

    def __init__(self, evaluator: ConfigurationValues, configs: IndexedConfigurations) -> None:
        self.evaluator = evaluator
        self.configs = configs
        self.upper = evaluator.upper(configs)
        self.exact = np.full(len(configs), np.nan)

    def __len__(self) -> int:
        return len(self.exact)

    def __getitem__(self, j: int) -> float:
        self.evaluate(np.array([j]))
        return float(self.exact[j])

    def evaluate(self, rows: np.ndarray) -> None:
        """The exact values of `rows` not known yet."""
        rows = rows[np.isnan(self.exact[rows])]
        for start in range(0, len(rows), CHUNK):
            part = rows[start : start + CHUNK]
            self.exact[part] = self.evaluator.value(self.configs.cells(part))

    @property
    def evaluated(self) -> int:
        return int(np.count_nonzero(~np.isnan(self.exact)))


def _top(values) -> float:
    return float(values.upper.max()) if isinstance(values, LazyValues) else float(values.max())


def _scale(values) -> float:
    """The unit of the LP's values: HiGHS works on values of order 1 (throughputs of 1e7 packets/s
    with penalties of 1e10 make it fail, "Solve error", on the 60-thread T2), so values are
    divided by the largest and the bound multiplied back at the end; prices and reduced costs are
    in the same unit.  Small values are scaled up alike (a capacity of 1e-300 gives 1e-293
    packets/s: HiGHS's absolute tolerances would read those as 0)."""
    top = max((float(_top(v)) for v in values if len(v)), default=0.0)
    return top if top > 0 else 1.0


def _reduced(values, priced: np.ndarray, kind_price: float, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """``v_j / scale - n_j . pi`` of every configuration (for the Lagrangian value) and the same
    where a column may be chosen (-inf elsewhere).  With `LazyValues` (partial pricing), the
    configurations whose upper bound could improve (reduced cost past the kind's price) are
    valued exactly, `PRICING_BATCH` at a time, largest upper bound first, until one improves or
    none is left; the others keep their upper bound (so the Lagrangian value stays a bound) and
    cannot be chosen."""
    if not isinstance(values, LazyValues):
        reduced = values / scale - priced
        return reduced, reduced
    upper = values.upper / scale - priced
    while True:
        open_rows = np.nonzero(np.isnan(values.exact) & (upper - kind_price > 1e-9))[0]
        if len(open_rows) > PRICING_BATCH:
            open_rows = open_rows[np.argpartition(-upper[open_rows], PRICING_BATCH)[:PRICING_BATCH]]
        values.evaluate(open_rows)
        known = ~np.isnan(values.exact)
        exact = np.where(known, values.exact / scale - priced, -np.inf)
        if len(open_rows) == 0 or (exact - kind_price > 1e-9).any():
            return np.where(known, exact, upper), exact


def enumeration_fits(problem: BindingProblem, max_configurations: int = MAX_CONFIGURATIONS) -> bool:
    """Whether the configurations of one domain are few enough to enumerate."""
    types = ThreadTypes.of(problem)
    layout = Layout.of(problem, types)
    return sum(count_configurations(types, layout, sizes) for sizes in layout.kinds) <= max_configurations


def enumeration_seconds(problem: BindingProblem) -> float:
    """The estimated time of `configuration_bound`'s enumeration (`SECONDS_PER_CONFIGURATION` each)."""
    types = ThreadTypes.of(problem)
    layout = Layout.of(problem, types)
    return SECONDS_PER_CONFIGURATION * sum(count_configurations(types, layout, sizes) for sizes in layout.kinds)


def configuration_bound(
    problem: BindingProblem,
    *,
    objective: str | None = None,
    max_configurations: int = MAX_CONFIGURATIONS,
    time_limit: float | None = None,
) -> ConfigurationBound:
    """The configuration LP bound on total throughput (packets/s); raises `NotApplicable`."""
    start = time.perf_counter()
    objective = objective or problem.spec.objective
    if objective != "total_throughput":
        raise NotApplicable(f"bounds only the total-throughput objective (here: {objective})")
    types = ThreadTypes.of(problem)
    layout = Layout.of(problem, types)
    size = sum(count_configurations(types, layout, sizes) for sizes in layout.kinds)
    if size > max_configurations:
        raise NotApplicable(
            f"{size:,} configurations of a {problem.topology.level_names[layout.level]} "
            f"exceed the limit of {max_configurations:,}"
        )
    estimate = size * SECONDS_PER_CONFIGURATION
    if time_limit is not None and estimate > time_limit:
        raise NotApplicable(
            f"enumerating {size:,} configurations would take about {estimate:.0f} s, more than the "
            f"{time_limit:.0f} s left"
        )
    counts, values, multiplicity = [], [], []
    for sizes, n_domains in layout.kinds.items():
        configs = index_configurations(types, layout, sizes)  # priced by index: no count matrix
        counts.append(configs)
        evaluator = ConfigurationValues(problem, types, layout, sizes)  # its kinds of core
        evaluator.deadline = None if time_limit is None else start + time_limit  # then valued by `upper`
        values.append(LazyValues(evaluator, configs))  # valued when pricing needs it
        multiplicity.append(n_domains)
    remaining = None if time_limit is None else max(1.0, time_limit - (time.perf_counter() - start))
    positive: list[tuple[int, int, float]] = []
    bound, lp_value, columns, iterations, converged = column_generation(
        counts, values, multiplicity, types.count.astype(float), time_limit=remaining, solution=positive
    )
    kinds = list(layout.kinds)
    solution = [(kinds[g], counts[g].cells(np.array([j]))[0], lam, float(values[g][j])) for g, j, lam in positive]
    return ConfigurationBound(
        value=bound * (1 + 1e-9),
        lp_value=lp_value,
        level=problem.topology.level_names[layout.level],
        configurations=int(sum(len(v) for v in values)),
        valued=int(sum(v.evaluated for v in values)),
        columns=columns,
        iterations=iterations,
        wall_time=time.perf_counter() - start,
        converged=converged,
        solution=solution,
    )
