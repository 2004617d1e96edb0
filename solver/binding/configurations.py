"""An upper bound on total throughput from *configurations* of one sharing domain.

The closed form (`simulate.analytic`) makes a thread's slowdown depend only on the loads of the
domains holding it, and its work only on where its producers are.  Let L be the coarsest level
holding a resource that is not machine-wide (the T2's core).  Everything that slows a thread down
is then decided inside its L-domain, except the cost of messages from other L-domains.  A
*configuration* is what one L-domain holds: the multiset of thread types (application, task) in
each of its cells (the domains of level L+1, the T2's pipes; cells of equal size are
interchangeable).  Instances of one application are identical, so types are all that matter.

**Value of a configuration** (an upper bound on what its instances earn).  Each application has
an *anchor* task (the one with the most cycles); an instance is credited to the L-domain holding
its anchor thread, with ``clock / max E_t`` over the *fragment* of the instance in that domain
(its threads there), where ``E_t = work_t * slowdown_t`` is computed from the configuration: the
slowdown exactly (loads of the cell and of the L-domain, constant machine-wide loads), the work
with the exact message cost for producers in the fragment and the cheapest cost across L-domains
for the others.  The instance's threads outside the L-domain count with the least time they can
have anywhere (their cycles, the cheapest message costs, and a slowdown from the machine-wide
loads and their own demand alone).  Which threads of the configuration form which fragment is not known, so the
value is the maximum over every way to assign partner threads to anchors.  The real grouping is
one of them, its fragments' ``max E`` can only be lower than the instances' periods, and threads
outside a fragment only add to the real period: the value is never below what the instances
anchored there really earn.  When a count vector allows too many assignments, each anchor takes
its best partners independently (a larger maximum, still an upper bound).

The bound itself, the configuration LP solved by column generation, is
`solver.binding.configuration_lp`'s.

Relaxed (left out, so the bound stays valid): pins, forbids, ``latency_max``, caps other than
those on L and its cells, and resources on levels below the cells (only a thread's own demand
counts there).  Only the total-throughput objective is bounded.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.binding.thread_types import ThreadTypes

MAX_CONFIGURATIONS = 3_000_000
MAX_ASSIGNMENTS = 4096  # partner assignments enumerated per count vector
MAX_OPTIONS = 4096  # fragments valued per count vector; more (many roles of an application): `upper`'s bound
CHUNK = 131_072  # configurations evaluated at once
GATHER = 1 << 20  # slowdowns gathered at once by `_fragment_values` (8 MiB)


def _option_count(grid: np.ndarray) -> int:
    """How many fragments `ConfigurationValues._options` would list for `grid` (cells x roles)."""
    present = (grid > 0).sum(axis=0)
    return int(present[0]) * math.prod(1 + int(p) for p in present[1:])


class NotApplicable(Exception):
    """The configuration bound does not apply to this problem (the message says why)."""


# ----------------------------------------------------------------------------- layout
@dataclass
class Layout:
    """Level L, its cells, the kinds of L-domains and the three message costs."""

    level: int  # L
    cell_level: int | None  # level of the cells (None: one cell, the L-domain)
    kinds: dict[tuple[int, ...], int]  # cell sizes (sorted, descending) -> L-domains
    domain_cap: int | None  # max threads per L-domain
    cell_cap: int | None  # max threads per cell
    cost_same_cell: dict[int, float] = field(default_factory=dict)  # bytes -> cycles
    cost_same_domain: dict[int, float] = field(default_factory=dict)
    cost_across: dict[int, float] = field(default_factory=dict)
    cheapest: dict[int, float] = field(default_factory=dict)  # anywhere
    # per kind of L-domain, the kinds of core among its usable contexts (`specs.cpu_kinds`)
    core_kinds: dict[tuple[int, ...], set[int]] = field(default_factory=dict)

    def local_cycles(self, types: ThreadTypes, sizes: tuple[int, ...]) -> np.ndarray:
        """Each type's cycles inside an L-domain of kind `sizes`: on the fastest kind of core its
        domains hold (exact where they hold one kind; never more than the truth)."""
        if types.kind_cycles is None or sizes not in self.core_kinds:
            return types.cycles
        return types.kind_cycles[:, sorted(self.core_kinds[sizes])].min(axis=1)

    @classmethod
    def of(cls, problem: BindingProblem, types: ThreadTypes) -> Layout:
        topo = problem.topology
        depth = len(topo.levels)
        used = {topo.level_index(r.level) for j, r in enumerate(topo.resources) if (types.demand[:, j] > 0).any()}
        local = [level for level in used if level >= 0]
        level = min(local) if local else 0
        cell_level = level + 1 if level + 1 < depth - 1 else None
        kinds: dict[tuple[int, ...], int] = {}
        core_kinds: dict[tuple[int, ...], set[int]] = {}
        for cells in domain_cells(problem, level, cell_level):
            sizes = tuple(sorted((len(cell) for cell in cells), reverse=True))
            kinds[sizes] = kinds.get(sizes, 0) + 1
            core_kinds.setdefault(sizes, set()).update(topo.context_kinds[c] for cell in cells for c in cell)
        caps = problem.caps
        layout = cls(
            level=level,
            cell_level=cell_level,
            kinds=kinds,
            domain_cap=caps.get(level),
            cell_cap=caps.get(cell_level) if cell_level is not None else None,
            core_kinds=core_kinds,
        )
        inner_low = cell_level if cell_level is not None else level
        sizes = {size for edges in types.in_edges for _, size, _ in edges}
        for size in sizes:
            inner = [topo.message_cycles(k, size) for k in range(inner_low, depth - 1)]
            layout.cost_same_cell[size] = min(inner) if inner else math.inf
            layout.cost_same_domain[size] = topo.message_cycles(level, size)
            layout.cost_across[size] = min(topo.message_cycles(k, size) for k in range(-1, level))
            layout.cheapest[size] = min(
                layout.cost_same_cell[size], layout.cost_same_domain[size], layout.cost_across[size]
            )
        return layout


def domain_cells(problem: BindingProblem, level: int, cell_level: int | None) -> Iterator[list[list[int]]]:
    """The cells of every domain of `level` holding a usable context, in domain order: each cell
    the usable contexts of one domain of `cell_level` (the domain itself where that is None)."""
    topo = problem.topology
    usable = set(problem.usable)
    stride = topo.strides[cell_level] if cell_level is not None else None
    for domain in range(topo.domain_count(level)):
        contexts = topo.contexts_of(level, domain)
        step = stride or len(contexts)
        cells = [[c for c in range(a, a + step) if c in usable] for a in range(contexts.start, contexts.stop, step)]
        cells = [cell for cell in cells if cell]
        if cells:
            yield cells


# ----------------------------------------------------------------------------- enumeration
def _multisets(n_types: int, size: int, limit: np.ndarray) -> np.ndarray:
    """Every multiset of at most `size` types (rows of counts), each type at most `limit[k]`."""
    rows = [np.zeros(n_types, dtype=np.int16)]
    for s in range(1, size + 1):
        for combo in itertools.combinations_with_replacement(range(n_types), s):
            row = np.bincount(combo, minlength=n_types).astype(np.int16)
            if (row <= limit).all():
                rows.append(row)
    return np.array(rows)


def _combinations(n: int, r: int) -> np.ndarray:
    """Non-decreasing index tuples of length r over range(n), as an (count, r) array."""
    out = np.arange(n)[:, None]
    for _ in range(r - 1):
        last = out[:, -1]
        reps = n - last
        base = np.repeat(out, reps, axis=0)
        starts = np.repeat(last, reps)
        offsets = np.arange(len(base)) - np.repeat(np.cumsum(reps) - reps, reps)
        out = np.column_stack([base, starts + offsets])
    return out


def count_configurations(types: ThreadTypes, layout: Layout, sizes: tuple[int, ...]) -> int:
    """How many cell tuples the enumeration of one kind starts from (before the count filter)."""
    total = 1
    for size, r in _groups(sizes):
        cap = min(size, layout.cell_cap) if layout.cell_cap is not None else size
        multisets = sum(math.comb(len(types.names) + s - 1, s) for s in range(cap + 1))
        total *= math.comb(multisets + r - 1, r)
    return total


def _groups(sizes: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(size, len(list(group))) for size, group in itertools.groupby(sizes)]


def enumerate_configurations(types: ThreadTypes, layout: Layout, sizes: tuple[int, ...]) -> np.ndarray:
    """Every configuration of an L-domain of cells `sizes`: an array (configs, cells, types)."""
    parts = []
    for size, r in _groups(sizes):
        cap = min(size, layout.cell_cap) if layout.cell_cap is not None else size
        sets = _multisets(len(types.names), cap, types.count)
        index = _combinations(len(sets), r)
        parts.append(sets[index])  # (n, r, K)
    configs = parts[0]
    for part in parts[1:]:
        a = np.repeat(configs, len(part), axis=0)
        b = np.tile(part, (len(configs), 1, 1))
        configs = np.concatenate([a, b], axis=1)
    totals = configs.sum(axis=1)
    keep = (totals <= types.count).all(axis=1)
    if layout.domain_cap is not None:
        keep &= totals.sum(axis=1) <= layout.domain_cap
    return configs[keep]


@dataclass
class IndexedConfigurations:
    """The configurations of one kind of L-domain without their count matrix: cell ``c`` of
    configuration ``j`` holds the multiset ``tables[c][index[j, c]]`` (rows of type counts).  A
    configuration's type counts are the sum over its cells, so its price ``n_j . pi`` is a sum of
    ``len(tables)`` table lookups: pricing reads two small integers per cell instead of a row of
    the (configurations x types) matrix (1.65M x 12 floats, 160 MB, on the 60-thread T2)."""

    tables: list[np.ndarray]  # per cell: (multisets, K) int16
    index: np.ndarray  # (configurations, cells) int32

    def __len__(self) -> int:
        return len(self.index)

    def __matmul__(self, prices: np.ndarray) -> np.ndarray:
        """``n_j . prices`` for every configuration j."""
        out = np.zeros(len(self.index))
        for c, table in enumerate(self.tables):
            out += (table @ prices)[self.index[:, c]]
        return out

    def __getitem__(self, j: int) -> np.ndarray:
        """The type counts of configuration `j` (float)."""
        return self.cells(slice(j, j + 1))[0].sum(axis=0).astype(float)

    def cells(self, rows: slice | np.ndarray) -> np.ndarray:
        """The configurations `rows` as (configs, cells, types) counts."""
        index = self.index[rows]
        return np.stack([table[index[:, c]] for c, table in enumerate(self.tables)], axis=1)


def index_configurations(
    types: ThreadTypes, layout: Layout, sizes: tuple[int, ...], chunk: int = CHUNK
) -> IndexedConfigurations:
    """The configurations `enumerate_configurations` lists, in the same order, as indices."""
    tables: list[np.ndarray] = []
    index = None
    for size, r in _groups(sizes):
        cap = min(size, layout.cell_cap) if layout.cell_cap is not None else size
        sets = _multisets(len(types.names), cap, types.count)
        part = _combinations(len(sets), r).astype(np.int32)
        tables += [sets] * r
        index = (
            part
            if index is None
            else np.concatenate([np.repeat(index, len(part), axis=0), np.tile(part, (len(index), 1))], axis=1)
        )
    configs = IndexedConfigurations(tables, index)
    keep = np.ones(len(index), dtype=bool)
    for start in range(0, len(index), chunk):  # the count filter, a chunk at a time
        totals = configs.cells(slice(start, start + chunk)).sum(axis=1, dtype=np.int32)
        ok = (totals <= types.count).all(axis=1)
        if layout.domain_cap is not None:
            ok &= totals.sum(axis=1) <= layout.domain_cap
        keep[start : start + chunk] = ok
    configs.index = index[keep]
    return configs


# ----------------------------------------------------------------------------- values
def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a small non-negative integer array and each row's index among them:
    ``np.unique(axis=0)`` on one integer code per row (mixed radix), ten times faster."""
    radix = int(rows.max(initial=0)) + 1
    if rows.shape[1] * math.log2(radix) > 62:
        keys, inverse = np.unique(rows, axis=0, return_inverse=True)
        return keys, inverse.ravel()
    code = rows.astype(np.int64) @ (radix ** np.arange(rows.shape[1], dtype=np.int64))
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    return rows[first], inverse.ravel()


def _by_anchor_cell(options: list[tuple[int, ...]], cells: int) -> list[list[int]]:
    """Indices of the options whose anchor sits in each cell."""
    return [[i for i, option in enumerate(options) if option[0] == cell] for cell in range(cells)]


@functools.lru_cache(maxsize=1024)
def _pick_counts(kinds: int, size: int) -> np.ndarray:
    """Every multiset of `size` of `kinds` items as counts, in `combinations_with_replacement`'s order."""
    picks = _combinations(kinds, size)
    rows = np.zeros((len(picks), kinds), dtype=np.int64)
    for column in picks.T:
        rows[np.arange(len(picks)), column] += 1
    rows.flags.writeable = False
    return rows


class ConfigurationValues:
    """`value(configs)`: the value of each configuration (module docstring).  `sizes` names the
    kind of L-domain valued: its threads' cycles are those of its kinds of core
    (`Layout.local_cycles`); threads outside it take the fastest kind's."""

    def __init__(
        self, problem: BindingProblem, types: ThreadTypes, layout: Layout, sizes: tuple[int, ...] | None = None
    ) -> None:
        topo = problem.topology
        self.types = types
        self.local_cycles = types.cycles if sizes is None else layout.local_cycles(types, sizes)
        self.layout = layout
        self.clock = float(topo.clock)
        self.capacity = np.array([r.capacity for r in topo.resources], dtype=float)
        self.levels = [topo.level_index(r.level) for r in topo.resources]
        self.machine_load = types.count @ types.demand  # every thread is on the machine
        # the least slowdown a thread can have anywhere: machine-wide loads and its own demand
        own = types.demand / self.capacity
        machine = np.where(np.array(self.levels) < 0, self.machine_load / self.capacity, 0.0)
        self.least_slowdown = np.maximum(
            1.0, np.where(types.demand > 0, np.maximum(own, machine), 0.0).max(axis=1, initial=0.0)
        )
        self._assignments: dict[tuple, np.ndarray | None] = {}
        self.deadline: float | None = None  # perf_counter: past it, fragments get `upper`'s bound

    def slowdowns(self, configs: np.ndarray, only: list[int] | None = None) -> np.ndarray:
        """``1 / rate`` of a thread of each type in each cell: (configs, cells, types); of the
        types `only` alone (in that order) when given."""
        t = self.types
        layout = self.layout
        n, m, K = configs.shape
        only = np.arange(K) if only is None else np.asarray(only)
        slow = np.ones((n, m, len(only)))
        domain_total = configs.sum(axis=1, dtype=np.float64)  # (n, K)
        cells = None
        for r, level in enumerate(self.levels):
            d = t.demand[:, r]
            users = d[only] > 0
            if not users.any():
                continue
            if level < 0:
                load = np.full((n, m, 1), self.machine_load[r])
            elif level == layout.level:
                load = (domain_total @ d)[:, None, None]
            elif layout.cell_level is not None and level == layout.cell_level:
                cells = configs.astype(np.float64) if cells is None else cells
                load = (cells @ d)[:, :, None]
            else:  # below the cells: a context holds one thread, only its own demand is known
                load = d[only][None, None, :]
            # users' ratio, 0 for the others (their slowdown is at least 1 already): one pass
            np.maximum(slow, (load / self.capacity[r]) * users, out=slow)
        return slow

    def value(self, configs: np.ndarray | IndexedConfigurations) -> np.ndarray:
        """The value of each configuration: (configs, cells, types) counts, or indexed."""
        values = np.zeros(len(configs))
        for start in range(0, len(configs), CHUNK):
            part = (
                configs[start : start + CHUNK]
                if isinstance(configs, np.ndarray)
                else configs.cells(slice(start, start + CHUNK))
            )
            slow = self.slowdowns(part)
            for app, roles in self.types.apps.items():
                values[start : start + CHUNK] += self._app_value(part, slow, roles, self.types.anchor[app])
        return values

    def upper(self, configs: np.ndarray | IndexedConfigurations) -> np.ndarray:
        """A cheap upper bound on `value` of each configuration: every anchor of the domain
        credited ``clock / max(E_anchor, least time of its other roles)``, where ``E_anchor``
        takes the anchor's slowdown in its cell and the cheapest cost of each of its messages,
        and a role's least time is its least time anywhere (`least_time`): each is at most what
        `_fragment_values` finds for any fragment of that anchor, whichever the assignment."""
        out = np.zeros(len(configs))
        for start in range(0, len(configs), CHUNK):
            part = (
                configs[start : start + CHUNK]
                if isinstance(configs, np.ndarray)
                else configs.cells(slice(start, start + CHUNK))
            )
            anchors = list(self.types.anchor.values())
            slow = self.slowdowns(part, anchors)
            for a, (app, roles) in enumerate(self.types.apps.items()):
                anchor = self.types.anchor[app]
                out[start : start + CHUNK] += self._anchor_upper(part[:, :, anchor], slow[:, :, a], roles, anchor)
        return out

    def _anchor_upper(self, anchors: np.ndarray, slow: np.ndarray, roles: list[int], anchor: int) -> np.ndarray:
        """`upper` of one application: `anchors` (n, cells) its anchors per cell, `slow` (n, cells)
        the anchor's slowdown there."""
        floor = max((self.least_time(k) for k in roles if k != anchor), default=0.0)
        work = self.local_cycles[anchor] + sum(
            self.layout.cheapest[size] * w for _, size, w in self.types.in_edges[anchor]
        )
        with np.errstate(divide="ignore"):
            rate = self.clock / np.maximum(work * slow, floor)
        return (anchors * rate).sum(axis=1)

    def least_time(self, k: int) -> float:
        """The least ``E`` a thread of type k can have anywhere: its cycles, the cheapest cost of
        each of its messages, its least slowdown."""
        work = self.types.cycles[k] + sum(self.layout.cheapest[size] * w for _, size, w in self.types.in_edges[k])
        return float(work * self.least_slowdown[k])

    # -- one application
    def _app_value(self, configs: np.ndarray, slow: np.ndarray, roles: list[int], anchor: int) -> np.ndarray:
        m = configs.shape[1]
        others = [k for k in roles if k != anchor]
        counts = configs[:, :, [anchor] + others].reshape(len(configs), -1)  # (n, m * r) cell-major
        present = counts.reshape(len(configs), m, -1)[:, :, 0].sum(axis=1) > 0
        out = np.zeros(len(configs))
        if not present.any():
            return out
        rows = np.nonzero(present)[0]
        keys, inverse = _unique_rows(counts[rows])
        order = np.argsort(inverse, kind="stable")
        starts = np.searchsorted(inverse[order], np.arange(len(keys) + 1))
        for g, key in enumerate(keys):
            members = rows[order[starts[g] : starts[g + 1]]]
            grid = key.reshape(m, -1)
            late = self.deadline is not None and time.perf_counter() > self.deadline
            if late or _option_count(grid) > MAX_OPTIONS:  # no time, or too many fragments: `upper`'s bound
                out[members] = self._anchor_upper(
                    configs[members][:, :, anchor], slow[members][:, :, anchor], roles, anchor
                )
                continue
            options = self._options(grid)
            part = slow[members]
            values = self._fragment_values(part, anchor, others, options)
            assignments = self._assignment_matrix(grid, options)
            if assignments is None:  # too many: each anchor takes its best option on its own
                best = np.zeros(len(members))
                for cell, mine in enumerate(_by_anchor_cell(options, m)):
                    if grid[cell, 0] and mine:
                        best += grid[cell, 0] * values[mine].max(axis=0)
                out[members] = best
            else:
                out[members] = (assignments @ values).max(axis=0)
        return out

    @staticmethod
    def _options(grid: np.ndarray) -> list[tuple[int, ...]]:
        """(anchor cell, location of each other role: a cell or -1 for none) over present cells."""
        m, r = grid.shape
        anchor_cells = [c for c in range(m) if grid[c, 0] > 0]
        choices = [[-1] + [c for c in range(m) if grid[c, j] > 0] for j in range(1, r)]
        return [(a,) + rest for a in anchor_cells for rest in itertools.product(*choices)]

    def _assignment_matrix(self, grid: np.ndarray, options: list[tuple[int, ...]]) -> np.ndarray | None:
        """Rows: every feasible assignment (how many anchors take each option), in the order of
        ``itertools.product`` over the cells' multisets of options; built a cell at a time,
        dropping a partial assignment that uses more of a role than the cells hold."""
        key, (m, r) = (grid.tobytes(), grid.shape), grid.shape
        if key in self._assignments:
            return self._assignments[key]
        cells = [(int(grid[cell, 0]), mine) for cell, mine in enumerate(_by_anchor_cell(options, m)) if grid[cell, 0]]
        if math.prod(math.comb(len(mine) + n - 1, n) for n, mine in cells) > MAX_ASSIGNMENTS:
            self._assignments[key] = None
            return None
        # uses[i]: how many threads of each other role (cell-major) option i places
        where = np.array(options, dtype=np.int64).reshape(len(options), r)[:, 1:]
        uses = np.zeros((len(options), m * (r - 1)), dtype=np.int64)
        i, j = np.nonzero(where >= 0)
        uses[i, where[i, j] * (r - 1) + j] = 1
        room = grid[:, 1:].reshape(-1)
        rows = np.zeros((1, len(options)), dtype=np.int64)
        for n_anchor, mine in cells:
            choices = np.zeros((math.comb(len(mine) + n_anchor - 1, n_anchor), len(options)), dtype=np.int64)
            choices[:, mine] = _pick_counts(len(mine), n_anchor)
            rows = (rows[:, None, :] + choices[None, :, :]).reshape(-1, len(options))
            rows = rows[((rows @ uses) <= room).all(axis=1)]
        self._assignments[key] = matrix = rows.astype(float)
        return matrix

    def _fragment_values(
        self, slow: np.ndarray, anchor: int, others: list[int], options: list[tuple[int, ...]]
    ) -> np.ndarray:
        """``clock / max E`` of each option's fragment (rows) for each configuration (columns):
        a thread in it takes its cell's slowdown and the exact cost of each message; the
        instance's threads outside the L-domain, at least their least possible time."""
        layout = self.layout
        roles = [anchor, *others]
        cells = np.zeros((len(options), len(roles)), dtype=np.intp)
        work = np.full((len(options), len(roles)), -np.inf)  # -inf: the role is not in the fragment
        floor = np.zeros(len(options))
        for o, option in enumerate(options):
            where = {k: loc for k, loc in zip(roles, option) if loc >= 0}
            for j, k in enumerate(roles):
                if k in where:
                    cell = where[k]
                    e = self.local_cycles[k]
                    for producer, size, w in self.types.in_edges[k]:
                        if producer not in where:
                            e += layout.cost_across[size] * w
                        elif where[producer] == cell:
                            e += layout.cost_same_cell[size] * w
                        else:
                            e += layout.cost_same_domain[size] * w
                    cells[o, j], work[o, j] = cell, e
                else:  # outside the L-domain: at least its least possible time
                    e = self.types.cycles[k] + sum(
                        (layout.cost_across[size] if producer in where else layout.cheapest[size]) * w
                        for producer, size, w in self.types.in_edges[k]
                    )
                    floor[o] = max(floor[o], e * self.least_slowdown[k])
        out, role_types = np.empty((len(options), len(slow))), np.asarray(roles)[None, :]
        step = max(1, GATHER // max(1, len(slow) * len(roles)))  # options per gather
        for start in range(0, len(options), step):
            part = slice(start, start + step)
            times = slow[:, cells[part], role_types] * work[None, part]  # (configs, options, roles)
            worst = np.maximum(times.max(axis=2), floor[None, part])
            with np.errstate(divide="ignore"):
                out[part] = (self.clock / worst).T
        return out
