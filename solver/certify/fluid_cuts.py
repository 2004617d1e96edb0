"""Joint-state cuts of the fluid LP (docs/design.md, "A bound on the simulation", constraint 9).

While thread ``u`` is busy, the simulation gives it the rate ``f(S) = min(1, min over its slots
of C / L(S))``, where ``S`` is the set of u's neighbours (the other members of its slots) busy at
that instant and ``L(S) = d_u + sum_v (i_v + [v in S] e_v)``, ``e_v = d_v - i_v`` (the rule of
`simulate.des.dynamics._compute_rate`, every slot at once).  For any numbers ``a``, ``c_v`` with

    a + sum_{v in S} c_v  >=  f(S)      for every subset S of the neighbours,          (9a)

``busy_u rate_u <= busy_u (a + sum_v c_v busy_v)`` at every instant, and on average

    y_u  <=  a b_u + sum_v c_v w_uv                                                    (9)

(``b_u``: u's busy fraction, ``w_uv``: the fraction of time u and v are both busy).  It holds
whatever the signs of ``c``; the existing ``y_u <= rho_max_u b_u`` is ``c = 0``, and the
chords of constraint 8 are the lines in one slot's load.  Cut (9) differs from them where the
load takes few values (one line through the load values that occur, not through the whole
interval) and where u is limited by different slots in different states (the minimum over slots
is taken state by state, not slot by slot).

The cuts are generated, not enumerated: after each LP solve, for every u the *separation* LP
``min a b_u + sum_v c_v w_uv`` subject to (9a) (at the LP's ``b``, ``w``) gives the tightest cut
of the family at that point; it is added when it cuts the point off (`separate`).  A thread with
more than `MAX_NEIGHBOURS` neighbours keeps its largest-capacity-use slots up to that count and
counts every other slot at its best rate (``min(1, C / L_lo)``, a constant at least its rate),
which keeps (9a) true with fewer states.  Relaxation slots (sums of domains) give no cut.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

#: the most neighbours whose states are enumerated for one thread (2^n states)
MAX_NEIGHBOURS = 10
#: a cut is added when it lowers u's work per cycle by more than this (relative to 1)
VIOLATION = 1e-7


@dataclass
class Neighbourhood:
    """Thread `u`, its neighbours and the rate `f` of every state (row k: bit j = neighbour j busy)."""

    u: int
    others: list[int]
    states: np.ndarray  # (2^n, n) 0/1
    rate: np.ndarray  # (2^n,)


def neighbourhoods(slots) -> list[Neighbourhood]:
    """Per thread limited by a slot that can be over capacity, its `Neighbourhood`."""
    mine: dict[int, list] = {}
    for sl in slots:
        if not sl.colocated:
            continue
        for u, d, _i in sl.members:
            if d > 0:
                mine.setdefault(u, []).append(sl)
    out = []
    for u, own in sorted(mine.items()):
        found = _neighbourhood(u, own)
        if found is not None:
            out.append(found)
    return out


def _neighbourhood(u: int, own: list) -> Neighbourhood | None:
    kept, others, constant = [], [], 1.0
    for sl in sorted(own, key=lambda sl: -_peak(u, sl) / sl.capacity):
        d_u = next(d for t, d, _ in sl.members if t == u)
        lo = d_u + sum(min(d, i) for t, d, i in sl.members if t != u)
        hi = d_u + sum(max(d, i) for t, d, i in sl.members if t != u)
        if hi <= sl.capacity:
            continue  # never over capacity: rate 1 in this slot
        new = [t for t, d, i in sl.members if t != u and d != i and t not in others]
        if len(others) + len(new) > MAX_NEIGHBOURS:
            constant = min(constant, sl.capacity / lo if lo > sl.capacity else 1.0)
            continue
        others += new
        kept.append((sl, d_u))
    if not kept or not others:
        return None  # no neighbour changes u's rate: rho_max already says it all
    index = {v: j for j, v in enumerate(others)}
    states = np.array(list(product((0, 1), repeat=len(others))), dtype=float).reshape(2 ** len(others), len(others))
    rate = np.full(len(states), constant)
    for sl, d_u in kept:
        base = d_u + sum(i for t, _d, i in sl.members if t != u)
        load = np.full(len(states), base)
        for t, d, i in sl.members:
            if t != u and d != i:
                load += (d - i) * states[:, index[t]]
        rate = np.minimum(rate, np.where(load > sl.capacity, sl.capacity / np.maximum(load, 1e-300), 1.0))
    return Neighbourhood(u, others, states, rate)


def _peak(u: int, sl) -> float:
    return sum(max(d, i) for t, d, i in sl.members)


def separate(nb: Neighbourhood, b_u: float, w: np.ndarray, y_u: float) -> tuple[float, np.ndarray] | None:
    """The tightest cut (9) at the point (``b_u``, ``w`` per neighbour), as ``(a, c)``, when it
    lowers the bound on ``y_u`` below the point's ``y_u``; else None."""
    from scipy.optimize import linprog

    n = len(nb.others)
    A = -np.hstack([np.ones((len(nb.states), 1)), nb.states])  # -(a + c.S) <= -f(S)
    res = linprog(np.concatenate([[b_u], w]), A_ub=A, b_ub=-nb.rate, bounds=[(None, None)] * (n + 1), method="highs")
    if res.status != 0 or res.fun >= y_u - VIOLATION:
        return None
    a, c = float(res.x[0]), np.asarray(res.x[1:], dtype=float)
    # (9a) exactly, not to HiGHS's tolerance: raise a by the worst shortfall plus a float's worth
    a += max(0.0, float(np.max(nb.rate - (a + nb.states @ c)))) + 1e-12 * (1.0 + abs(a))
    assert np.all(a + nb.states @ c >= nb.rate), "cut (9a) not restored"
    return a, c
