"""The fluid bound's maximum over every plan of a binding spec: an upper bound on the simulated
optimum (docs/design.md, "A bound on the simulation", "Over all plans").

Two ways, both valid for every plan the spec's constraints allow:

* **enumeration** (`enumerated_max`): the per-plan bound (`solver.certify.fluid_bound`) of every
  placement class (`solver.binding.samplers.distinct_placements`, plans equal up to the symmetries
  of the usable contexts), when there are at most `limit` classes.  The per-plan LP depends only
  on who shares each domain and on the levels messages cross, which those symmetries keep, so its
  maximum over the representatives is its maximum over every plan.  Classes breaking a
  ``max_threads`` cap (a count per domain: the same for a whole class) are skipped, and so are
  classes none of whose plans ``pin`` and ``forbid`` allow (`solver.certify.allowed_classes`, an
  exact matching test); ``latency_max`` is not applied (a closed-form figure): the maximum is over
  a superset of the allowed plans, still an upper bound.
* **relaxation** (`relaxed_max`): one LP whose data hold for every plan at once: per resource
  below the machine, the sum of its domains' constraints (2) (capacity ``C`` times the number of
  domains threads can occupy), with the smallest ``k`` any domain can have; per thread the lowest
  ``rho_min`` and the highest ``rho_max`` any co-location gives (alone in its domains, or with the
  heaviest others a domain's contexts can hold), and the work's range over the levels a message
  can cross (`meeting_levels`).  Each of these moves a constraint of the per-plan LP only outwards,
  so its optimum is at least every plan's bound.  Per level of small domains it also gets the
  configuration rows of `solver.certify.fluid_configurations` (which threads share a domain, as
  counts of thread types).  It is what larger specs get.

`max_bound` returns the smaller of the two (the enumeration when affordable).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tasksolve.solver.certify.fluid_bound import FluidProblem, Slot, equal_split, lock_rows, slot, solve_problem

#: the most placement classes `max_bound` enumerates by default
CLASS_LIMIT = 5000


@dataclass
class MaxBound:
    """An upper bound on the simulated optimum over every plan (packets/s, objective's sense)."""

    value: float
    method: str  # "enumeration" or "relaxation"
    classes: int | None  # placement classes enumerated (None for the relaxation)
    contexts: list[int] | None  # the class with the largest per-plan bound (enumeration)
    seconds: float
    solved: int = 1  # LPs solved (enumeration: the classes not ruled out by their ceiling)


def allowed_reps(spec) -> np.ndarray:
    """The placement classes' representatives (`distinct_placements`) whose class holds a plan
    the spec allows: ``max_threads`` kept, and some plan of the class obeys ``pin`` and ``forbid``."""
    from tasksolve.solver.binding.samplers import distinct_placements
    from tasksolve.solver.certify.allowed_classes import allowed_classes

    reps, _orbits = distinct_placements(spec)
    reps = reps[[_cap_ok(spec, row) for row in reps]] if len(reps) else reps
    return reps[allowed_classes(spec, reps)] if len(reps) else reps


def _cap_ok(spec, contexts: np.ndarray) -> bool:
    topo = spec.topology
    for level_name, cap in spec.constraints.max_threads.items():
        level = topo.level_index(level_name)
        domains = contexts // topo.strides[level] if level >= 0 else np.zeros_like(contexts)
        if np.bincount(domains).max() > cap:
            return False
    return True


def enumerated_max(spec, settings, objective: str, limit: int = CLASS_LIMIT) -> MaxBound | None:
    """The per-plan bound's maximum over every placement class, or None when there are more
    than `limit` classes (or the spec is a pipeline problem: its plans also choose threads)."""
    from tasksolve.simulate.model import binding_structure, compile_contexts
    from tasksolve.solver.certify.fluid_bound import plan_problem
    from tasksolve.specs.counting import count_distinct
    from tasksolve.specs.symmetry import UsableTree

    if spec.problem != "binding":
        return None
    begin = time.perf_counter()
    tree = UsableTree.of(spec.topology, spec.usable_contexts)
    count = count_distinct(tree, len(spec.threads), max_work=50 * limit)
    if count is None or count > limit:
        return None
    structure = binding_structure(spec)
    reps = allowed_reps(spec)
    if len(reps) == 0:
        return None
    ceiling = contention_free(spec, reps, objective)
    if not all(equal_split(structure, settings)):  # replicas that may run at their own pace: no ceiling
        ceiling = np.full(len(reps), np.inf)
    best, where, solved = -np.inf, None, 0
    for k in np.argsort(-ceiling, kind="stable"):
        if ceiling[k] * (1 + 1e-6) < best:  # no class left can beat the best bound found
            break
        graph = compile_contexts(spec, reps[k], structure)
        value = solve_problem(plan_problem(graph, settings), objective, enough=best).value
        solved += 1
        if value > best:
            best, where = value, [int(c) for c in reps[k]]
    return MaxBound(float(best), "enumeration", len(reps), where, time.perf_counter() - begin, solved)


def contention_free(spec, contexts: np.ndarray, objective: str) -> np.ndarray:
    """Each plan's closed form with every demand 0 (every thread at rate 1; locks still bound the
    period): at least its fluid bound when every group's replicas split the packets equally
    (`fluid_bound.equal_split`; else the closed form's ``max s_t / R_t`` is not a bound), since the LP has ``X_i <= y_u / w_u <= 1 / w_u`` and
    ``X_i <= 1 / sum_h crit_h / rho_max_h``.  Visiting classes by this ceiling lets
    `enumerated_max` stop once no class left can beat the best bound found."""
    from tasksolve.simulate.analytic import BatchModel

    model = BatchModel(spec)
    free = model.with_parameters(model.cycles, np.zeros((model.n_threads, len(spec.topology.resources))))
    return free.values(contexts, objective)


def relaxed_max(spec, settings, objective: str, configurations: bool = True) -> MaxBound | None:
    """The relaxation's optimum (see the module docstring), with the configuration rows of
    `solver.certify.fluid_configurations` when `configurations` (and without them should HiGHS
    fail on the larger LP); None for a pipeline spec."""
    if spec.problem != "binding":
        return None
    from tasksolve.simulate.des.units import held
    from tasksolve.simulate.model import binding_structure
    from tasksolve.solver.certify.fluid_bound import MARGIN
    from tasksolve.solver.certify.fluid_configurations import add_configurations, level_blocks
    from tasksolve.solver.certify.fluid_lp import build, certified_max
    from tasksolve.solver.errors import SolverFailed

    if objective not in ("total_throughput", "min_throughput"):
        raise ValueError(f"the fluid bound bounds throughput, not `{objective}`")
    begin = time.perf_counter()
    problem = relaxed_problem(spec, settings)
    lp = build(problem, objective)
    if configurations:
        s = binding_structure(spec)
        capacity, d, i = held(s.capacity, s.demand, s.idle_demand)
        add_configurations(lp, level_blocks(spec, s, capacity, d, i), d, i)
    try:
        _primal, bound, _rates = certified_max(lp)
    except SolverFailed:
        if not configurations:
            raise
        return relaxed_max(spec, settings, objective, configurations=False)
    value = bound * problem.clock * (1 + MARGIN)
    return MaxBound(value, "relaxation", None, None, time.perf_counter() - begin)


def max_bound(spec, settings=None, objective: str | None = None, limit: int = CLASS_LIMIT) -> MaxBound | None:
    """The smaller of `enumerated_max` (when affordable) and `relaxed_max`; None when neither
    applies (a pipeline spec, a latency objective)."""
    from tasksolve.simulate.des import DesSettings

    objective = objective or spec.objective
    if objective not in ("total_throughput", "min_throughput") or spec.problem != "binding":
        return None
    settings = settings or DesSettings.from_spec(spec)
    found = [b for b in (enumerated_max(spec, settings, objective, limit), relaxed_max(spec, settings, objective)) if b]
    return min(found, key=lambda b: b.value) if found else None


# ------------------------------------------------------------------------------ relaxation
def relaxed_problem(spec, settings) -> FluidProblem:
    """The plan-independent fluid LP of a binding spec (see the module docstring)."""
    from tasksolve.simulate.des.units import held
    from tasksolve.simulate.model import binding_structure

    s = binding_structure(spec)
    topo = spec.topology
    T = s.n_threads
    usable = np.array(spec.usable_contexts)
    capacity, d, i = held(s.capacity, s.demand, s.idle_demand)
    slots: list[Slot] = []
    rho_min, rho_max = np.ones(T), np.ones(T)
    for r, level in enumerate(s.resource_level):
        cap = float(capacity[r])
        if not np.isfinite(s.capacity[r]):
            continue
        members = [(t, float(d[t, r]), float(i[t, r])) for t in range(T) if d[t, r] or i[t, r]]
        if not members:
            continue
        if level < 0:
            one = slot(cap, members)
            slots.append(one)
            _limit_rates(rho_min, rho_max, one.members, cap, len(members), alone=False)
            continue
        per_domain = np.bincount(usable // topo.strides[level])
        size = int(per_domain.max())
        cap_here = spec.constraints.max_threads.get(topo.levels[level].name)
        if cap_here is not None:
            size = min(size, int(cap_here))
        domains = min(int(np.count_nonzero(per_domain)), T)
        peak = sum(sorted((max(a, b) for _, a, b in members), reverse=True)[:size])
        k = min(1.0, cap / peak) if peak > 0 else 1.0
        slots.append(Slot(cap * domains, k, members, colocated=False))
        _limit_rates(rho_min, rho_max, members, cap, size, alone=True)
    w_lo, w_hi = _work_bounds(spec, s)
    return FluidProblem(
        clock=float(topo.clock),
        n_instances=len(s.instances),
        groups=[(g.instance, g.threads) for g in s.groups],
        equal=[True] * len(s.groups),  # binding: one thread per group
        bounded=settings.queue_capacity is not None,
        w_lo=w_lo,
        w_hi=w_hi,
        rho_min=rho_min,
        rho_max=rho_max,
        slots=slots,
        locks=lock_rows(s),
        arrival=None if settings.arrival == "saturated" else settings.rate / float(topo.clock),
    )


def _limit_rates(rho_min, rho_max, members, cap: float, size: int, alone: bool) -> None:
    """Lower `rho_min` to the worst co-location of at most `size` threads in one domain, and
    `rho_max` to the best (alone when `alone`, else every other member at ``min(d, i)``)."""
    for t, d, _i in members:
        if d <= 0:
            continue
        others = sorted((max(a, b) for u, a, b in members if u != t), reverse=True)[: size - 1]
        worst = d + sum(others)
        best = d if alone else d + sum(min(a, b) for u, a, b in members if u != t)
        rho_min[t] = min(rho_min[t], cap / worst if worst > cap else 1.0)
        rho_max[t] = min(rho_max[t], cap / best if best > cap else 1.0)


def _work_bounds(spec, structure) -> tuple[np.ndarray, np.ndarray]:
    """Per thread, its work per packet with every incoming message at its cheapest and at its
    dearest level (any level, the machine included), failed optimistic sections' mean added (at
    the least conflict, `simulate.locks.mean_retry`: what every run pays at least); with
    kinds of core (`specs.cpu_kinds`), its cycles on its fastest and on its slowest kind."""
    from tasksolve.simulate.locks import conflicted, speculation_work

    topo = spec.topology
    levels = meeting_levels(spec)

    def cycles(on) -> np.ndarray:
        base = np.array(on.cycles, dtype=float)
        return base + speculation_work(on) if any(on.sync) else base

    if topo.kinds:
        table = structure.kind_cycles
        lo = cycles(structure.on_kinds(np.argmin(table, axis=1).tolist()))
        hi = cycles(structure.on_kinds(np.argmax(table, axis=1).tolist()))
    else:
        lo = cycles(structure)
        hi = lo.copy()
    for group in structure.groups:
        for sizes in group.edge_bytes:
            costs = [sum(float(topo.message_cycles(level, b)) for b in sizes) for level in levels]
            every = [sum(float(topo.message_cycles(level, b)) for b in sizes) for level in range(-1, len(topo.levels))]
            for t in group.threads:
                lo[t] += min(costs) if costs else min(every)
                hi[t] += max(every)
    hi[conflicted(structure)] = np.inf  # failures on conflicts: no upper end (`fluid_bound.work_range`)
    return lo, hi


def meeting_levels(spec) -> list[int]:
    """The levels (-1: the machine) that can be the innermost level two threads on distinct usable
    contexts share: some domain of the level holds usable contexts in two of its children (a
    context for the last level's parent; the last level's domains are single contexts, which two
    threads never share), and no ``max_threads`` cap at that level or above it is below 2.  A
    message between two threads crosses one of these, so its cheapest cost among them is a lower
    bound on its cost in every plan."""
    topo = spec.topology
    usable = np.array(spec.usable_contexts)
    caps = {topo.level_index(name): int(cap) for name, cap in spec.constraints.max_threads.items()}
    out = []
    for level in range(-1, len(topo.levels)):
        if any(cap < 2 for at, cap in caps.items() if at <= level):
            continue
        child = topo.strides[level + 1] if level + 1 < len(topo.levels) else 1
        parent = usable // topo.strides[level] if level >= 0 else np.zeros_like(usable)
        if level < len(topo.levels) - 1 and len(
            {(a, b) for a, b in zip(parent.tolist(), (usable // child).tolist())}
        ) > len(set(parent.tolist())):
            out.append(level)
    return out
