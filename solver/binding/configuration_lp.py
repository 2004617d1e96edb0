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
    MAX_CONFIGURATIONS,
    ConfigurationValues,
    Layout,
    NotApplicable,
    ThreadTypes,
    count_configurations,
    index_configurations,
)
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.errors import SolverFailed

SECONDS_PER_CONFIGURATION = 1.0e-5  # indexing, values and LP (measured: 1.65M on the T2, 16 s at load 6.7)


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
    # HiGHS works on values of order 1: throughputs of 1e7 packets/s with penalties of 1e10 make it
    # fail ("Solve error") on the 60-thread T2. Values are divided by the largest and the bound
    # multiplied back at the end; prices and reduced costs are in the same scaled unit.
    scale = max(1.0, max(float(v.max()) for v in values if len(v)))
    values = [v / scale for v in values]
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
        c = np.concatenate([[-values[g][j] for g, j in columns], np.full(K, big)])
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
            reduced = val - cnt @ prices
            lagrangian += multiplicity[g] * max(0.0, float(reduced.max()) if len(reduced) else 0.0)
            improving = reduced - kind_prices[g]
            top = np.argpartition(-improving, add)[:add] if len(improving) > add else np.arange(len(improving))
            candidates += [(float(improving[j]), g, int(j)) for j in top if improving[j] > 1e-9]
        best_bound = min(best_bound, lagrangian)
        fresh = [(g, j) for _, g, j in sorted(candidates, reverse=True) if (g, j) not in chosen][:add]
        if not fresh:
            artificial = float(result.x[n:].sum())
            converged = artificial <= 1e-9
            lp_value = -float(result.fun) if converged else None
            break
        for key in fresh:
            chosen.add(key)
            columns.append(key)
        if time_limit is not None and time.perf_counter() - start > time_limit:
            break
    lp_value = None if lp_value is None else lp_value * scale
    return best_bound * scale, lp_value, len(columns), iterations, converged


def enumeration_fits(problem: BindingProblem, max_configurations: int = MAX_CONFIGURATIONS) -> bool:
    """Whether the configurations of one domain are few enough to enumerate (True also where the
    bound does not apply at all: `configuration_bound` then says why)."""
    try:
        types = ThreadTypes.of(problem)
        layout = Layout.of(problem, types)
    except NotApplicable:
        return True
    return sum(count_configurations(types, layout, sizes) for sizes in layout.kinds) <= max_configurations


def enumeration_seconds(problem: BindingProblem) -> float:
    """The estimated time of `configuration_bound` (0 where the bound does not apply)."""
    try:
        types = ThreadTypes.of(problem)
        layout = Layout.of(problem, types)
    except NotApplicable:
        return 0.0
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
    evaluator = ConfigurationValues(problem, types, layout)
    counts, values, multiplicity = [], [], []
    for sizes, n_domains in layout.kinds.items():
        configs = index_configurations(types, layout, sizes)  # priced by index: no count matrix
        counts.append(configs)
        values.append(evaluator.value(configs))
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
        columns=columns,
        iterations=iterations,
        wall_time=time.perf_counter() - start,
        converged=converged,
        solution=solution,
    )
