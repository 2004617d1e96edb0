"""The pipeline problem solved exactly with CP-SAT: grouping, replication and the mapping onto the
topology with communication costs, in one model of the closed form of
`solver.pipeline.problem` (which states the model; this encodes it).

Variables (``G = min(tasks, C)`` group slots, ``C`` usable contexts, times in ticks):

* ``x[t,g]`` -- task t runs in group g.  Slots are numbered by their smallest task
  (``x[t,g] => x[t',g-1]`` for some ``t' < t``, and ``x[t,g] = 0`` for ``g > t``), which removes
  the slot permutations and makes the used slots a prefix.
* Placement is modelled by **bins** (`Bins`): a sharing level is *effective* when some message
  cost changes there (or a ``max_threads`` cap applies); the bins are the domains of the deepest
  effective level, and the contexts of one bin are interchangeable for every cost (the T2's 8
  cores when pipe and core cost the same; the Xeon's 4 L2 pairs when socket and machine cost the
  same; one bin when costs do not depend on placement).  ``y[g,d]`` -- how many replicas of group
  g run in bin d (at most the bin's contexts in all); ``R_g = sum_d y[g,d]``, with
  ``rep[g,r] <=> R_g = r``; ``max_threads`` as sums per domain.  Symmetry: interchangeable
  sibling domains (same parent, same shape) carry non-increasing thread counts.
* Communication of edge ``e = u -> v``: ``same_e = OR_g (x[u,g] and x[v,g])`` (free inside a
  group).  Otherwise the cost is that of the innermost level whose one domain holds every
  context of both groups: ``occ[g,k,D] <=> sum_{d in D} y[g,d] >= 1`` (group g has a replica in
  domain D of effective level k), ``occT[t,k,D] = sum_g x[t,g] occ[g,k,D]``,
  ``together[e,k] <=> at most one domain D of level k holds contexts of u's or v's group``;
  ``cost_e = cost(machine) + sum_k together[e,k] (cost(k) - cost(previous effective level))``
  (exact: costs only change at effective levels and ``together`` is nested outward).  Edges
  whose cost does not depend on placement skip these terms.
* ``T_g = sum_t w_t x[t,g] + sum_e [x[v_e,g]] cost_e`` (group time), period
  ``rep[g,r] => M T_g <= r Pm`` with ``M = lcm(1..R_max)`` (so ``Pm = M max_g T_g/R_g`` exactly
  when ``R_max <= 16``; beyond, ``M = lcm(1..16)`` and the period is resolved to ``1/M`` tick --
  the reported figures always come from `evaluate`), and the redundant cut
  ``M sum_g T_g <= C Pm`` (no thread is busy more than all the time).
* Latency: group start ``S_g``; task start/end equal to its group's ``S_g`` / ``S_g + T_g``;
  a crossing edge ``u -> v`` forces ``start(v) >= end(u)``; ``Lat >= end(t)`` and
  ``Lat <= L0``.  Group times are positive, so these constraints also forbid cycles between
  groups: the longest path is exactly the model's latency.

Objective: minimise ``Pm`` (maximise throughput), then, the period fixed at its optimum, minimise
``Lat`` (second phase, with the time left).  Extraction hands each bin's contexts out in order.  `min_latency` minimises ``Lat`` alone (the smallest
achievable latency, for the "infeasible bound" message).  The solve is hinted with a candidate
(by default LATA's answer, or List's when only that one meets the bound).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce

from ortools.sat.python import cp_model

from solver import cpsat
from solver.pipeline.candidates import Candidate, Group, check_candidate, depth_stages
from solver.pipeline.evaluation import MethodResult, evaluate
from solver.pipeline.problem import PipelineError, PipelineProblem

MAX_EXACT_REPLICAS = 16


def period_multiplier(max_replicas: int) -> int:
    return reduce(lambda a, b: a * b // math.gcd(a, b), range(1, min(max_replicas, MAX_EXACT_REPLICAS) + 1), 1)


@dataclass
class Bins:
    """Where placement matters: the *effective* sharing levels (where some message cost changes,
    or a `max_threads` cap applies) and the **bins** -- the domains of the deepest effective level
    (one bin when there is none) -- whose contexts are interchangeable for every cost."""

    effective: list[int]
    level: int
    contexts: list[list[int]]                  # usable contexts of each bin
    domain: dict[int, list[int]]               # effective level -> dense domain index of each bin
    tree: list                                 # nested lists of bin indices, by effective level

    @classmethod
    def of(cls, problem: PipelineProblem) -> "Bins":
        K = problem.n_levels
        effective = set()
        for e in problem.edges:
            for k in range(K - 1):
                if e.at(k) != e.at(k - 1):
                    effective.add(k)
        for level, _ in problem.max_threads:
            if 0 <= level < K - 1:
                effective.add(level)
        eff = sorted(effective)
        level = eff[-1] if eff else -1
        by: dict[int, list[int]] = {}
        for c in problem.contexts:
            by.setdefault(0 if level < 0 else c // problem.strides[level], []).append(c)
        contexts = [by[d] for d in sorted(by)]
        domain: dict[int, list[int]] = {}
        for k in eff:
            raw = [cs[0] // problem.strides[k] for cs in contexts]
            dense = {d: i for i, d in enumerate(sorted(set(raw)))}
            domain[k] = [dense[d] for d in raw]

        def subtree(bins: list[int], depth: int):
            if depth >= len(eff) or eff[depth] == level:
                return bins
            k = eff[depth]
            groups: dict[int, list[int]] = {}
            for b in bins:
                groups.setdefault(domain[k][b], []).append(b)
            return [subtree(groups[d], depth + 1) for d in sorted(groups)]

        tree = subtree(list(range(len(contexts))), 0)
        return cls(eff, level, contexts, domain, tree)

    def leaves(self, node) -> list[int]:
        return [node] if isinstance(node, int) else [b for child in node for b in self.leaves(child)]

    def shape(self, node):
        return len(self.contexts[node]) if isinstance(node, int) else tuple(self.shape(c) for c in node)

    def sibling_classes(self):
        """Lists of interchangeable sibling subtrees (same parent, same shape), in index order."""
        out = []

        def walk(node):
            if isinstance(node, int):
                return
            classes: dict = {}
            for child in node:
                classes.setdefault(self.shape(child), []).append(child)
            out.extend(c for c in classes.values() if len(c) > 1)
            for child in node:
                walk(child)

        walk(self.tree)
        return out

    def canonical(self, counts: list[list[int]]) -> list[list[int]]:
        """Per-bin count vectors permuted among interchangeable siblings so that loads do not
        increase along each class (the symmetry breaking of the model)."""
        content = {b: list(counts[b]) for b in range(len(self.contexts))}

        def load(node) -> int:
            return sum(sum(content[b]) for b in self.leaves(node))

        def walk(node):
            if isinstance(node, int):
                return
            classes: dict = {}
            for child in node:
                classes.setdefault(self.shape(child), []).append(child)
            for members in classes.values():
                if len(members) < 2:
                    continue
                snapshot = [[content[b] for b in self.leaves(c)] for c in members]
                order = sorted(range(len(members)), key=lambda i: -sum(map(sum, snapshot[i])))
                for target, source in zip(members, order):
                    for b, vec in zip(self.leaves(target), snapshot[source]):
                        content[b] = vec
            for child in node:
                walk(child)

        walk(self.tree)
        return [content[b] for b in range(len(self.contexts))]


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
    slots: int
    max_replicas: int

    @property
    def exact_period(self) -> bool:
        """Whether ``Pm = M x period`` exactly (M a multiple of every replica count)."""
        return self.max_replicas <= MAX_EXACT_REPLICAS


def build_model(problem: PipelineProblem, *, latency_bound: int | None = None,
                max_replicas: int | None = None) -> PipelineModel:
    """The CP-SAT model (module docstring).  `latency_bound` in ticks (None: unconstrained)."""
    m = cp_model.CpModel()
    n, C = problem.n, problem.n_contexts
    G = min(n, C)
    bins = Bins.of(problem)
    B = len(bins.contexts)
    Rmax = C if max_replicas is None else max(1, min(C, max_replicas))
    M = period_multiplier(Rmax)
    horizon = problem.sequential + sum(e.worst for e in problem.edges)

    # grouping
    x = {(t, g): m.new_bool_var(f"x[{t},{g}]") for t in range(n) for g in range(min(G, t + 1))}
    for t in range(n):
        m.add_exactly_one(x[t, g] for g in range(min(G, t + 1)))
    for t in range(n):
        for g in range(1, min(G, t + 1)):
            m.add_bool_or([x[t2, g - 1] for t2 in range(g - 1, t)]).only_enforce_if(x[t, g])
    used = []
    for g in range(G):
        u = m.new_bool_var(f"used[{g}]")
        m.add_max_equality(u, [x[t, g] for t in range(g, n)])
        used.append(u)

    # replicas in bins
    y = {(g, d): m.new_int_var(0, min(Rmax, len(bins.contexts[d])), f"y[{g},{d}]") for g in range(G) for d in range(B)}
    for d in range(B):
        m.add(sum(y[g, d] for g in range(G)) <= len(bins.contexts[d]))
    rep = {}
    for g in range(G):
        r_var = m.new_int_var(0, Rmax, f"R[{g}]")
        m.add(r_var == sum(y[g, d] for d in range(B)))
        for r in range(1, Rmax + 1):
            rep[g, r] = m.new_bool_var(f"rep[{g},{r}]")
        m.add(sum(rep[g, r] for r in range(1, Rmax + 1)) == used[g])
        m.add(r_var == sum(r * rep[g, r] for r in range(1, Rmax + 1)))
    def bin_load(members):
        return sum(y[g, d] for g in range(G) for d in members)

    for level, cap in problem.max_threads:
        if level < 0:
            m.add(bin_load(range(B)) <= cap)
        elif level in bins.domain:
            domains: dict[int, list[int]] = {}
            for d in range(B):
                domains.setdefault(bins.domain[level][d], []).append(d)
            for members in domains.values():
                m.add(bin_load(members) <= cap)
    for members in bins.sibling_classes():   # symmetry: interchangeable siblings by load
        loads = [bin_load(bins.leaves(c)) for c in members]
        for a, b in zip(loads, loads[1:]):
            m.add(a >= b)

    # occupancy of the effective levels' domains
    occT = {}
    needs_mapping = [e for e in problem.edges if len({e.at(k) for k in [-1] + bins.effective}) > 1]
    if needs_mapping:
        occ = {}
        for k in bins.effective:
            members_of: dict[int, list[int]] = {}
            for d in range(B):
                members_of.setdefault(bins.domain[k][d], []).append(d)
            for D, members in members_of.items():
                for g in range(G):
                    v = m.new_bool_var(f"occ[{g},{k},{D}]")
                    total = sum(y[g, d] for d in members)
                    m.add(total >= 1).only_enforce_if(v)
                    m.add(total == 0).only_enforce_if(v.Not())
                    occ[g, k, D] = v
        n_domains = {k: max(bins.domain[k]) + 1 for k in bins.effective}
        for t in sorted({e.source for e in needs_mapping} | {e.target for e in needs_mapping}):
            for k in bins.effective:
                for D in range(n_domains[k]):
                    terms = []
                    for g in range(min(G, t + 1)):
                        a = m.new_bool_var(f"a[{t},{g},{k},{D}]")
                        m.add_implication(a, x[t, g])
                        m.add_implication(a, occ[g, k, D])
                        m.add_bool_or([a, x[t, g].Not(), occ[g, k, D].Not()])
                        terms.append(a)
                    v = m.new_bool_var(f"occT[{t},{k},{D}]")
                    m.add(v == sum(terms))
                    occT[t, k, D] = v

    # same group?
    same = []
    for i, e in enumerate(problem.edges):
        u, v = e.source, e.target
        ands = []
        for g in range(min(G, u + 1, v + 1)):
            s_var = m.new_bool_var(f"s[{i},{g}]")
            m.add_implication(s_var, x[u, g])
            m.add_implication(s_var, x[v, g])
            m.add_bool_or([s_var, x[u, g].Not(), x[v, g].Not()])
            ands.append(s_var)
        b_var = m.new_bool_var(f"same[{i}]")
        m.add(b_var == sum(ands))
        same.append(b_var)

    # message costs paid by each group
    comm_in: dict[int, list] = {g: [] for g in range(G)}
    for i, e in enumerate(problem.edges):
        u, v = e.source, e.target
        if e.worst == 0:
            continue
        cost = m.new_int_var(0, e.worst, f"cost[{i}]")
        levels = [-1] + bins.effective
        if len({e.at(k) for k in levels}) == 1:
            m.add(cost == e.at(-1)).only_enforce_if(same[i].Not())
        else:
            expr = e.at(-1)
            previous = -1
            for k in bins.effective:
                together = m.new_bool_var(f"together[{i},{k}]")
                unions = []
                for D in range(max(bins.domain[k]) + 1):
                    w = m.new_bool_var(f"uni[{i},{k},{D}]")
                    m.add_max_equality(w, [occT[u, k, D], occT[v, k, D]])
                    unions.append(w)
                m.add(sum(unions) <= 1).only_enforce_if(together)
                m.add(sum(unions) >= 2).only_enforce_if(together.Not())
                expr = expr + together * (e.at(k) - e.at(previous))
                previous = k
            m.add(cost == expr).only_enforce_if(same[i].Not())
        m.add(cost == 0).only_enforce_if(same[i])
        for g in range(min(G, v + 1)):
            c_in = m.new_int_var(0, e.worst, f"cin[{i},{g}]")
            m.add(c_in == cost).only_enforce_if(x[v, g])
            m.add(c_in == 0).only_enforce_if(x[v, g].Not())
            comm_in[g].append(c_in)

    # group times and the period
    T = []
    for g in range(G):
        tg = m.new_int_var(0, horizon, f"T[{g}]")
        m.add(tg == sum(problem.work[t] * x[t, g] for t in range(g, n)) + sum(comm_in[g]))
        T.append(tg)
    Pm = m.new_int_var(0, M * horizon, "Pm")
    for g in range(G):
        for r in range(1, Rmax + 1):
            m.add(M * T[g] <= r * Pm).only_enforce_if(rep[g, r])
    # redundant: sum_g T_g <= sum_g R_g P <= C P (every thread is busy at most all the time)
    m.add(M * sum(T) <= min(C, Rmax * G) * Pm)

    # latency: start times of the groups, longest path through the crossing edges
    S = [m.new_int_var(0, horizon, f"S[{g}]") for g in range(G)]
    st = [m.new_int_var(0, horizon, f"st[{t}]") for t in range(n)]
    en = [m.new_int_var(0, horizon, f"en[{t}]") for t in range(n)]
    for t in range(n):
        for g in range(min(G, t + 1)):
            m.add(st[t] == S[g]).only_enforce_if(x[t, g])
            m.add(en[t] == S[g] + T[g]).only_enforce_if(x[t, g])
    for i, e in enumerate(problem.edges):
        m.add(st[e.target] >= en[e.source]).only_enforce_if(same[i].Not())
    lat = m.new_int_var(0, horizon, "Lat")
    for t in range(n):
        m.add(lat >= en[t])
    m.add(lat >= problem.critical_path)
    if latency_bound is not None:
        m.add(lat <= latency_bound)
    return PipelineModel(model=m, problem=problem, bins=bins, x=x, y=y, rep=rep, period=Pm, latency=lat,
                         multiplier=M, slots=G, max_replicas=Rmax)


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


def _solver(time_limit: float, workers: int, seed: int) -> cp_model.CpSolver:
    return cpsat.make_solver(time_limit=time_limit, workers=workers, seed=seed)


def solve(problem: PipelineProblem, *, time_limit: float = 30.0, workers: int = 2, seed: int = 0,
          hint: Candidate | None = None, use_lata_hint: bool = True, min_latency_phase: bool = True,
          max_replicas: int | None = None) -> MethodResult:
    """Maximise throughput under the latency bound, exactly (module docstring).

    Returns a `MethodResult` with status OPTIMAL (proven), FEASIBLE (time limit), INFEASIBLE
    (no candidate meets the bound) or UNKNOWN (nothing found in time); `bound` is the proven
    lower bound of the period (ticks).  With INFEASIBLE/UNKNOWN the candidate is the hint (or the
    sequential thread) and `claims_feasible` is False."""
    t0 = time.perf_counter()
    notes: list[str] = []
    if hint is None and use_lata_hint:
        from solver.pipeline.baselines import list_hlfet
        from solver.pipeline.lata import lata
        options = [lata(problem), list_hlfet(problem)]   # LATA's answer, or the latency reference
        hint = min(options, key=lambda r: r.evaluation.rank()).candidate
    pm = build_model(problem, latency_bound=problem.latency_max, max_replicas=max_replicas)
    if hint is not None:
        add_hint(pm, hint)
    pm.model.minimize(pm.period)
    solver = _solver(time_limit, workers, seed)
    code = cpsat.solve(solver, pm.model)
    status = solver.status_name(code)
    if status not in ("OPTIMAL", "FEASIBLE"):
        from solver.pipeline.evaluation import first_contexts, sequential_candidate
        fallback = hint if hint is not None else first_contexts(problem, sequential_candidate(problem))
        return MethodResult(method="cpsat", candidate=fallback, evaluation=evaluate(problem, fallback),
                            status=status, bound=None, claims_feasible=False,
                            seconds=time.perf_counter() - t0,
                            notes=[f"CP-SAT status {status} after {solver.wall_time:.2f}s"])
    cand = extract(pm, solver)
    if hint is not None and check_candidate(problem, hint) == [] and \
            evaluate(problem, hint).rank() < evaluate(problem, cand).rank():
        cand = hint   # the time limit stopped the search before it caught up with its hint
        notes.append("the hint is better than the solution found in time; kept the hint")
    best_pm = int(solver.value(pm.period))
    exact = pm.exact_period
    # Pm = max_g ceil(M T_g / R_g): exact when M is a multiple of every R, else within one unit
    bound_pm = math.ceil(max(0.0, solver.best_objective_bound) - 1e-6) - (0 if exact else 1)
    ev = evaluate(problem, cand)
    bound = min(Fraction(max(0, bound_pm), pm.multiplier), ev.period)
    spent = time.perf_counter() - t0
    if status == "OPTIMAL" and min_latency_phase and spent < time_limit:
        pm.model.add(pm.period <= best_pm)
        pm.model.clear_hints()
        add_hint(pm, cand)
        pm.model.minimize(pm.latency)
        solver2 = _solver(max(0.05, time_limit - spent), workers, seed)
        code2 = cpsat.solve(solver2, pm.model)
        if code2 in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            cand2 = extract(pm, solver2)
            ev2 = evaluate(problem, cand2)
            if ev2.rank() <= ev.rank():
                cand, ev = cand2, ev2
            notes.append(f"latency phase: {solver2.status_name(code2)}")
    if not pm.exact_period:
        notes.append(f"period resolved to 1/{pm.multiplier} tick (more than {MAX_EXACT_REPLICAS} replicas possible)")
    return MethodResult(method="cpsat", candidate=cand, evaluation=ev, status=status, bound=bound,
                        claims_feasible=ev.feasible, seconds=time.perf_counter() - t0, notes=notes)


def min_latency(problem: PipelineProblem, *, time_limit: float = 10.0, workers: int = 2,
                seed: int = 0) -> tuple[int | None, int, str]:
    """The smallest latency any candidate achieves (ticks): ``(best found, proven lower bound,
    status)``; best is None when nothing was found in time."""
    pm = build_model(problem.with_bound(None), latency_bound=None)
    from solver.pipeline.evaluation import first_contexts, sequential_candidate
    add_hint(pm, first_contexts(problem, sequential_candidate(problem)))
    pm.model.minimize(pm.latency)
    solver = _solver(time_limit, workers, seed)
    code = cpsat.solve(solver, pm.model)
    status = solver.status_name(code)
    lower = max(problem.critical_path, math.ceil(solver.best_objective_bound - 1e-6)) if code in (
        cp_model.OPTIMAL, cp_model.FEASIBLE) else problem.critical_path
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        cand = extract(pm, solver)
        return evaluate(problem, cand).latency, lower, status
    return None, lower, status


__all__ = ["PipelineError", "build_model", "min_latency", "solve"]
