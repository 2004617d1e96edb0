"""The fluid bound's linear program in matrix form, solved by HiGHS and certified by weak duality
(`solver.certify.fluid_bound`; docs/design.md, "A bound on the simulation").

Variables, in this order, all in packets or work per cycle: ``X_i`` (instance throughput),
``x_u`` (packets of thread u), ``y_u`` (work of u), ``s_u`` (idle fraction of u) and, for
``min_throughput``, ``z <= X_i``.  Every variable lies in a finite box ``[0, ub]``, which the
weak-duality bound needs: for multipliers ``p >= 0`` (inequalities) and ``q`` (equalities),
``max c.v <= p.b_ub + q.b_eq + sum_j max(0, r_j) * ub_j`` with ``r = c - A_ub' p - A_eq' q``.
The matrices are sparse (`scipy.sparse`, CSR): a row touches a few variables, and on 192 threads
the dense rows over the ~10,000 pair variables took 3.2 GB (the 256-context server's job).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse


@dataclass
class LinearProgram:
    """``max c.v`` s.t. ``A_ub v <= b_ub``, ``A_eq v = b_eq``, ``0 <= v <= ub``."""

    c: np.ndarray
    A_ub: sparse.csr_matrix
    b_ub: np.ndarray
    A_eq: sparse.csr_matrix
    b_eq: np.ndarray
    ub: np.ndarray
    n_instances: int
    y: int = 0  # index of y_0
    s: int = 0  # index of s_0
    pairs: dict | None = None  # (u, v) with u < v -> index of w_uv

    def add_cuts(self, cuts: list[tuple[int, float, list[tuple[int, float]]]]) -> None:
        """Append cuts (9) of `solver.certify.fluid_cuts`, one round's at once: each ``(u, a,
        [(v, c_v)])`` is ``y_u <= a b_u + sum c_v w_uv``, i.e. ``y_u + a s_u - sum c_v w_uv <= a``."""
        rows = _Rows(len(self.c))
        for u, a, terms in cuts:
            pairs = {self.pairs[(min(u, v), max(u, v))]: -coef for v, coef in terms}
            rows.add({self.y + u: 1.0, self.s + u: a, **pairs}, a)
        matrix, rhs = rows.matrix()
        self.A_ub = sparse.vstack([self.A_ub, matrix], format="csr")
        self.b_ub = np.concatenate([self.b_ub, rhs])


class _Rows:
    """Rows of `n` columns gathered as (row, column, value) triplets; equal positions add up."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.at: list[int] = []
        self.columns: list[int] = []
        self.values: list[float] = []
        self.rhs: list[float] = []

    def add(self, coefs: dict[int, float], rhs: float) -> None:
        self.at += [len(self.rhs)] * len(coefs)
        self.columns += list(coefs)
        self.values += list(coefs.values())
        self.rhs.append(rhs)

    def matrix(self) -> tuple[sparse.csr_matrix, np.ndarray]:
        shape = (len(self.rhs), self.n)
        return sparse.csr_matrix((self.values, (self.at, self.columns)), shape=shape), np.array(self.rhs, dtype=float)


def build(problem, objective: str, neighbourhoods=()) -> LinearProgram:
    """The LP of a `FluidProblem` (see the module docstring of `solver.certify.fluid_bound`),
    with a ``w_uv`` for every pair of a chord and of `neighbourhoods` (`fluid_cuts`)."""
    p = problem
    n_inst, T = p.n_instances, len(p.w_lo)
    X, x, y, s = 0, n_inst, n_inst + T, n_inst + 2 * T
    minimum = objective == "min_throughput"
    chords = [chord for sl in p.slots if sl.colocated for chord in slot_chords(sl)]
    pairs = {tuple(sorted((u, v))) for _, u, _, terms in chords for v, _ in terms}
    pairs = sorted(pairs | {tuple(sorted((nb.u, v))) for nb in neighbourhoods for v in nb.others})
    w = n_inst + 3 * T
    pair_index = {pair: w + k for k, pair in enumerate(pairs)}
    n = w + len(pairs) + (1 if minimum else 0)
    ub_rows, eq_rows = _Rows(n), _Rows(n)
    ub = np.ones(n)
    x_cap = 1.0 / np.maximum(p.w_lo, 1e-12)
    ub[x : x + T] = x_cap
    ub[y : y + T] = p.rho_max
    inst_cap = np.full(n_inst, np.inf)
    for (i, threads), equal in zip(p.groups, p.equal):
        R = len(threads)
        inst_cap[i] = min(inst_cap[i], float(sum(x_cap[t] for t in threads)))
        target = eq_rows if p.bounded else ub_rows  # unbounded queues: a group may run ahead
        if equal:  # x_u (= or >=) X_i / R (see `fluid_bound.equal_split`)
            for t in threads:
                target.add({X + i: 1.0 / R, x + t: -1.0}, 0.0)
        else:  # sum_u x_u (= or >=) X_i
            target.add({X + i: 1.0, **{x + t: -1.0 for t in threads}}, 0.0)
    if p.arrival is not None:
        inst_cap = np.minimum(inst_cap, p.arrival)
    ub[X : X + n_inst] = inst_cap
    for t in range(T):
        if np.isfinite(p.w_hi[t]):  # infinite: conflicts make the work unbounded above
            ub_rows.add({y + t: 1.0, x + t: -p.w_hi[t]}, 0.0)  # y <= x w_hi
        ub_rows.add({x + t: p.w_lo[t], y + t: -1.0}, 0.0)  # x w_lo <= y
        if p.rho_min[t] > 0:  # a rate that can fall to 0 (a capacity of 1e-300) bounds no idle time
            ub_rows.add({s + t: -1.0, y + t: -1.0 / p.rho_min[t]}, -1.0)  # s >= 1 - y / rho_min
        ub_rows.add({y + t: 1.0, s + t: p.rho_max[t]}, p.rho_max[t])  # y <= rho_max (1 - s)
    for (u, v), j in pair_index.items():  # w_uv: the time both are busy, b = 1 - s
        ub_rows.add({j: -1.0, s + u: -1.0, s + v: -1.0}, -1.0)  # w >= b_u + b_v - 1
        ub_rows.add({j: 1.0, s + u: 1.0}, 1.0)  # w <= b_u
        ub_rows.add({j: 1.0, s + v: 1.0}, 1.0)  # w <= b_v
    for intercept, u, slope, terms in chords:  # y_u <= intercept b_u + slope sum_v e_v w_uv
        coefs = {y + u: 1.0, s + u: intercept}
        for v, e in terms:
            j = pair_index[tuple(sorted((u, v)))]
            coefs[j] = coefs.get(j, 0.0) - slope * e
        ub_rows.add(coefs, intercept)
    for sl in p.slots:
        coefs: dict[int, float] = {}
        for t, d, i in sl.members:
            if d:
                coefs[y + t] = coefs.get(y + t, 0.0) + d
            if i and sl.k:
                coefs[s + t] = coefs.get(s + t, 0.0) + sl.k * i
        ub_rows.add(coefs, sl.capacity)
    for holders in p.locks:
        ub_rows.add({x + t: cycles / p.rho_max[t] for t, cycles in holders}, 1.0)
    c = np.zeros(n)
    if minimum:
        c[n - 1] = 1.0
        ub[n - 1] = float(inst_cap.min())
        for i in range(n_inst):
            ub_rows.add({n - 1: 1.0, X + i: -1.0}, 0.0)
    else:
        c[X : X + n_inst] = 1.0
    A_ub, b_ub = ub_rows.matrix()
    A_eq, b_eq = eq_rows.matrix()
    return LinearProgram(c, A_ub, b_ub, A_eq, b_eq, ub, n_inst, y, s, pair_index)


def slot_chords(sl) -> list[tuple[float, int, float, list[tuple[int, float]]]]:
    """Per member u demanding the slot while busy: ``(A, u, beta, [(v, e_v)])`` with
    ``y_u <= A b_u + beta sum_v e_v w_uv`` (constraint 8 of docs/design.md): while u is busy the
    load is ``L = d_u + sum_v (i_v + busy_v e_v)``, ``e_v = d_v - i_v``, in ``[L_lo, L_hi]``, and
    u's rate is at most ``min(1, C / L)``, which lies below the line through ``(L_hi, C / L_hi)``
    and ``(max(L_lo, C), min(1, C / L_lo))`` on that interval (convex above C, 1 below)."""
    out = []
    C = sl.capacity
    for u, d, _i in sl.members:
        others = [(v, dv, iv) for v, dv, iv in sl.members if v != u]
        lo = d + sum(min(dv, iv) for _, dv, iv in others)
        hi = d + sum(max(dv, iv) for _, dv, iv in others)
        terms = [(v, dv - iv) for v, dv, iv in others if dv != iv]
        if d <= 0 or hi <= C or hi - lo <= 1e-12 * hi or not terms:
            continue
        left = max(lo, C)
        slope = (C / hi - C / left) / (hi - left)
        base = C / left - slope * left  # the line at L = 0
        out.append((base + slope * (d + sum(iv for _, _, iv in others)), u, slope, terms))
    return out


def certified_max(
    lp: LinearProgram, neighbourhoods=(), rounds: int = 0, enough: float = -np.inf
) -> tuple[float, float, np.ndarray]:
    """(HiGHS's optimum, a weak-duality upper bound on the true optimum, the X_i at HiGHS's
    optimum), after up to `rounds` rounds of cuts (9) separated at HiGHS's optimum
    (`fluid_cuts.separate`); no more rounds once HiGHS's optimum is at most `enough` (per cycle: a
    caller that only needs to know whether the bound exceeds it).  Raises `SolverFailed` when
    HiGHS fails (the LP is always feasible: v = 0)."""
    from tasksolve.solver.certify.fluid_cuts import separate

    res = _solve(lp)
    for _ in range(rounds):
        if -res.fun <= enough:
            break
        cuts = []
        for nb in neighbourhoods:
            b_u = 1.0 - res.x[lp.s + nb.u]
            w = np.array([res.x[lp.pairs[(min(nb.u, v), max(nb.u, v))]] for v in nb.others])
            cut = separate(nb, b_u, w, res.x[lp.y + nb.u])
            if cut is not None:
                cuts.append((nb.u, cut[0], list(zip(nb.others, cut[1]))))
        if not cuts:
            break
        lp.add_cuts(cuts)
        res = _solve(lp)
    p_ub = np.maximum(0.0, -res.ineqlin.marginals) if len(lp.b_ub) else np.zeros(0)
    q_eq = -res.eqlin.marginals if len(lp.b_eq) else np.zeros(0)
    reduced = lp.c - lp.A_ub.T @ p_ub - lp.A_eq.T @ q_eq
    bound = float(p_ub @ lp.b_ub + q_eq @ lp.b_eq + np.maximum(0.0, reduced) @ lp.ub)
    return float(-res.fun), bound, res.x[: lp.n_instances]


def _solve(lp: LinearProgram):
    from scipy.optimize import linprog

    from tasksolve.solver.errors import SolverFailed

    try:
        res = linprog(
            -lp.c,
            A_ub=lp.A_ub if len(lp.b_ub) else None,
            b_ub=lp.b_ub if len(lp.b_ub) else None,
            A_eq=lp.A_eq if len(lp.b_eq) else None,
            b_eq=lp.b_eq if len(lp.b_eq) else None,
            bounds=list(zip(np.zeros(len(lp.c)), lp.ub)),
            method="highs",
        )
    except ValueError as exc:  # a non-finite coefficient (a capacity of 1e-300 in a configuration row)
        raise SolverFailed(f"fluid bound: the LP is not one HiGHS accepts ({exc})") from None
    if res.status != 0:
        raise SolverFailed(f"fluid bound: HiGHS could not solve the LP ({res.message})")
    return res
