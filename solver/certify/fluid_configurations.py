"""Configuration rows of the fluid relaxation over every plan (docs/design.md, "A bound on the
simulation", "Over all plans").

The relaxation's summed slot (every domain of a resource in one row) lets each thread run as if
alone while the domains' capacity is used in aggregate.  Here, for a level whose domains are
small, the domains are described by what they hold instead.  A *type* is a class of threads with
the same busy and idle demand on every resource of the level (threads loading none of them are
left out); a *configuration* ``j`` is a count vector ``n_j`` over the types with at most ``m``
threads (``m``: the most usable contexts a domain has, or the level's ``max_threads`` cap).
Variables: ``lambda_j`` (domains holding ``j``), and per configuration and type ``Y_jk`` and
``B_jk`` (the sum of ``y_u`` and of ``b_u = 1 - s_u`` over the type-``k`` threads of those
domains), and per unordered pair of types ``W_jkl`` (the sum of ``w_uv``, the time u and v are both
busy, over the ordered pairs ``u`` of type ``k``, ``v != u`` of type ``l``, in those domains).  Rows:

* counts: ``sum_j n_jk lambda_j = N_k`` (every thread is placed), ``sum_j lambda_j <= D`` (the
  usable domains);
* linking: ``sum_j Y_jk = sum_{u in k} y_u``, ``sum_j B_jk = sum_{u in k} (1 - s_u)``;
* per configuration, the per-plan LP's rows of one domain holding ``j``, summed over those domains
  and over each type's members: the slot capacity (1) with the configuration's own ``k``,
  ``sum_k d_k Y_jk + k_j sum_k i_k (n_jk lambda_j - B_jk) <= C lambda_j``; the best rate in this
  domain's slots, ``Y_jk <= rho_jk B_jk``, ``B_jk <= n_jk lambda_j``; the chords (8),
  ``Y_jk <= A_jk B_jk + beta_jk sum_l e_l W_jkl``; Frechet's bounds summed over the pairs,
  ``W_jkl >= (n_l - [k=l]) B_jk + (n_k - [k=l]) B_jl - n_k (n_l - [k=l]) lambda_j`` and
  ``W_jkl <= (n_l - [k=l]) B_jk`` (and the same with k and l swapped).

Why it is a bound: take any plan and its simulation's long-run averages (a feasible point of the
plan's LP, `solver.certify.fluid_bound`).  Set ``lambda_j`` to the number of its domains whose
content is ``j`` and ``Y, B, W`` to the sums above.  Every row is a sum of the plan's own rows of
those domains (rows 1, 3 for the slot alone -- a thread's rate is at most its rate in one slot --
8 and Frechet's), or a count that holds for every plan, so the point is feasible here: the LP's
optimum is at least every plan's simulated throughput.  The per-thread rows of the relaxation stay
as they are.  A level whose configurations hold more than `LIMIT` threads in all keeps the
summed row only.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import sparse

from tasksolve.solver.certify.fluid_bound import Slot, slot, thread_rates
from tasksolve.solver.certify.fluid_lp import LinearProgram, _Rows, slot_chords

#: the most threads one level's configurations may hold in all (else it keeps the relaxation's
#: summed row): the T2's pipes and cores need about 500 and 1,300; a 64-context server's
#: sockets 26,000 (3 s of rows and LP for no gain there)
LIMIT = 10_000


def level_blocks(spec, structure, capacity: np.ndarray, d: np.ndarray, i: np.ndarray) -> list[dict]:
    """Per level below the machine with a finite resource and configurations within `LIMIT`,
    its block: ``types`` (thread lists), ``configs`` (count vectors), ``domains`` (usable domains
    ``D``) and ``capacity`` (per resource of the level, its capacity).  `capacity`, `d`, `i`: the
    capacities, demands and idle demands (threads x resources) as the simulation holds them
    (`simulate.des.units.held`)."""
    topo = spec.topology
    usable = np.array(spec.usable_contexts)
    out = []
    for level in range(len(topo.levels)):
        resources = [
            r
            for r, at in enumerate(structure.resource_level)
            if at == level and np.isfinite(structure.capacity[r]) and (d[:, r].any() or i[:, r].any())
        ]
        if not resources:
            continue
        keyed: dict[tuple, list[int]] = {}
        for t in range(len(d)):
            key = tuple(float(v) for r in resources for v in (d[t, r], i[t, r]))
            if any(key):
                keyed.setdefault(key, []).append(t)
        types = list(keyed.values())
        per_domain = np.bincount(usable // topo.strides[level])
        size = int(per_domain.max())
        cap = spec.constraints.max_threads.get(topo.levels[level].name)
        size = min(size, int(cap)) if cap is not None else size
        configs = _configurations([len(k) for k in types], size)
        if configs is None:
            continue
        out.append(
            {
                "types": types,
                "configs": configs,
                "domains": int(np.count_nonzero(per_domain)),
                "capacity": {r: float(capacity[r]) for r in resources},
            }
        )
    return out


def _configurations(counts: list[int], size: int) -> list[tuple[int, ...]] | None:
    """Every nonzero count vector with ``n_k <= counts[k]`` and sum at most `size`; None when
    their threads add up to more than `LIMIT` (the rows' cost grows with them)."""
    found: list[tuple[int, ...]] = []
    members = 0

    def walk(k: int, left: int, prefix: tuple[int, ...]) -> bool:
        nonlocal members
        if k == len(counts):
            if any(prefix):
                found.append(prefix)
                members += sum(prefix)
            return members <= LIMIT
        return all(walk(k + 1, left - n, (*prefix, n)) for n in range(min(counts[k], left) + 1))

    return found if walk(0, size, ()) else None


class _Columns:
    """New columns appended after `start`, each with its upper bound."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.ub: list[float] = []

    def new(self, ub: float) -> int:
        self.ub.append(ub)
        return self.start + len(self.ub) - 1


def add_configurations(lp: LinearProgram, blocks: list[dict], d: np.ndarray, i: np.ndarray) -> None:
    """Append every block's columns and rows (module docstring) to the relaxation's `lp` (`d`, `i`:
    the demands `level_blocks` was given)."""
    cols = _Columns(len(lp.c))
    ub_rows, eq_rows = [], []
    for block in blocks:
        ub, eq = _block_rows(lp, block, cols, d, i)
        ub_rows.append(ub)
        eq_rows.append(eq)
    n = cols.start + len(cols.ub)
    pad = n - len(lp.c)
    lp.c = np.concatenate([lp.c, np.zeros(pad)])
    lp.ub = np.concatenate([lp.ub, np.array(cols.ub, dtype=float)])
    lp.A_ub, lp.b_ub = _stack(lp.A_ub, lp.b_ub, ub_rows, n)
    lp.A_eq, lp.b_eq = _stack(lp.A_eq, lp.b_eq, eq_rows, n)


def _stack(matrix, rhs, parts: list[_Rows], n: int):
    """`matrix` widened to `n` columns with the rows of `parts` below it."""
    blocks, values = [sparse.hstack([matrix, sparse.csr_matrix((matrix.shape[0], n - matrix.shape[1]))])], [rhs]
    for part in parts:
        part.n = n
        more, more_rhs = part.matrix()
        blocks.append(more)
        values.append(more_rhs)
    return sparse.vstack(blocks, format="csr"), np.concatenate(values)


def _block_rows(lp: LinearProgram, block: dict, cols: _Columns, d: np.ndarray, i: np.ndarray) -> tuple[_Rows, _Rows]:
    """The rows of one level's configurations (module docstring), in columns taken from `cols`."""
    types, D = block["types"], block["domains"]
    ub_rows, eq_rows = _Rows(0), _Rows(0)
    lam = [cols.new(float(D)) for _ in block["configs"]]
    Y_sum: list[dict[int, float]] = [{lp.y + u: -1.0 for u in members} for members in types]
    B_sum: list[dict[int, float]] = [{lp.s + u: 1.0 for u in members} for members in types]
    count: list[dict[int, float]] = [{} for _ in types]
    for j, n in enumerate(block["configs"]):
        present = [k for k, c in enumerate(n) if c]
        Y = {k: cols.new(n[k] * D) for k in present}
        B = {k: cols.new(n[k] * D) for k in present}
        W = {(k, m): cols.new(n[k] * n[m] * D) for k, m in itertools.combinations_with_replacement(present, 2)}
        for k in present:
            count[k][lam[j]] = float(n[k])
            Y_sum[k][Y[k]] = 1.0
            B_sum[k][B[k]] = 1.0
            ub_rows.add({B[k]: 1.0, lam[j]: -float(n[k])}, 0.0)
        for (k, m), w in W.items():
            same = 1 if k == m else 0
            low = {w: -1.0, lam[j]: -float(n[k] * (n[m] - same))}
            low[B[k]] = float(n[m] - same)
            low[B[m]] = low.get(B[m], 0.0) + float(n[k] - same)
            ub_rows.add(low, 0.0)
            ub_rows.add({w: 1.0, B[k]: -float(n[m] - same)}, 0.0)
            ub_rows.add({w: 1.0, B[m]: -float(n[k] - same)}, 0.0)
        rate = dict.fromkeys(present, 1.0)
        for r, capacity in block["capacity"].items():
            members = [(k, float(d[types[k][0], r]), float(i[types[k][0], r])) for k in present for _ in range(n[k])]
            members = [(idx, *rest) for idx, (_k, *rest) in enumerate(members)]
            owner = [k for k in present for _ in range(n[k])]
            sl: Slot = slot(capacity, [mb for mb in members if mb[1] or mb[2]])
            if not sl.members:
                continue
            coefs: dict[int, float] = {lam[j]: -sl.capacity}
            for k in present:
                dk, ik = float(d[types[k][0], r]), float(i[types[k][0], r])
                if dk:
                    coefs[Y[k]] = coefs.get(Y[k], 0.0) + dk
                if ik and sl.k:
                    coefs[lam[j]] += sl.k * ik * n[k]
                    coefs[B[k]] = coefs.get(B[k], 0.0) - sl.k * ik
            ub_rows.add(coefs, 0.0)
            _, best = thread_rates(len(owner), [sl])
            seen: set[int] = set()
            for idx, (u, *_rest) in enumerate(members):
                rate[owner[idx]] = min(rate[owner[idx]], float(best[u]))
            for intercept, u, slope, terms in slot_chords(sl):
                k = owner[u]
                if k in seen:
                    continue
                seen.add(k)
                row = {Y[k]: 1.0, B[k]: -intercept}
                for m, e in {owner[v]: e for v, e in terms}.items():  # e_v of type m, once per type
                    w = W[(min(k, m), max(k, m))]
                    row[w] = row.get(w, 0.0) - slope * e
                ub_rows.add(row, 0.0)
        for k in present:
            ub_rows.add({Y[k]: 1.0, B[k]: -rate[k]}, 0.0)
    for k, members in enumerate(types):
        eq_rows.add(count[k], float(len(members)))
        eq_rows.add(Y_sum[k], 0.0)
        eq_rows.add(B_sum[k], float(len(members)))
    ub_rows.add(dict.fromkeys(lam, 1.0), float(D))
    return ub_rows, eq_rows
