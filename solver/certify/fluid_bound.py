"""An upper bound on the simulation's throughput of one plan: the fluid linear program
(docs/design.md, "A bound on the simulation").

The simulation (`simulate.des`) shares every (resource, domain) *slot* by the fluid rule: a busy
thread ``u`` loads ``d_u``, an idle, blocked or lock-waiting one loads ``i_u``, and a busy thread
progresses at ``min(1, min over its slots of C / load)``.  At every instant, in every slot,

    sum over busy u of d_u * rate_u  +  k * sum over idle u of i_u  <=  C        (1)

with ``k = min(1, C / L_max)``, ``L_max = sum_u max(d_u, i_u)`` (the largest load the slot can
carry): when ``load <= C`` the left side is at most the load, otherwise every busy ``u`` with
``d_u > 0`` has ``rate_u <= C / load <= ...`` and the left side is at most ``(C / load) * load``.
Averaged over time, with ``x_u`` the packets thread ``u`` processes per cycle, ``w_u`` its mean
work per packet and ``y_u = x_u * w_u`` its work per cycle (the time average of busy * rate),

    sum_u d_u * y_u  +  k * sum_u i_u * s_u  <=  C,      s_u >= max(0, 1 - y_u / rho_min_u)   (2)

where ``s_u`` is u's idle fraction and ``rho_min_u`` the lowest rate u can ever have (its slots
with every other member at ``max(d, i)``): u is busy at least ``y_u / rho_max_u`` and at most
``y_u / rho_min_u`` of the time.  Further: ``y_u <= rho_max_u (1 - s_u)`` (its best rate: every
other member at ``min(d, i)``); per slot and member, u's rate below a line in the load, whose
busy part is the time u shares with each neighbour busy, bounded by Frechet's inequalities
(`solver.certify.fluid_lp.slot_chords`, constraint 8 of docs/design.md); per thread, the rate
of every joint state of its neighbours (the minimum over all its slots at the loads that occur)
below a linear function of who is busy, separated as cuts (`solver.certify.fluid_cuts`,
constraint 9; `CUT_ROUNDS` rounds); one lock's critical sections ``sum_h x_h * crit_h / rho_max_h <= 1``, each
instance's throughput ``X_i <= `` its arrival rate, and the flow of every instance: with bounded
queues every group processes ``X_i`` packets per cycle in the long run (``>= X_i`` with unbounded
ones), split equally between replicas that take packets in turn where a one-thread group of the
instance holds them to one pace (`equal_split`), in any way otherwise.

Work per packet: the task cycles (service factors have mean 1), the mean cost of failed optimistic
sections, and the incoming messages' cost -- its long-run mean over the producer replicas under
round robin (`simulate.model.ThreadGraph.work`), only the range ``[min, max]`` over them with a
shared queue (then ``x_u * w_lo <= y_u <= x_u * w_hi``).  Demands and capacities are rounded to the
simulation's integer units (`simulate.des.ports.SCALE`), so (1) holds in its own arithmetic.

The value returned is a dual bound: HiGHS's multipliers, made feasible (negative ones dropped),
re-evaluated in float64 by weak duality over the variables' boxes, plus a 1e-9 relative margin,
so a solver tolerance can never make the bound smaller than the LP's true maximum.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: relative margin added to the dual bound (float64 rounding of the weak-duality sum)
MARGIN = 1e-9


@dataclass
class Slot:
    """One (resource, domain): capacity, the `k` of (1), members as (thread, d, i)."""

    capacity: float
    k: float
    members: list[tuple[int, float, float]]
    colocated: bool = True  # one real domain (False: a relaxation's sum of domains)


@dataclass
class FluidProblem:
    """The data of the fluid LP (one plan, or a relaxation over plans: `solver.certify.fluid_max`)."""

    clock: float
    n_instances: int
    groups: list[tuple[int, tuple[int, ...]]]  # (instance, threads) per group
    equal: list[bool]  # per group: its replicas process X_i / R each (else only their sum is known)
    bounded: bool  # bounded queues: every group processes exactly X_i
    w_lo: np.ndarray  # (T,) work per packet, lower end
    w_hi: np.ndarray  # (T,) upper end
    rho_min: np.ndarray  # (T,)
    rho_max: np.ndarray  # (T,)
    slots: list[Slot]
    locks: list[list[tuple[int, float]]] = field(default_factory=list)  # (thread, critical cycles)
    arrival: float | None = None  # packets per cycle per instance, None: saturated


@dataclass
class FluidResult:
    """The bound (packets/s, in the objective's sense) and the LP's own figures."""

    value: float  # the certified upper bound
    primal: float  # HiGHS's optimum (at most `value`)
    per_instance: list[float]  # packets/s at HiGHS's optimum
    objective: str


def plan_problem(graph, settings) -> FluidProblem:
    """The fluid LP of a compiled plan (`simulate.model.ThreadGraph`) under `DesSettings`."""
    from tasksolve.simulate.des.units import held

    s = graph.structure
    T = graph.n_threads
    capacity, demand, idle = held(graph.capacity, s.demand, s.idle_demand)
    keyed: dict[tuple[int, int], list[tuple[int, float, float]]] = {}
    caps: dict[tuple[int, int], float] = {}
    for t in range(T):
        for r in range(len(s.resources)):
            d, i = float(demand[t, r]), float(idle[t, r])
            if (d == 0 and i == 0) or not np.isfinite(capacity[r]):
                continue
            key = (r, graph.domain(t, r))
            keyed.setdefault(key, []).append((t, d, i))
            caps[key] = float(capacity[r])
    slots = [slot(caps[key], members) for key, members in keyed.items()]
    rho_min, rho_max = thread_rates(T, slots)
    w_lo, w_hi = work_range(graph, settings.shared_queue)
    return FluidProblem(
        clock=graph.clock,
        n_instances=len(s.instances),
        groups=[(g.instance, g.threads) for g in s.groups],
        equal=equal_split(s, settings),
        bounded=settings.queue_capacity is not None,
        w_lo=w_lo,
        w_hi=w_hi,
        rho_min=rho_min,
        rho_max=rho_max,
        slots=slots,
        locks=lock_rows(s) if "locks" not in graph.ideal else [],
        arrival=None if settings.arrival == "saturated" else settings.rate / graph.clock,
    )


def slot(capacity: float, members: list[tuple[int, float, float]]) -> Slot:
    """A slot with the `k` of (1): ``min(1, C / sum max(d, i))``."""
    peak = sum(max(d, i) for _, d, i in members)
    return Slot(capacity, min(1.0, capacity / peak) if peak > 0 else 1.0, members)


def thread_rates(T: int, slots: list[Slot]) -> tuple[np.ndarray, np.ndarray]:
    """(rho_min, rho_max) per thread: its rate with every other member of its slots at
    ``max(d, i)`` and at ``min(d, i)`` (only slots it demands while busy limit it)."""
    lo, hi = np.ones(T), np.ones(T)
    for sl in slots:
        worst = sum(max(d, i) for _, d, i in sl.members)
        best = sum(min(d, i) for _, d, i in sl.members)
        for t, d, i in sl.members:
            if d <= 0:
                continue
            load_worst = worst - max(d, i) + d
            load_best = best - min(d, i) + d
            lo[t] = min(lo[t], sl.capacity / load_worst if load_worst > sl.capacity else 1.0)
            hi[t] = min(hi[t], sl.capacity / load_best if load_best > sl.capacity else 1.0)
    return lo, hi


def equal_split(structure, settings) -> list[bool]:
    """Per group: do its replicas each process ``X_i / R`` packets per cycle in the long run?

    Round robin sends packet k to replica ``k mod R``, but replicas are held to the same pace only
    by a thread that sees every packet: a group of one thread processes packets in order, so
    with bounded queues the departed packets are, up to what the queues hold, a prefix 0..N and
    every residue class gets its share.  Without such a group the replicas can form independent
    chains (two saturated entry replicas each feeding their own consumer replica run at their
    own speeds), and with unbounded queues nothing ties them: then only the group's total is
    known.  A shared queue never fixes the split."""
    instances = {g.instance for g in structure.groups if len(g.threads) == 1}
    bounded = settings.queue_capacity is not None
    return [
        len(g.threads) == 1 or (bounded and not settings.shared_queue and g.instance in instances)
        for g in structure.groups
    ]


def work_range(graph, shared_queue: bool) -> tuple[np.ndarray, np.ndarray]:
    """Mean work per packet, exact under round robin; its [min, max] over the producer replicas
    when replicas share a queue (which replica made a packet is then decided at run time).  A
    thread whose optimistic sections fail on conflicts (`simulate.locks.conflicted`) has no upper
    end (infinite: the LP drops its ``y <= x w_hi``); its lower end charges the least conflict."""
    from tasksolve.simulate.locks import conflicted

    work = np.asarray(graph.work, dtype=float)
    if not shared_queue:
        lo, hi = work, work.copy()
    else:
        base = work - np.asarray(graph.mean_comm, dtype=float)
        lo = base + np.array([sum(min(c) for c in per_pred) for per_pred in graph.comm])
        hi = base + np.array([sum(max(c) for c in per_pred) for per_pred in graph.comm])
    hi[conflicted(graph.structure)] = np.inf
    return lo, hi


def lock_rows(structure) -> list[list[tuple[int, float]]]:
    """Per lock, (holder thread, critical cycles per packet) (`simulate.locks.lock_holdings`)."""
    from tasksolve.simulate.locks import lock_holdings

    rows: dict[int, list[tuple[int, float]]] = {}
    for lock, t, cycles in lock_holdings(structure):
        rows.setdefault(lock, []).append((t, cycles))
    return list(rows.values())


#: rounds of joint-state cuts (constraint 9, `solver.certify.fluid_cuts`) per LP
CUT_ROUNDS = 6


def solve_problem(
    problem: FluidProblem, objective: str, cut_rounds: int = CUT_ROUNDS, enough: float = -np.inf
) -> FluidResult:
    """Maximise the total (``total_throughput``) or the smallest (``min_throughput``) instance
    throughput of the fluid LP; returns the dual-certified bound in packets/s.  Cuts stop once
    the LP's optimum is at most `enough` packets/s (`fluid_max.enumerated_max`: a class that
    cannot beat the best bound found needs no tighter one; the value is still a valid bound)."""
    from tasksolve.solver.certify.fluid_cuts import neighbourhoods
    from tasksolve.solver.certify.fluid_lp import build, certified_max

    if objective not in ("total_throughput", "min_throughput"):
        raise ValueError(f"the fluid bound bounds throughput, not `{objective}`")
    clock = problem.clock
    primal, bound, rates = certified_max(build(problem, objective))  # constraints 1-8
    nbs = neighbourhoods(problem.slots) if cut_rounds and primal > enough / clock else []
    if nbs:  # the same LP with the pairs (9) needs, then its cuts
        primal, bound, rates = certified_max(build(problem, objective, nbs), nbs, cut_rounds, enough / clock)
    return FluidResult(
        value=bound * clock * (1 + MARGIN),
        primal=primal * clock,
        per_instance=[float(x) * clock for x in rates],
        objective=objective,
    )


def plan_bound(spec, plan=None, *, graph=None, settings=None, objective: str | None = None) -> FluidResult:
    """The fluid bound of one plan (a `specs.Plan`, or a compiled `graph`) on the simulation with
    `settings` (default: the spec's ``oracle`` section)."""
    from tasksolve.simulate.des import DesSettings
    from tasksolve.simulate.model import compile_plan

    if graph is None:
        graph = compile_plan(spec, plan)
    settings = settings or DesSettings.from_spec(spec)
    return solve_problem(plan_problem(graph, settings), objective or spec.objective)
