"""A plan from the level LP's solution: round the cell configurations, then place the threads.

`solver.binding.level_lp.integer_modes` says how many L-domains take each mode and how many
cells of each configuration they hold in all (``y``, continuous).  The plan:

1. *rounding* -- the cells of mode j are shared out among its L-domains, each configuration's
   count rounded down, then the cells left filled with the configurations of largest remainder
   (largest-remainder rounding, per L-domain);
2. *placement* -- each cell's configuration becomes threads: where a configuration holds a
   producer type and its consumer type, one instance's producer and consumer go there together
   (the cheap in-cell message the LP priced); other slots take any thread of the type left;
3. *repair* -- threads left over (the rounding changed the type counts) take the free contexts,
   nearest their producer first; the caller improves the plan by local search.

The plan is valid by construction (one thread per context, usable contexts only); its quality is
whatever the closed form says, the bound is the LP's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from tasksolve.solver.binding.configuration_lp import ConfigurationBound, ConfigurationLPFailed
from tasksolve.solver.binding.configurations import Layout, ThreadTypes, domain_cells
from tasksolve.solver.binding.level_lp import (
    LP_TOLERANCE,
    LevelLP,
    build,
    cell_key,
    cell_signature,
    integer_modes,
    level_bound,
)
from tasksolve.solver.binding.problem import BindingProblem


def _domains_by_kind(problem: BindingProblem, lp: LevelLP, level: int, cell_level: int) -> list[list[list[list[int]]]]:
    """Per kind of `lp.kinds`: its L-domains, each a list of cells (usable contexts, largest first)."""
    index = {tuple(sorted(cells.items(), reverse=True)): g for g, (_, cells) in enumerate(lp.kinds)}
    out: list[list[list[list[int]]]] = [[] for _ in lp.kinds]
    for cells in domain_cells(problem, level, cell_level):
        key = cell_signature(problem.topology, cells)
        if key in index:
            out[index[key]].append(sorted(cells, key=len, reverse=True))
    return out


def largest_remainder(counts: np.ndarray, total: int) -> np.ndarray:
    """Largest-remainder rounding of `counts` to integers summing to `total`."""
    base = np.floor(counts + 1e-9).astype(int)
    short = total - int(base.sum())
    if short > 0:
        order = np.argsort(-(counts - base))
        base[order[:short]] += 1
    while base.sum() > total:
        base[int(np.argmax(base))] -= 1
    return base


def cell_contents(
    lp: LevelLP, x: np.ndarray, domains: list[list[list[list[int]]]], topology
) -> list[tuple[list[int], list[int]]]:
    """(contexts of a cell, thread types it should hold) for every cell of every L-domain."""
    n_apps, M = len(lp.types.apps), len(lp.modes)
    offset = n_apps + len(lp.kinds) * M + lp.n_types
    out = []
    for g, (_, cells) in enumerate(lp.kinds):
        z = np.rint(x[n_apps + g * M : n_apps + (g + 1) * M]).astype(int)
        queue = list(domains[g])
        for j in range(M):
            share = {}
            for s in cells:
                n = len(lp.configs[s])
                share[s] = x[offset : offset + n]
                offset += n
            for _ in range(z[j]):
                if not queue:
                    break
                domain = queue.pop(0)
                for s in cells:
                    slots = [cell for cell in domain if cell_key(topology, cell) == s]
                    picks = largest_remainder(share[s] / max(1, z[j]), len(slots))
                    configs = [i for i, count in enumerate(picks) for _ in range(count)]
                    for cell, i in zip(slots, configs):
                        types = [k for k in range(lp.n_types) for _ in range(int(lp.configs[s][i][k]))]
                        out.append((cell, types))
        for domain in queue:  # L-domains the rounding left without a mode: empty
            out += [(cell, []) for cell in domain]
    return out


def plan_from_solution(problem: BindingProblem, lp: LevelLP, x: np.ndarray, level: int, cell_level: int) -> list[int]:
    """A context per thread (module docstring)."""
    return place(
        problem, lp.types, cell_contents(lp, x, _domains_by_kind(problem, lp, level, cell_level), problem.topology)
    )


def place(problem: BindingProblem, types: ThreadTypes, contents: list[tuple[list[int], list[int]]]) -> list[int]:
    """Threads into cells: (contexts of a cell, thread types it should hold) -> a context per
    thread (the module docstring's steps 2 and 3)."""
    spec = problem.spec
    key = {name: k for k, name in enumerate(types.names)}
    kind_of = [key[t.type_key] for t in spec.threads]
    instance_of = problem.instance_of
    members: dict[tuple[int, int], int] = {(instance_of[t], kind_of[t]): t for t in range(problem.n_threads)}
    free_threads: dict[int, list[int]] = {}
    for t, k in enumerate(kind_of):
        free_threads.setdefault(k, []).append(t)
    placed = [-1] * problem.n_threads
    free_contexts: list[int] = []
    producer_of = {k: [p for p, _, _ in types.in_edges[k]] for k in range(len(types.names))}

    def take(t: int, c: int) -> None:
        placed[t] = c
        free_threads[kind_of[t]].remove(t)

    for cell, wanted in contents:
        contexts = list(cell)
        remaining = list(wanted)
        for k in list(remaining):  # producer and consumer of one instance together
            for p in producer_of[k]:
                if k in remaining and p in remaining and len(contexts) >= 2:
                    pair = next(
                        (
                            (members[(i, p)], t)
                            for t in free_threads.get(k, [])
                            for i in [instance_of[t]]
                            if (i, p) in members and members[(i, p)] in free_threads.get(p, [])
                        ),
                        None,
                    )
                    if pair is not None:
                        take(pair[0], contexts.pop(0))
                        take(pair[1], contexts.pop(0))
                        remaining.remove(k)
                        remaining.remove(p)
        for k in remaining:
            if contexts and free_threads.get(k):
                take(free_threads[k][0], contexts.pop(0))
        free_contexts += contexts
    return repair(problem, placed, free_contexts)


def _closeness(topo, depth: int, context: int, anchors: list[int]) -> int:
    """The deepest level `context` shares with any of `anchors` (-1: the machine only)."""
    best = -1
    for a in anchors:
        for level in range(depth):
            if topo.domain_of(context, level) == topo.domain_of(a, level):
                best = max(best, level)
    return best


def repair(problem: BindingProblem, placed: list[int], free_contexts: list[int]) -> list[int]:
    """Threads without a context take a free one, nearest (deepest shared level) their producer."""
    topo = problem.topology
    depth = len(topo.levels)
    allowed = [set(a) for a in problem.allowed]
    for t in range(problem.n_threads):
        if placed[t] >= 0 and placed[t] in allowed[t]:
            continue
        if placed[t] >= 0:  # a context the thread may not use (a pin or forbid): give it back
            free_contexts.append(placed[t])
        anchors = [placed[p] for p in problem.predecessors[t] if placed[p] >= 0]
        options = [c for c in free_contexts if c in allowed[t]]
        if not options:
            raise ValueError("the rounded plan leaves a thread without an allowed context")

        best = max(options, key=lambda c, anchors=anchors: _closeness(topo, depth, c, anchors))
        placed[t] = best
        free_contexts.remove(best)
    return placed


MIP_MODES = 60  # modes of the L-level load in the integer-mode MIP (a coarser grid: a small MIP)


@dataclass
class LevelResult:
    """The level LP's bound (with how it was obtained) and the plan rounded from its MIP."""

    bound: ConfigurationBound
    plan: list[int] | None
    plan_value: float | None  # the closed form's value of `plan`
    notes: list[str] = field(default_factory=list)


def solve_level(problem: BindingProblem, *, time_limit: float | None = None) -> LevelResult:
    """The level LP's bound -- the least of the LP (column generation, fine grid of modes) and the
    integer-mode MIP (coarse grid) -- and the MIP's plan, rounded and repaired.

    Raises `NotApplicable` where the decomposition does not apply (`level_lp.build`)."""

    start = time.perf_counter()

    def left(share: float) -> float | None:
        return None if time_limit is None else max(0.5, share * (time_limit - (time.perf_counter() - start)))

    bound = level_bound(problem, time_limit=left(0.5))
    notes: list[str] = []
    lp = build(problem, MIP_MODES)
    try:
        value, x, proven = integer_modes(lp, time_limit=left(0.8))
    except ConfigurationLPFailed as exc:
        notes.append(f"no integer-mode bound nor plan: {exc}")
        return LevelResult(bound, None, None, notes)
    if value < bound.value:
        bound.value = value * (1 + LP_TOLERANCE)
        bound.level = bound.level.replace("(by level)", "(by level, integer modes)")
    bound.wall_time = time.perf_counter() - start
    if x is None:
        return LevelResult(bound, None, None, notes)
    layout = Layout.of(problem, lp.types)
    try:
        plan = plan_from_solution(problem, lp, x, layout.level, layout.cell_level)
    except ValueError as exc:  # pins or forbids the rounding could not honour
        notes.append(f"no plan from the level LP: {exc}")
        return LevelResult(bound, None, None, notes)
    plan_value = float(problem.batch.evaluate(np.array([plan])).values("total_throughput")[0])
    if not proven:
        notes.append("the integer-mode MIP stopped at its time limit: its dual bound is used")
    return LevelResult(bound, plan, plan_value, notes)
