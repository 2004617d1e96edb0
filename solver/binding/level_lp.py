"""A bound on total throughput that scales with the machine's symmetry: the level-decomposed LP.

The configuration LP (`solver.binding.configuration_lp`) prices configurations of a whole
L-domain (a socket and its L3); their number grows exponentially with the cores in it, so it is
enumerated only up to `configurations.MAX_CONFIGURATIONS`.  Here the L-domain is decomposed by
level (Dantzig-Wolfe on the socket, Gilmore & Gomory 1961 for the configurations): a *cell
configuration* is the multiset of thread types one cell (a core) holds, and the L-domain is a
count of cells per configuration linked by the L-level loads.

**Relaxation** (each step keeps every plan feasible and never lowers its value):

1. *Rates, not instances.*  An instance runs at its slowest thread, ``clock / max_t E_t``; summed
   over the instances of application a, ``sum_i min_{t in i} r_t <= min_k sum_{t of type k} r_t``
   (``r_t = clock / E_t``): the LP maximises ``sum_a w_a`` with ``w_a <= R_k`` for each type k
   of a, ``R_k`` the summed rates of type k.
2. *Modes of the L-level load.*  The slowdown from an L-level resource depends on the L-domain's
   load, a sum over its cells.  Each L-domain takes a *mode* j: its load lies in
   ``[a_j, a_{j+1}]`` (per L-level resource; ``a_1`` the capacity, then a geometric grid of
   ratio ``1 + delta``), and its threads are credited the slowdown of the mode's lower end
   ``a_j`` -- never more than the real one.
3. *Messages.*  A thread whose producer's type shares its cell pays the cheaper of the cheapest
   in-cell cost and the cheapest cost outside the cell (the producer there may be another
   instance's, and a topology may price an inner level above an outer one), for as many of its
   type as there are producers there, the cheap edges clustered on the same threads: the largest
   sum of rates, 1/x being convex; any other pays the cheapest cost outside the cell.
4. Pins, forbids, ``latency_max``, caps other than those on L and on the cells, and loads of
   levels below the cells (a thread's own demand counts there) are left out.

The LP (variables ``z[g,j]``: L-domains of kind g in mode j; ``y[g,j,s,c]``: cells of size s
with configuration c in them; ``w_a``)::

    max  sum_a w_a
    s.t. w_a - sum y[g,j,s,c] rate[c,j,k] <= 0                  every type k of application a
         sum y[g,j,s,c] n[c,k] = N_k                             every type k
         sum_c y[g,j,s,c] = cells[g,s] z[g,j]                    every g, j, s
         sum_j z[g,j] = m_g                                      every kind g
         a_j z[g,j] <= sum_{s,c} y[g,j,s,c] load[c] <= a_{j+1} z[g,j]   every g, j, L-resource
         sum_{s,c} y[g,j,s,c] |c| <= cap_L z[g,j]                (max_threads on L)

Any plan gives an integer point (z counts the L-domains by mode, y their cells by
configuration) whose objective is at least the plan's value, so the LP optimum bounds every plan.

**Column generation** (Desrosiers & Luebbecke, "A primer in column generation", 2005): the
``y`` columns are priced by their reduced costs (all of them at once: a column is one cell of one
mode, so pricing is a vectorised scan); at every iteration the Lagrangian value
``b . pi + sum_col U_col max(0, reduced_col)`` (``U_col = cells[g,s] m_g`` bounds a column) bounds
the LP, hence every plan; the bound reported is the least of them, the LP optimum on convergence.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from tasksolve.solver.binding.configuration_lp import ConfigurationBound, ConfigurationLPFailed
from tasksolve.solver.binding.configurations import Layout, NotApplicable, ThreadTypes, _multisets, domain_cells
from tasksolve.solver.binding.problem import BindingProblem

MAX_MODES = 400  # modes per L-domain kind (the grid's ratio grows to fit)
MIN_RATIO = 0.001  # the finest grid: a mode's lower end is within 0.1% of its load
MAX_COLUMNS = 2_000_000  # kinds x modes x cell configurations priced at each iteration
MAX_MIP_COLUMNS = 60_000  # the integer-mode MIP holds every column: larger ones are not tried
LP_TOLERANCE = 1e-6  # HiGHS solves to ~1e-7 feasibility on values scaled to 1: bounds are widened by this
MIP_GAP = 1e-4  # HiGHS's relative gap at which the integer-mode MIP stops (its dual bound is used)
BIG = 10.0  # the artificial variables' penalty per unit (rates are scaled to at most 1)


@dataclass
class LevelLP:
    """The LP's data: columns (kind, mode, cell size, configuration), their rows, the right sides."""

    types: ThreadTypes
    modes: list[np.ndarray]  # per mode: lower ends (per L-resource) then upper ends
    kinds: list[tuple[int, dict]]  # (L-domains, {cell key: cells}); a cell key is its size (`cell_key`)
    configs: dict  # cell key -> (configs, K) counts
    rates: dict  # cell key -> (modes, configs, K) summed rates
    loads: dict  # cell key -> (configs, R_L) L-level loads
    domain_cap: int | None
    scale: float  # rates are divided by it

    @property
    def n_types(self) -> int:
        return len(self.types.names)


def _modes(
    problem: BindingProblem, types: ThreadTypes, layout: Layout, max_modes: int
) -> tuple[list[int], list[np.ndarray]]:
    """The L-level resources and the grid of modes (lower and upper ends per resource)."""
    topo = problem.topology
    resources = [j for j, r in enumerate(topo.resources) if topo.level_index(r.level) == layout.level]
    resources = [j for j in resources if (types.demand[:, j] > 0).any()]
    grids = []
    for j in resources:
        cap = topo.resources[j].capacity
        top = float(types.count @ types.demand[:, j]) * (1 + 1e-9) + 1e-9
        ratio = MIN_RATIO
        if top > cap:
            while math.log(top / cap) / math.log1p(ratio) + 2 > max_modes ** (1 / len(resources)):
                ratio *= 1.5
            steps = int(math.ceil(math.log(top / cap) / math.log1p(ratio)))
            points = [0.0] + [cap * (1 + ratio) ** i for i in range(steps + 1)]
        else:
            points = [0.0, max(cap, top)]
        grids.append([(points[i], points[i + 1]) for i in range(len(points) - 1)])
    modes = [np.array([low for low, _ in combo] + [high for _, high in combo]) for combo in itertools.product(*grids)]
    return resources, modes


CellKey = int | tuple[int, tuple[int, ...]]


def cell_key(topology, cell: list[int]) -> CellKey:
    """What tells cells apart: their usable contexts' count, and on a topology with kinds of core
    (`specs.cpu_kinds`) the kinds among them -- ``(size, kinds)``; a cell's types run at the
    fastest of its kinds (exact for a cell of one kind, a core; never slower than the truth)."""
    if not topology.kinds:
        return len(cell)
    return len(cell), tuple(sorted({topology.context_kinds[c] for c in cell}))


def cell_size(key: CellKey) -> int:
    return key if isinstance(key, int) else key[0]


def cell_signature(topology, cells: list[list[int]]) -> tuple:
    """An L-domain's cells as ((cell key, how many), ...), largest key first (`cell_key`)."""
    return tuple(sorted(Counter(cell_key(topology, cell) for cell in cells).items(), reverse=True))


def domain_classes(problem: BindingProblem, layout: Layout) -> list[tuple[int, dict[CellKey, int]]]:
    """The L-domains grouped by their cells: (L-domains, {cell key: cells}), in domain order."""
    signatures = Counter(
        cell_signature(problem.topology, cells) for cells in domain_cells(problem, layout.level, layout.cell_level)
    )
    return [(m, dict(signature)) for signature, m in signatures.items()]


def _cell_rates(
    problem: BindingProblem, types: ThreadTypes, layout: Layout, configs: np.ndarray, modes, resources, key: CellKey
) -> np.ndarray:
    """Summed rates ``clock / (W S)`` of each type in each configuration and mode: (modes, configs, K);
    a type's cycles are those of the fastest kind of core in the cell (`cell_key`)."""
    topo = problem.topology
    caps = np.array([r.capacity for r in topo.resources], dtype=float)
    levels = [topo.level_index(r.level) for r in topo.resources]
    machine_load = types.count @ types.demand
    n, K = configs.shape
    slow = np.ones((n, K))
    for r, level in enumerate(levels):
        users = types.demand[:, r] > 0
        if not users.any() or level == layout.level:
            continue
        if level < 0:
            load = np.full((n, 1), machine_load[r])
        elif level == layout.cell_level:
            load = (configs @ types.demand[:, r])[:, None]
        else:  # below the cells: only the thread's own demand is known
            load = types.demand[None, :, r]
        ratio = np.broadcast_to(load / caps[r], (n, K))
        slow[:, users] = np.maximum(slow[:, users], ratio[:, users])
    cycles = types.cycles if isinstance(key, int) else types.kind_cycles[:, list(key[1])].min(axis=1)
    inverse_work = np.zeros((n, K))  # sum over the type's threads in the cell of 1 / W
    outside = {size: min(layout.cost_same_domain[size], layout.cost_across[size]) for size in layout.cost_across}
    for k in range(K):
        for i in range(int(configs[:, k].max(initial=0))):
            has = configs[:, k] > i
            work = np.full(n, cycles[k])
            for producer, size, w in types.in_edges[k]:
                # a producer of its type in the cell may be another instance's: the thread's own
                # producer can be elsewhere, so the cheaper of the two (costs may rise inward)
                cheap = configs[:, producer] > i
                work += np.where(cheap, min(layout.cost_same_cell[size], outside[size]), outside[size]) * w
            inverse_work[has, k] += 1.0 / work[has]
    out = np.empty((len(modes), n, K))
    for j, mode in enumerate(modes):
        s = slow.copy()
        for q, r in enumerate(resources):
            users = types.demand[:, r] > 0
            s[:, users] = np.maximum(s[:, users], mode[q] / caps[r])
        out[j] = float(topo.clock) * inverse_work / s
    return out


def build(problem: BindingProblem, max_modes: int | None = None) -> LevelLP:
    """The LP's data for a problem (raises `NotApplicable` when the decomposition does not apply);
    `max_modes` (default `MAX_MODES`) caps the modes of the L-level load."""
    types = ThreadTypes.of(problem)
    layout = Layout.of(problem, types)
    if layout.cell_level is None:
        raise NotApplicable("the level LP needs cells (a level between the L-domains and the contexts)")
    resources, modes = _modes(problem, types, layout, max_modes or MAX_MODES)
    kinds = domain_classes(problem, layout)
    cell_sizes = sorted({s for _, cells in kinds for s in cells})
    configs, rates, loads = {}, {}, {}
    for size in cell_sizes:
        cap = min(cell_size(size), layout.cell_cap) if layout.cell_cap is not None else cell_size(size)
        if math.comb(len(types.names) + cap, cap) * len(kinds) * len(modes) > MAX_COLUMNS:  # before building
            raise NotApplicable(f"cells of {size} contexts have too many configurations for the level LP")
        configs[size] = _multisets(len(types.names), cap, types.count).astype(float)
    columns = len(kinds) * len(modes) * sum(len(c) for c in configs.values())
    if columns > MAX_COLUMNS:
        raise NotApplicable(f"{columns:,} level-LP columns exceed the limit of {MAX_COLUMNS:,}")
    for size in cell_sizes:
        rates[size] = _cell_rates(problem, types, layout, configs[size], modes, resources, size)
        loads[size] = configs[size] @ types.demand[:, resources] if resources else np.zeros((len(configs[size]), 0))
    scale = max(1.0, max(float(r.max()) for r in rates.values()))
    rates = {s: r / scale for s, r in rates.items()}
    return LevelLP(types, modes, kinds, configs, rates, loads, layout.domain_cap, scale)


# ----------------------------------------------------------------------------- the LP
class _Rows:
    """Row indices: rates (K), counts (K), cells (g, j, s), domains (g), loads (g, j, r, lo/hi), caps (g, j)."""

    def __init__(self, lp: LevelLP) -> None:
        K, M = lp.n_types, len(lp.modes)
        self.R = len(lp.modes[0]) // 2 if lp.modes else 0
        self.cells = {}
        eq = K
        for g, (_, cells) in enumerate(lp.kinds):
            for j in range(M):
                for s in cells:
                    self.cells[(g, j, s)] = eq
                    eq += 1
        self.domains = {g: eq + g for g in range(len(lp.kinds))}
        self.n_eq = eq + len(lp.kinds)
        ub = K
        self.loads = {}
        self.caps = {}
        for g in range(len(lp.kinds)):
            for j in range(M):
                self.loads[(g, j)] = ub
                ub += 2 * self.R
                if lp.domain_cap is not None:
                    self.caps[(g, j)] = ub
                    ub += 1
        self.n_ub = ub


def _y_block(lp: LevelLP, rows: _Rows, g: int, j: int, s: int, index: np.ndarray):
    """The equality and inequality coefficients of columns y[g, j, s, index] (dense, columns last)."""
    K = lp.n_types
    counts = lp.configs[s][index]
    n = len(index)
    a_eq = np.zeros((rows.n_eq, n))
    a_eq[:K] = counts.T
    a_eq[rows.cells[(g, j, s)]] = 1.0
    a_ub = np.zeros((rows.n_ub, n))
    a_ub[:K] = -lp.rates[s][j][index].T
    base = rows.loads[(g, j)]
    for q in range(rows.R):
        a_ub[base + 2 * q] = -lp.loads[s][index, q]  # a_j z - load <= 0
        a_ub[base + 2 * q + 1] = lp.loads[s][index, q]  # load - a_{j+1} z <= 0
    if (g, j) in rows.caps:
        a_ub[rows.caps[(g, j)]] = counts.sum(axis=1)
    return a_eq, a_ub


def _fixed_block(lp: LevelLP, rows: _Rows):
    """Columns always present: w_a (one per application), z[g, j], artificials on the counts."""
    K, M = lp.n_types, len(lp.modes)
    apps = list(lp.types.apps.values())
    n_z = len(lp.kinds) * M
    n = len(apps) + n_z + K
    cost = np.zeros(n)
    a_eq = np.zeros((rows.n_eq, n))
    a_ub = np.zeros((rows.n_ub, n))
    for a, roles in enumerate(apps):
        cost[a] = -1.0
        for k in roles:
            a_ub[k, a] = 1.0
    for g, (_, cells) in enumerate(lp.kinds):
        for j in range(M):
            col = len(apps) + g * M + j
            for s, n_cells in cells.items():
                a_eq[rows.cells[(g, j, s)], col] = -n_cells
            a_eq[rows.domains[g], col] = 1.0
            base = rows.loads[(g, j)]
            for q in range(rows.R):
                a_ub[base + 2 * q, col] = lp.modes[j][q]
                a_ub[base + 2 * q + 1, col] = -lp.modes[j][rows.R + q]
            if (g, j) in rows.caps:
                a_ub[rows.caps[(g, j)], col] = -lp.domain_cap
    a_eq[np.arange(K), len(apps) + n_z + np.arange(K)] = 1.0
    cost[len(apps) + n_z :] = BIG
    return cost, a_eq, a_ub


def _rhs(lp: LevelLP, rows: _Rows) -> tuple[np.ndarray, np.ndarray]:
    b_eq = np.zeros(rows.n_eq)
    b_eq[: lp.n_types] = lp.types.count
    for g, (m, _) in enumerate(lp.kinds):
        b_eq[rows.domains[g]] = m
    return b_eq, np.zeros(rows.n_ub)


def _reduced_costs(lp: LevelLP, rows: _Rows, pi_eq: np.ndarray, pi_ub: np.ndarray):
    """Reduced cost (minimisation form) of every y column: {(g, j, s): array over configurations}."""
    K = lp.n_types
    out = {}
    for g, (_, cells) in enumerate(lp.kinds):
        for j in range(len(lp.modes)):
            base = rows.loads[(g, j)]
            for s in cells:
                counts = lp.configs[s]
                value = counts @ pi_eq[:K] + pi_eq[rows.cells[(g, j, s)]]
                value -= lp.rates[s][j] @ pi_ub[:K]
                for q in range(rows.R):
                    value += lp.loads[s][:, q] * (pi_ub[base + 2 * q + 1] - pi_ub[base + 2 * q])
                if (g, j) in rows.caps:
                    value += counts.sum(axis=1) * pi_ub[rows.caps[(g, j)]]
                out[(g, j, s)] = -value
    return out


def solve_level_lp(
    lp: LevelLP, *, time_limit: float | None = None, add: int = 200, max_iterations: int = 400, full: bool = False
) -> tuple[float, float | None, int, int, bool]:
    """(bound, LP optimum or None, columns, iterations, converged), in packets/s.

    ``full=True`` puts every column in the first master (the enumerated LP, for tests)."""
    from scipy.optimize import linprog

    start = time.perf_counter()
    rows = _Rows(lp)
    cost0, eq0, ub0 = _fixed_block(lp, rows)
    b_eq, b_ub = _rhs(lp, rows)
    chosen: list[tuple[int, int, int, np.ndarray]] = []
    if full:
        chosen = [
            (g, j, s, np.arange(len(lp.configs[s])))
            for g, (_, cells) in enumerate(lp.kinds)
            for j in range(len(lp.modes))
            for s in cells
        ]
    else:  # the empty cell in every mode, so that every L-domain can take any mode
        chosen = [
            (g, j, s, np.array([0]))
            for g, (_, cells) in enumerate(lp.kinds)
            for j in range(len(lp.modes))
            for s in cells
        ]
    taken = {(g, j, s): set(map(int, idx)) for g, j, s, idx in chosen}
    upper = {
        (g, j, s): float(cells[s] * m)
        for g, (m, cells) in enumerate(lp.kinds)
        for j in range(len(lp.modes))
        for s in cells
    }
    best, lp_value, converged, iterations = math.inf, None, False, 0
    from scipy.sparse import csc_matrix, hstack

    blocks = [tuple(map(csc_matrix, _y_block(lp, rows, g, j, s, idx))) for g, j, s, idx in chosen]
    eq0, ub0 = csc_matrix(eq0), csc_matrix(ub0)
    while iterations < max_iterations:
        iterations += 1
        a_eq = hstack([eq0] + [b[0] for b in blocks]).tocsr()
        a_ub = hstack([ub0] + [b[1] for b in blocks]).tocsr()
        cost = np.concatenate([cost0, np.zeros(a_eq.shape[1] - len(cost0))])
        result = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
        if result.status != 0:
            raise ConfigurationLPFailed(f"the level LP failed: {result.message}")
        pi_eq, pi_ub = np.asarray(result.eqlin.marginals), np.asarray(result.ineqlin.marginals)
        reduced = _reduced_costs(lp, rows, pi_eq, pi_ub)
        # Lagrangian bound (minimisation): b.pi + sum over y columns of U min(0, reduced)
        lagrangian = float(b_eq @ pi_eq + b_ub @ pi_ub)
        lagrangian += sum(upper[key] * float(np.minimum(0.0, r).sum()) for key, r in reduced.items())
        best = min(best, -lagrangian)
        fresh = []
        for key, r in reduced.items():
            for i in np.nonzero(r < -1e-9)[0]:
                if int(i) not in taken[key]:
                    fresh.append((float(r[i]), key, int(i)))
        if not fresh:
            artificial = float(result.x[len(cost0) - lp.n_types : len(cost0)].sum())
            converged = artificial <= 1e-9
            lp_value = -float(result.fun) if converged else None
            break
        fresh.sort()
        grouped: dict[tuple[int, int, int], list[int]] = {}
        for _, key, i in fresh[:add]:
            grouped.setdefault(key, []).append(i)
            taken[key].add(i)
        fresh_blocks = [(g, j, s, np.array(idx)) for (g, j, s), idx in grouped.items()]
        chosen += fresh_blocks
        blocks += [tuple(map(csc_matrix, _y_block(lp, rows, *key))) for key in fresh_blocks]
        if time_limit is not None and time.perf_counter() - start > time_limit:
            break
    columns = sum(len(idx) for *_, idx in chosen)
    return best * lp.scale, None if lp_value is None else lp_value * lp.scale, columns, iterations, converged


def level_bound(problem: BindingProblem, *, objective: str | None = None, time_limit: float | None = None):
    """The level LP's bound on total throughput as a `ConfigurationBound`; raises `NotApplicable`."""
    start = time.perf_counter()
    objective = objective or problem.spec.objective
    if objective != "total_throughput":
        raise NotApplicable(f"bounds only the total-throughput objective (here: {objective})")
    lp = build(problem)
    remaining = None if time_limit is None else max(0.5, time_limit - (time.perf_counter() - start))
    bound, lp_value, columns, iterations, converged = solve_level_lp(lp, time_limit=remaining)
    return ConfigurationBound(
        value=bound * (1 + LP_TOLERANCE),
        lp_value=lp_value,
        level=problem.topology.level_names[Layout.of(problem, lp.types).level] + " (by level)",
        configurations=int(sum(len(c) for c in lp.configs.values()) * len(lp.modes)),
        columns=columns,
        iterations=iterations,
        wall_time=time.perf_counter() - start,
        converged=converged,
        source="level LP",
    )


def integer_modes(lp: LevelLP, *, time_limit: float | None = None) -> tuple[float, np.ndarray | None, bool]:
    """The LP with integer L-domain modes ``z`` (each L-domain takes one mode): (bound, solution, proven).

    Every y column is present (``z`` integer, ``y`` continuous: HiGHS's branch and bound, whose
    dual bound is a bound on every plan, tighter than the LP's since no L-domain mixes modes).
    ``proven`` says the MIP was solved to optimality; otherwise the bound is its dual bound."""
    from scipy.optimize import Bounds, LinearConstraint
    from scipy.sparse import csc_matrix, hstack

    from tasksolve.solver.highs import milp

    columns = len(lp.kinds) * len(lp.modes) * sum(len(c) for c in lp.configs.values())
    if columns > MAX_MIP_COLUMNS:
        raise ConfigurationLPFailed(
            f"{columns:,} columns: too many for the integer-mode MIP (limit {MAX_MIP_COLUMNS:,})"
        )
    rows = _Rows(lp)
    cost0, eq0, ub0 = _fixed_block(lp, rows)
    b_eq, b_ub = _rhs(lp, rows)
    keys = [(g, j, s) for g, (_, cells) in enumerate(lp.kinds) for j in range(len(lp.modes)) for s in cells]
    blocks = [_y_block(lp, rows, g, j, s, np.arange(len(lp.configs[s]))) for g, j, s in keys]
    a_eq = hstack([csc_matrix(eq0)] + [csc_matrix(b[0]) for b in blocks]).tocsr()
    a_ub = hstack([csc_matrix(ub0)] + [csc_matrix(b[1]) for b in blocks]).tocsr()
    n = a_eq.shape[1]
    cost = np.concatenate([cost0, np.zeros(n - len(cost0))])
    integrality = np.zeros(n)
    n_apps, n_z = len(lp.types.apps), len(lp.kinds) * len(lp.modes)
    integrality[n_apps : n_apps + n_z] = 1
    upper = np.full(n, np.inf)
    upper[len(cost0) - lp.n_types : len(cost0)] = 0.0  # no artificials: every type placed
    options = {"mip_rel_gap": MIP_GAP}
    if time_limit is not None:
        options["time_limit"] = max(0.5, float(time_limit))
    result = milp(
        cost,
        constraints=[LinearConstraint(a_eq, b_eq, b_eq), LinearConstraint(a_ub, -np.inf, b_ub)],
        integrality=integrality,
        bounds=Bounds(np.zeros(n), upper),
        options=options,
    )
    # the bound is HiGHS's dual bound, never the incumbent: "optimal" means within its relative
    # gap tolerance (1e-4), so the incumbent may be below the MIP optimum by that much
    dual = getattr(result, "mip_dual_bound", None)
    if dual is None or not np.isfinite(dual):
        if result.status == 0 and result.x is not None:
            return -float(result.fun) * (1 + MIP_GAP) * lp.scale, result.x, True
        raise ConfigurationLPFailed(f"the level MIP gave no bound: {result.message}")
    return -float(dual) * lp.scale, result.x, result.status == 0
