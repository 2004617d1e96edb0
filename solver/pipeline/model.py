"""The CP-SAT model of the pipeline problem: grouping, replication and the mapping onto the
topology with communication costs and resource contention, in one model of the closed form of
`solver.pipeline.problem` (which states the model; this encodes it).

Variables (``G = min(tasks, C)`` group slots, ``C`` usable contexts, times in ticks):

* ``x[t,g]`` -- task t runs in group g.  Slots are numbered by their smallest task
  (``x[t,g] => x[t',g-1]`` for some ``t' < t``, and ``x[t,g] = 0`` for ``g > t``), which removes
  the slot permutations and makes the used slots a prefix.
* Placement is modelled by **bins** (`solver.pipeline.bins.Bins`): a sharing level is *effective* when some message
  cost changes there (`Bins.comm`), a ``max_threads`` cap applies, or a demanded resource is
  shared there; the bins are the domains of the deepest effective level, and the contexts of one
  bin are interchangeable for every cost and every load (the T2's 16 pipes, where the
  instruction unit is shared; the Xeon's 4 L2 pairs; one bin when nothing depends on placement).
  ``y[g,d]`` -- how many replicas of group g run in bin d (at most the bin's contexts in all);
  ``R_g = sum_d y[g,d]``, with ``rep[g,r] <=> R_g = r``; ``max_threads`` as sums per domain.
  A task whose stage the spec fixes at N replicas (`solver.pipeline.candidates`, "Fixed
  replicas") forces ``x[t,g] => rep[g,N]`` (two different counts then never share a slot); the
  ``max_replicas`` cap bounds the other groups only (``R_g <= cap`` unless a fixed task is in g).
  Symmetry: interchangeable sibling domains (same parent, same shape) carry non-increasing
  thread counts.
* Communication of edge ``e = u -> v``: ``same_e = OR_g (x[u,g] and x[v,g])`` (free inside a
  group).  Otherwise the cost is that of the innermost level whose one domain holds every
  context of both groups: ``occ[g,k,D] <=> sum_{d in D} y[g,d] >= 1`` (group g has a replica in
  domain D of comm level k), ``occT[t,k,D] = sum_g x[t,g] occ[g,k,D]``,
  ``together[e,k] <=> at most one domain D of level k holds contexts of u's or v's group``;
  ``cost_e = cost(machine) + sum_k together[e,k] (cost(k) - cost(previous comm level))``
  (exact: costs only change at comm levels and ``together`` is nested outward).  Edges whose
  cost does not depend on placement skip these terms.  This is the **worst replica pair**
  (`evaluate(..., comm="lca")`); the closed form charges each replica the mean over the producer
  replicas it hears from, which is never more.  So the model is exact when every crossing edge
  costs the same wherever its ends are, or joins groups whose contexts all share that level
  (e.g. unreplicated groups), and otherwise an upper bound of the closed form's period and
  latency: a plan it finds within the bound is within it, and the figures reported always come
  from `evaluate` (`tests/pipeline/test_exact.py` checks both against brute force).
* ``T_g = sum_t w_t x[t,g] + sum_e [x[v_e,g]] cost_e`` (group time before contention).
* Contention (as `solver.binding.model`; units in `solver.pipeline.problem`, "Units"):
  ``dem[g,r] W_g >= sum_t w_t demand[t,r] x[t,g]`` with ``W_g`` the group's work (the mean
  demand rounded up to a thousandth: the optimum takes the smallest), ``pos[g,r]`` when some task
  of g demands r; loads ``L[r,D] = sum_g (sum_{d in D} y[g,d]) dem[g,r]``; one slowdown per group,
  its slowest replica's: ``S_g >= Q`` and ``S_g capacity_r >= Q L[r, D_r(d)]`` for every bin d it
  occupies and every r it demands; ``E_g = T_g S_g`` (ticks times Q; ``E_g = T_g`` and ``Q = 1``
  without demands).
* Period ``rep[g,r] => M E_g <= r Pm`` with ``M = lcm(1..R_max)`` (so ``Pm = M Q max_g T_g
  S_g/(Q R_g)`` exactly when ``R_max <= 16``; beyond, ``M = lcm(1..16)`` and the period is
  resolved to ``1/M`` tick -- the reported figures always come from `evaluate`; the fixed
  counts join the lcm while it stays below `MAX_MULTIPLIER`), and the
  redundant cut ``M sum_g E_g <= C Pm`` (no thread is busy more than all the time).
* Latency: group start ``S_g``; task start/end equal to its group's start / start ``+ E_g``;
  a crossing edge ``u -> v`` forces ``start(v) >= end(u)``; ``Lat >= end(t)`` and
  ``Lat <= Q L0``.  Group times are positive, so these constraints also forbid cycles between
  groups: the longest path is exactly the model's latency.

**The relaxation** (``build_model(..., relaxed=True)``, `solver.pipeline.bound`): the same model
with the two pessimistic charges turned optimistic, so that for every plan its model period and
latency are at most the closed form's with exact demands (the analytic oracle's): a crossing edge
costs the level of the *closest* replica pair of its two groups (``touch[e,k] => some domain D of
level k holds a replica of each``, ``cost_e = cost(machine) + sum_k touch[e,k] (cost(k) -
cost(previous comm level))``; each consumer replica's mean over the producers it hears from is at
least that pair's cost when costs never rise inward), and a group's demand is its mean rounded
*down* to a thousandth (``dem W + W >= sum w demand + pos``).  Every replica's slowdown is at least
1 and its mean message cost on edge e at least that of its own closest producer replica, so for
each incoming edge e the slowest replica's time is also at least ``T_g - touch_e + all_e``, with
``all_e`` the cost at the levels where *every* consumer replica shares a domain with some producer
replica (``all[e,k]``): ``E_g >= Q (T_g - touch_e + all_e)``, E_g then a variable at least
``T_g S_g`` and these (`relaxation.slowest_replica`).  Its optimal period is then a lower
bound of every plan's, and CP-SAT's dual bound of it a lower bound of the best period.

`add_hint` hints the model with a candidate; `extract` reads a solution back as a candidate (each
bin's contexts handed out in order).  The objectives and the solve are `solver.pipeline.cpsat`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import reduce

from ortools.sat.python import cp_model

from tasksolve.solver.errors import SolverFailed
from tasksolve.solver.pipeline.bins import Bins
from tasksolve.solver.pipeline.candidates import Candidate, Group, depth_stages
from tasksolve.solver.pipeline.problem import PipelineProblem
from tasksolve.solver.pipeline.relaxation import relaxed_costs, slowest_replica

MAX_EXACT_REPLICAS = 16
MAX_MULTIPLIER = 2**24  # a fixed replica count joins the period multiplier while it stays below this
INT_LIMIT = 2**62  # CP-SAT's integer domains


def period_multiplier(max_replicas: int, fixed=()) -> int:
    """``lcm(1..min(max_replicas, 16))``, and of each fixed count while below `MAX_MULTIPLIER`."""
    m = reduce(math.lcm, range(1, min(max_replicas, MAX_EXACT_REPLICAS) + 1), 1)
    for count in sorted(set(fixed) - {0}):
        m = math.lcm(m, count) if math.lcm(m, count) <= MAX_MULTIPLIER else m
    return m


@dataclass
class PipelineModel:
    model: cp_model.CpModel
    problem: PipelineProblem
    bins: Bins
    x: dict
    y: dict
    rep: dict
    period: cp_model.IntVar
    latency: cp_model.IntVar
    multiplier: int
    unit: int  # Q: period is Pm / (M Q) ticks, latency Lat / Q ticks
    slots: int
    max_replicas: int
    exact_period: bool = True  # whether ``Pm = M x period`` exactly (M a multiple of every replica count)


class _Builder:
    """Builds the model block by block, in the order of the module docstring."""

    def __init__(self, problem: PipelineProblem, max_replicas: int | None, relaxed: bool = False) -> None:
        self.m = cp_model.CpModel()
        self.problem = problem
        self.relaxed = relaxed
        self.n, self.C = problem.n, problem.n_contexts
        self.G = min(self.n, self.C)
        self.bins = Bins.of(problem)
        self.B = len(self.bins.contexts)
        self.cap = self.C if max_replicas is None else max(1, min(self.C, max_replicas))  # free groups' cap
        self.fixed = problem.fixed_replicas or (0,) * self.n
        self.Rmax = max(self.cap, min(self.C, max(self.fixed)))
        self.M = period_multiplier(self.cap, self.fixed)
        self.exact = self.cap <= MAX_EXACT_REPLICAS and all(self.M % f == 0 for f in self.fixed if f)
        self.horizon = problem.sequential + sum(e.worst for e in problem.edges)

    def slots(self, t: int) -> range:
        """The group slots task t may take (slots are numbered by their smallest task)."""
        return range(min(self.G, t + 1))

    def grouping(self) -> None:
        """x[t,g], slots numbered by their smallest task, used[g]."""
        m, n, G = self.m, self.n, self.G
        self.x = {(t, g): m.new_bool_var(f"x[{t},{g}]") for t in range(n) for g in self.slots(t)}
        for t in range(n):
            m.add_exactly_one(self.x[t, g] for g in self.slots(t))
        for t in range(n):
            for g in range(1, min(G, t + 1)):
                m.add_bool_or([self.x[t2, g - 1] for t2 in range(g - 1, t)]).only_enforce_if(self.x[t, g])
        self.used = []
        for g in range(G):
            u = m.new_bool_var(f"used[{g}]")
            m.add_max_equality(u, [self.x[t, g] for t in range(g, n)])
            self.used.append(u)

    def replicas(self) -> None:
        """y[g,d] replicas of group g in bin d, R_g and rep[g,r] <=> R_g = r."""
        m, G, B, Rmax, bins = self.m, self.G, self.B, self.Rmax, self.bins
        self.y = {
            (g, d): m.new_int_var(0, min(Rmax, len(bins.contexts[d])), f"y[{g},{d}]")
            for g in range(G)
            for d in range(B)
        }
        for d in range(B):
            m.add(sum(self.y[g, d] for g in range(G)) <= len(bins.contexts[d]))
        self.rep = {}
        self.R = []
        for g in range(G):
            r_var = m.new_int_var(0, Rmax, f"R[{g}]")
            self.R.append(r_var)
            m.add(r_var == sum(self.y[g, d] for d in range(B)))
            for r in range(1, Rmax + 1):
                self.rep[g, r] = m.new_bool_var(f"rep[{g},{r}]")
            m.add(sum(self.rep[g, r] for r in range(1, Rmax + 1)) == self.used[g])
            m.add(r_var == sum(r * self.rep[g, r] for r in range(1, Rmax + 1)))
        self.fixed_counts()

    def fixed_counts(self) -> None:
        """``x[t,g] => rep[g,N]`` for a task whose stage is fixed at N (never, N above R_max); the
        free groups capped at `cap` (module docstring)."""
        m, fixed = self.m, self.fixed
        for t in (t for t in range(self.n) if fixed[t]):
            for g in self.slots(t):
                if fixed[t] <= self.Rmax:
                    m.add_implication(self.x[t, g], self.rep[g, fixed[t]])
                else:
                    m.add(self.x[t, g] == 0)
        if self.cap < self.Rmax:
            for g in range(self.G):
                holds = [self.x[t, g] for t in range(g, self.n) if fixed[t]]
                m.add(self.R[g] <= self.cap).only_enforce_if([~x for x in holds])

    def bin_load(self, members):
        return sum(self.y[g, d] for g in range(self.G) for d in members)

    def caps_and_symmetry(self) -> None:
        """``max_threads`` per domain; interchangeable sibling domains by non-increasing load."""
        m, bins = self.m, self.bins
        for level, cap in self.problem.max_threads:
            if level < 0:
                m.add(self.bin_load(range(self.B)) <= cap)
            elif level in bins.domain:
                domains: dict[int, list[int]] = {}
                for d in range(self.B):
                    domains.setdefault(bins.domain[level][d], []).append(d)
                for members in domains.values():
                    m.add(self.bin_load(members) <= cap)
        for members in bins.sibling_classes():
            loads = [self.bin_load(bins.leaves(c)) for c in members]
            for a, b in zip(loads, loads[1:]):
                m.add(a >= b)

    def occupancy(self) -> None:
        """occ[g,k,D] and occT[t,k,D] for the tasks of edges whose cost depends on placement."""
        m, bins, x = self.m, self.bins, self.x
        self.occT = {}
        needs_mapping = [e for e in self.problem.edges if len({e.at(k) for k in [-1] + bins.comm}) > 1]
        if not needs_mapping:
            return
        occ = {}
        for k in bins.comm:
            members_of: dict[int, list[int]] = {}
            for d in range(self.B):
                members_of.setdefault(bins.domain[k][d], []).append(d)
            for D, members in members_of.items():
                for g in range(self.G):
                    v = m.new_bool_var(f"occ[{g},{k},{D}]")
                    total = sum(self.y[g, d] for d in members)
                    m.add(total >= 1).only_enforce_if(v)
                    m.add(total == 0).only_enforce_if(~v)
                    occ[g, k, D] = v
        n_domains = {k: max(bins.domain[k]) + 1 for k in bins.comm}
        for t in sorted({e.source for e in needs_mapping} | {e.target for e in needs_mapping}):
            for k in bins.comm:
                for D in range(n_domains[k]):
                    terms = []
                    for g in self.slots(t):
                        a = m.new_bool_var(f"a[{t},{g},{k},{D}]")
                        m.add_implication(a, x[t, g])
                        m.add_implication(a, occ[g, k, D])
                        m.add_bool_or([a, ~x[t, g], ~occ[g, k, D]])
                        terms.append(a)
                    v = m.new_bool_var(f"occT[{t},{k},{D}]")
                    m.add(v == sum(terms))
                    self.occT[t, k, D] = v

    def same_group(self) -> None:
        """same_e = OR_g (x[u,g] and x[v,g]) for every edge u -> v."""
        m, x = self.m, self.x
        self.same = []
        for i, e in enumerate(self.problem.edges):
            u, v = e.source, e.target
            ands = []
            for g in range(min(self.G, u + 1, v + 1)):
                s_var = m.new_bool_var(f"s[{i},{g}]")
                m.add_implication(s_var, x[u, g])
                m.add_implication(s_var, x[v, g])
                m.add_bool_or([s_var, ~x[u, g], ~x[v, g]])
                ands.append(s_var)
            b_var = m.new_bool_var(f"same[{i}]")
            m.add(b_var == sum(ands))
            self.same.append(b_var)

    def edge_cost(self, i: int, e) -> cp_model.IntVar:
        """cost_e: zero inside a group, else the cost at the innermost level holding both groups."""
        m, bins, same = self.m, self.bins, self.same
        cost = m.new_int_var(0, e.worst, f"cost[{i}]")
        if len({e.at(k) for k in [-1] + bins.comm}) == 1:
            m.add(cost == e.at(-1)).only_enforce_if(~same[i])
        else:
            expr = e.at(-1)
            previous = -1
            for k in bins.comm:
                together = m.new_bool_var(f"together[{i},{k}]")
                unions = []
                for D in range(max(bins.domain[k]) + 1):
                    w = m.new_bool_var(f"uni[{i},{k},{D}]")
                    m.add_max_equality(w, [self.occT[e.source, k, D], self.occT[e.target, k, D]])
                    unions.append(w)
                m.add(sum(unions) <= 1).only_enforce_if(together)
                m.add(sum(unions) >= 2).only_enforce_if(~together)
                expr = expr + together * (e.at(k) - e.at(previous))
                previous = k
            m.add(cost == expr).only_enforce_if(~same[i])
        m.add(cost == 0).only_enforce_if(same[i])
        return cost

    def group_times(self) -> None:
        """T_g: work plus the message costs its tasks pay (ticks, before contention); relaxed,
        also T2_g, the same with the cost every replica pays at least (`relaxation.relaxed_costs`)."""
        m, G, x, problem = self.m, self.G, self.x, self.problem
        comm_in: dict[int, list] = {g: [] for g in range(G)}
        self.pairs: dict[int, list] = {g: [] for g in range(G)}  # relaxed: (touch, all) charges
        for i, e in enumerate(problem.edges):
            if e.worst == 0:
                continue
            costs = relaxed_costs(self, i, e) if self.relaxed else (self.edge_cost(i, e),)
            for g in range(min(G, e.target + 1)):
                charged = []
                for cost in costs:
                    c_in = m.new_int_var(0, e.worst, f"cin[{i},{g}]")
                    m.add(c_in == cost).only_enforce_if(x[e.target, g])
                    m.add(c_in == 0).only_enforce_if(~x[e.target, g])
                    charged.append(c_in)
                comm_in[g].append(charged[0])
                if self.relaxed:
                    self.pairs[g].append(tuple(charged))
        self.T = []
        for g in range(G):
            tg = m.new_int_var(0, self.horizon, f"T[{g}]")
            m.add(tg == sum(problem.work[t] * x[t, g] for t in range(g, self.n)) + sum(comm_in[g]))
            self.T.append(tg)

    def contention(self) -> None:
        """dem[g,r] (rounded-up mean demand), loads per domain, S_g (slowest replica's slowdown
        times Q) and E_g = T_g S_g; without demands E_g = T_g (Q = 1)."""
        problem = self.problem
        if not problem.contention:
            self.Q, self.E, self.Smax = 1, self.T, 1
            return
        m, G, x, bins = self.m, self.G, self.x, self.bins
        self.Q = Q = problem.slowdown_unit
        resources = problem.resources
        top = [max(problem.demand[t][r] for t in range(self.n)) for r in range(len(resources))]
        worst = max(self.C * top[r] for r in range(len(resources)))
        self.Smax = max(Q, -(-Q * worst // min(r.capacity for r in resources)))
        dem, pos = {}, {}
        for g in range(G):
            tasks = range(g, self.n)
            wg = m.new_int_var(0, problem.sequential, f"W[{g}]")
            m.add(wg == sum(problem.work[t] * x[t, g] for t in tasks))
            for r in range(len(resources)):
                users = [t for t in tasks if problem.demand[t][r] > 0]
                if not users:
                    continue
                pos[g, r] = m.new_bool_var(f"pos[{g},{r}]")
                m.add_max_equality(pos[g, r], [x[t, g] for t in users])
                dem[g, r] = m.new_int_var(0, top[r], f"dem[{g},{r}]")
                m.add(dem[g, r] <= top[r] * pos[g, r])
                prod = m.new_int_var(0, top[r] * problem.sequential, f"dw[{g},{r}]")
                m.add_multiplication_equality(prod, [dem[g, r], wg])
                exact = sum(problem.work[t] * problem.demand[t][r] * x[t, g] for t in users)
                if self.relaxed:  # the mean rounded down: (dem + 1) W > sum w demand
                    m.add(prod + wg >= exact + pos[g, r])
                else:  # the mean rounded up
                    m.add(prod >= exact)
        load = {}
        for r in range(len(resources)):
            domains: dict[int, list[int]] = {}
            for d in range(self.B):
                domains.setdefault(problem.resource_domain(r, bins.contexts[d][0]), []).append(d)
            for D, members in domains.items():
                terms = []
                for g in range(G):
                    if (g, r) not in dem:
                        continue
                    count = m.new_int_var(0, min(self.Rmax, sum(len(bins.contexts[d]) for d in members)), "")
                    m.add(count == sum(self.y[g, d] for d in members))
                    part = m.new_int_var(0, top[r] * self.C, f"ld[{g},{r},{D}]")
                    m.add_multiplication_equality(part, [count, dem[g, r]])
                    terms.append(part)
                load[r, D] = sum(terms)
        self.E = []
        for g in range(G):
            sg = m.new_int_var(Q, self.Smax, f"S[{g}]")
            for d in range(self.B):
                here = m.new_bool_var(f"in[{g},{d}]")
                m.add(self.y[g, d] >= 1).only_enforce_if(here)
                m.add(self.y[g, d] == 0).only_enforce_if(~here)
                for r, res in enumerate(resources):
                    if (g, r) in pos:
                        D = problem.resource_domain(r, bins.contexts[d][0])
                        m.add(sg * res.capacity >= Q * load[r, D]).only_enforce_if([here, pos[g, r]])
            eg = m.new_int_var(0, self.horizon * self.Smax, f"E[{g}]")
            m.add_multiplication_equality(eg, [self.T[g], sg])
            self.E.append(eg)

    def period(self) -> None:
        """Pm = M Q max_g T_g S_g / R_g (exact for R_max <= 16), with the redundant cut."""
        m, G = self.m, self.G
        top = self.M * self.horizon * self.Smax * max(1, self.C)
        if top >= INT_LIMIT:
            raise SolverFailed(
                f"the pipeline model's integers reach {top:.3g}, beyond CP-SAT's 64-bit domains "
                f"({self.problem.scale} ticks per cycle, slowdown unit 1/{self.Q}, period multiplier {self.M})"
            )
        self.Pm = m.new_int_var(0, self.M * self.horizon * self.Smax, "Pm")
        for g in range(G):
            for r in range(1, self.Rmax + 1):
                m.add(self.M * self.E[g] <= r * self.Pm).only_enforce_if(self.rep[g, r])
        # redundant: sum_g E_g <= sum_g R_g P <= C P (every thread is busy at most all the time)
        m.add(self.M * sum(self.E) <= min(self.C, self.Rmax * G) * self.Pm)

    def latency(self, latency_bound: int | None) -> None:
        """Group starts, task start/end (E_g apart), crossing edges in order, Lat and the bound L0
        (all times Q units per tick)."""
        m, n, x, horizon = self.m, self.n, self.x, self.horizon * self.Smax
        S = [m.new_int_var(0, horizon, f"S[{g}]") for g in range(self.G)]
        st = [m.new_int_var(0, horizon, f"st[{t}]") for t in range(n)]
        en = [m.new_int_var(0, horizon, f"en[{t}]") for t in range(n)]
        for t in range(n):
            for g in self.slots(t):
                m.add(st[t] == S[g]).only_enforce_if(x[t, g])
                m.add(en[t] == S[g] + self.E[g]).only_enforce_if(x[t, g])
        for i, e in enumerate(self.problem.edges):
            m.add(st[e.target] >= en[e.source]).only_enforce_if(~self.same[i])
        self.lat = m.new_int_var(0, horizon, "Lat")
        for t in range(n):
            m.add(self.lat >= en[t])
        m.add(self.lat >= self.Q * self.problem.critical_path)
        if latency_bound is not None:
            m.add(self.lat <= self.Q * latency_bound)


def build_model(
    problem: PipelineProblem,
    *,
    latency_bound: int | None = None,
    max_replicas: int | None = None,
    relaxed: bool = False,
) -> PipelineModel:
    """The CP-SAT model (module docstring).  `latency_bound` in ticks (None: unconstrained);
    `relaxed`: the relaxation of the module docstring (optimistic messages and demands)."""
    b = _Builder(problem, max_replicas, relaxed)
    b.grouping()
    b.replicas()
    b.caps_and_symmetry()
    b.occupancy()
    b.same_group()
    b.group_times()
    b.contention()
    if relaxed:
        slowest_replica(b)
    b.period()
    b.latency(latency_bound)
    return PipelineModel(
        model=b.m,
        problem=problem,
        bins=b.bins,
        x=b.x,
        y=b.y,
        rep=b.rep,
        period=b.Pm,
        latency=b.lat,
        multiplier=b.M,
        unit=b.Q,
        slots=b.G,
        max_replicas=b.Rmax,
        exact_period=b.exact,
    )


def add_hint(pm: PipelineModel, cand: Candidate) -> None:
    """Hint the model with a mapped candidate (groups renumbered by smallest task, bins permuted
    to the model's symmetry-breaking order)."""
    if not cand.mapped or len(cand.groups) > pm.slots:
        return
    order = sorted(cand.groups, key=lambda g: min(g.tasks))
    slot_of = {}
    for g, grp in enumerate(order):
        for t in grp.tasks:
            slot_of[t] = g
    bin_of = {c: d for d, cs in enumerate(pm.bins.contexts) for c in cs}
    counts = [[0] * pm.slots for _ in pm.bins.contexts]
    for g, grp in enumerate(order):
        for c in grp.contexts:
            if c in bin_of:
                counts[bin_of[c]][g] += 1
    counts = pm.bins.canonical(counts)
    for (t, g), var in pm.x.items():
        pm.model.add_hint(var, slot_of[t] == g)
    for (g, d), var in pm.y.items():
        pm.model.add_hint(var, counts[d][g])
    for (g, r), var in pm.rep.items():
        pm.model.add_hint(var, g < len(order) and order[g].replicas == r)


def extract(pm: PipelineModel, solver: cp_model.CpSolver) -> Candidate:
    """The solution as a mapped candidate (each bin's contexts handed out in order)."""
    problem = pm.problem
    free = [list(cs) for cs in pm.bins.contexts]
    groups = []
    for g in range(pm.slots):
        tasks = tuple(t for t in range(problem.n) if (t, g) in pm.x and solver.value(pm.x[t, g]))
        if not tasks:
            continue
        contexts = []
        for d in range(len(free)):
            k = int(solver.value(pm.y[g, d]))
            contexts += free[d][:k]
            free[d] = free[d][k:]
        groups.append(Group(tasks, len(contexts), tuple(contexts)))
    cand = Candidate(tuple(groups))
    return Candidate(cand.groups, depth_stages(problem, cand))
