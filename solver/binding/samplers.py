"""Seeded, vectorised samplers of binding plans, and exhaustive enumeration of distinct ones.

A sample of plans is an integer array of shape **(plans, threads)**: row ``p`` gives the context
index of every thread of ``spec.threads`` (in that order), the layout
`simulate.analytic.BatchModel` evaluates.  `to_plans` turns rows into `specs.Plan` objects.

Constraints (``spec.constraints``):

* ``contexts``: only ``spec.usable_contexts`` are ever used (both samplers);
* ``pin``: pinned threads always sit on their context (both samplers, by construction);
* ``forbid`` and ``max_threads``:
  - `uniform_plans` draws the other threads uniformly over the injective maps into the
    remaining usable contexts and **rejects** the plans that break a ``forbid``, a
    ``max_threads`` cap or ``latency_max`` (on the closed form's latency, `BatchModel`, as CP-SAT
    and the local search read the bound), so the sample is uniform over the plans that satisfy every constraint
    (ASPLOS'12 Step 1 restricted to the feasible set); it raises `SamplerError` when too few
    draws are accepted (the constraints are too tight for rejection);
  - `balanced_plans` places threads one at a time, each in the least-loaded domain at every
    level among the domains that still have a context it may use (its ``forbid``, the caps), so
    constraints shape the balance instead of being repaired afterwards; a plan that reaches a
    dead end is drawn again.

`balanced_plans` is the Linux/Solaris load balancer's goal: equal thread counts per domain at
every level (as equal as integers allow), spreading over the outermost domains first.  Threads
are placed in a random order, ties between equally loaded domains are broken at random and the
last context is drawn at random, so every balanced placement can come out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tasksolve.solver.errors import BadProblemError
from tasksolve.specs import Plan, UsableTree

MAX_KEYS = 1 << 22  # random keys drawn at once by `uniform_plans` (32 MB of floats)


class SamplerError(BadProblemError):
    """The constraints leave no (or too few) plans for the sampler to draw."""


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


class PlacementConstraints:
    """The spec's placement constraints as arrays."""

    def __init__(self, spec) -> None:
        topo = spec.topology
        self.spec = spec
        self.T = len(spec.threads)
        self.C = topo.n_contexts
        usable = np.zeros(self.C, dtype=bool)
        usable[spec.usable_contexts] = True
        self.usable = usable
        cons = spec.constraints
        index = spec.thread_index
        self.pinned = {index[name]: topo.parse_context(ctx) for name, ctx in cons.pin.items()}
        allowed = np.repeat(usable[None, :], self.T, axis=0)
        for name, domains in cons.forbid.items():
            for domain in domains:
                allowed[index[name], list(topo.contexts_of(*topo.parse_domain(domain)))] = False
        self.allowed = allowed
        self.has_forbid = bool(cons.forbid)
        self.caps = [(topo.level_index(level), cap) for level, cap in cons.max_threads.items()]
        self.free_threads = [t for t in range(self.T) if t not in self.pinned]
        taken = set(self.pinned.values())
        self.free_contexts = np.array([c for c in spec.usable_contexts if c not in taken], dtype=np.intp)
        if len(self.free_threads) > len(self.free_contexts):
            raise SamplerError(f"{self.T} threads do not fit in {len(spec.usable_contexts)} usable contexts")

    def valid(self, contexts: np.ndarray) -> np.ndarray:
        """Which rows satisfy forbid and max_threads (pins and usability hold by construction)."""
        ok = np.ones(len(contexts), dtype=bool)
        if self.has_forbid:
            for t in range(self.T):
                if not self.allowed[t].all():
                    ok &= self.allowed[t][contexts[:, t]]
        topo = self.spec.topology
        for level, cap in self.caps:
            n_domains = topo.domain_count(level)
            domains = (contexts // topo.strides[level]) if level >= 0 else np.zeros_like(contexts)
            flat = (domains + (np.arange(len(contexts)) * n_domains)[:, None]).ravel()
            counts = np.bincount(flat, minlength=len(contexts) * n_domains).reshape(len(contexts), n_domains)
            ok &= counts.max(axis=1) <= cap
        return ok


# ------------------------------------------------------------------------------------- uniform
def uniform_plans(
    spec, n: int, seed: int | np.random.Generator | None = None, max_draws: int | None = None
) -> np.ndarray:
    """`n` iid plans, uniform over the injective maps of the threads into the usable contexts
    that satisfy the constraints (see the module docstring)."""
    rng = _rng(seed)
    cons = PlacementConstraints(spec)
    out = np.empty((n, cons.T), dtype=np.intp)
    for t, c in cons.pinned.items():
        out[:, t] = c
    free_t = np.array(cons.free_threads, dtype=np.intp)
    need_check = cons.has_forbid or bool(cons.caps)
    latency = _latency_filter(spec)
    max_draws = max_draws or max(100_000, 1000 * n)
    filled, drawn = 0, 0
    while filled < n:
        # draw twice what is missing where some draws are rejected; at most MAX_KEYS keys at once
        wanted = max(2 * (n - filled), 1024) if need_check or latency is not None else n - filled
        batch = max(1, min(wanted, 1 << 16, MAX_KEYS // max(1, len(cons.free_contexts))))
        keys = rng.random((batch, len(cons.free_contexts)))
        order = np.argsort(keys, axis=1)[:, : len(free_t)]
        rows = np.empty((batch, cons.T), dtype=np.intp)
        for t, c in cons.pinned.items():
            rows[:, t] = c
        rows[:, free_t] = cons.free_contexts[order]
        drawn += batch
        if need_check:
            rows = rows[cons.valid(rows)]
        if latency is not None:
            rows = rows[latency(rows)]
        take = min(len(rows), n - filled)
        out[filled : filled + take] = rows[:take]
        filled += take
        if filled < n and drawn >= max_draws:
            raise SamplerError(
                f"only {filled} of {drawn} uniform draws satisfy the constraints (forbid, max_threads, latency_max); "
                "they are too tight for rejection sampling"
            )
    return out


def _latency_filter(spec):
    """Rows -> which meet ``latency_max`` on the closed form; None without a bound."""
    bound = spec.constraints.latency_max
    if bound is None:
        return None
    from tasksolve.simulate.analytic import BatchModel

    model = BatchModel(spec)
    seconds = bound.to_seconds(spec.topology.clock) * (1 + 1e-9)
    return lambda rows: model.evaluate(rows).latency_max <= seconds


# ------------------------------------------------------------------------------------- balanced
def balanced_plans(spec, n: int, seed: int | np.random.Generator | None = None, max_rounds: int = 50) -> np.ndarray:
    """`n` balanced plans (see the module docstring)."""
    rng = _rng(seed)
    cons = PlacementConstraints(spec)
    out = np.empty((n, cons.T), dtype=np.intp)
    todo = np.arange(n)
    for _ in range(max_rounds):
        rows, ok = _balanced_once(spec, cons, len(todo), rng)
        good = todo[ok]
        out[good] = rows[ok]
        todo = todo[~ok]
        if len(todo) == 0:
            return out
    raise SamplerError(
        f"no balanced placement satisfies the constraints (forbid, max_threads) after {max_rounds} rounds"
    )


def _balanced_once(spec, cons: PlacementConstraints, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    topo = spec.topology
    depth = len(topo.levels)
    C = cons.C
    rows = np.full((n, cons.T), -1, dtype=np.intp)
    occupied = np.zeros((n, C), dtype=bool)
    # thread counts per domain, levels 0 .. depth-2 (the last level is the context itself)
    counts = [np.zeros((n, topo.domain_count(k)), dtype=np.int64) for k in range(depth - 1)]
    cap_of = dict(cons.caps)
    ok = np.ones(n, dtype=bool)
    plan_ix = np.arange(n)

    def occupy(ctx: np.ndarray, who: np.ndarray, thread_cols: np.ndarray) -> None:
        rows[who, thread_cols] = ctx
        occupied[who, ctx] = True
        for k in range(depth - 1):
            counts[k][who, ctx // topo.strides[k]] += 1

    for t, c in cons.pinned.items():
        occupy(np.full(n, c), plan_ix, np.full(n, t))
    free = np.array(cons.free_threads, dtype=np.intp)
    order = free[np.argsort(rng.random((n, len(free))), axis=1)]  # a random thread order per plan
    machine_cap = cap_of.get(-1)
    if machine_cap is not None and cons.T > machine_cap:
        return rows, np.zeros(n, dtype=bool)
    for step in range(len(free)):
        thread = order[:, step]
        avail = ~occupied & cons.allowed[thread]  # (n, C)
        parent = np.zeros(n, dtype=np.intp)
        for k in range(depth - 1):
            stride = topo.strides[k]
            fanout = topo.counts[k]
            kids = parent[:, None] * fanout + np.arange(fanout)[None, :]  # (n, fanout)
            has_room = avail.reshape(n, -1, stride).any(axis=2)  # (n, D_k)
            room = np.take_along_axis(has_room, kids, axis=1)
            load = np.take_along_axis(counts[k], kids, axis=1).astype(float)
            if k in cap_of:
                room &= load < cap_of[k]
            score = np.where(room, load + 0.5 * rng.random(load.shape), np.inf)
            pick = np.argmin(score, axis=1)
            ok &= np.isfinite(score[plan_ix, pick])
            parent = kids[plan_ix, pick]
        # the context inside the chosen innermost domain
        fanout = topo.counts[depth - 1]
        leaves = parent[:, None] * fanout + np.arange(fanout)[None, :]
        room = np.take_along_axis(avail, leaves, axis=1)
        if (depth - 1) in cap_of:  # a cap on the context level: at most 1 anyway unless 0
            room &= cap_of[depth - 1] >= 1
        score = np.where(room, rng.random(room.shape), np.inf)
        pick = np.argmin(score, axis=1)
        ok &= np.isfinite(score[plan_ix, pick])
        ctx = leaves[plan_ix, pick]
        occupy(ctx, plan_ix, thread)
    return rows, ok & (rows >= 0).all(axis=1)


def is_balanced(spec, contexts: np.ndarray) -> np.ndarray:
    """Whether each row has, at every level, thread counts per domain that differ by at most
    one across the domains of that level holding usable contexts."""
    contexts = np.atleast_2d(np.asarray(contexts))
    topo = spec.topology
    usable = np.array(spec.usable_contexts)
    ok = np.ones(len(contexts), dtype=bool)
    for k in range(len(topo.levels) - 1):
        stride = topo.strides[k]
        n_domains = topo.domain_count(k)
        present = np.unique(usable // stride)
        flat = (contexts // stride + (np.arange(len(contexts)) * n_domains)[:, None]).ravel()
        counts = np.bincount(flat, minlength=len(contexts) * n_domains).reshape(len(contexts), n_domains)[:, present]
        ok &= counts.max(axis=1) - counts.min(axis=1) <= 1
    return ok


# ------------------------------------------------------------------------------------- exhaustive
def distinct_placements(spec) -> tuple[np.ndarray, np.ndarray]:
    """Every placement of the spec's threads modulo hardware symmetry, once: (representatives
    as a (K, threads) array, orbit sizes (K,)), where the orbit size is the number of raw
    placements (injective maps) equivalent to the representative
    (`specs.UsableTree.representatives_with_orbits`).  ``K`` equals ``specs.count_distinct`` and
    the orbit sizes sum to the number of injective maps.  Constraints other than ``contexts``
    are ignored.  Meant for small problems (it lists all)."""
    tree = UsableTree.of(spec.topology, spec.usable_contexts)
    T = len(spec.threads)
    reps, orbits = [], []
    for mapping, orbit in tree.representatives_with_orbits(T):
        row = np.empty(T, dtype=np.intp)
        for ctx, thread in mapping.items():
            row[thread] = ctx
        reps.append(row)
        orbits.append(orbit)
    return np.array(reps, dtype=np.intp).reshape(len(reps), T), np.array(orbits, dtype=object)


# ------------------------------------------------------------------------------------- helpers
def to_plans(spec, contexts: np.ndarray, method: str | None = None) -> list[Plan]:
    """`specs.Plan` objects from rows of context indices."""
    return [Plan.from_contexts(spec, row, method=method) for row in np.atleast_2d(contexts)]


def apply_symmetry(contexts: Sequence[int], mapping: dict[int, int]) -> np.ndarray:
    """A plan moved by a hardware symmetry ``{context: context}``
    (`specs.UsableTree.random_automorphism`)."""
    return np.array([mapping[int(c)] for c in contexts], dtype=np.intp)
