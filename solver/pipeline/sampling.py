"""Random pipeline plans: the ``random`` sampling design of the certificate for pipeline problems
(ASPLOS'12 §3.1 samples plans at random; here the plans of `solver.pipeline.problem`).

A **plan** is a partition of the tasks into groups (each group runs its tasks in the problem's
topological order) and, for every group, a non-empty set of usable contexts, one per replica,
the sets disjoint; plans that differ only in the order of the groups or of a group's replicas
are the same plan (the space `solver.pipeline.brute` enumerates when placement matters).  A plan
is **valid** when its group graph is acyclic, it respects ``max_threads``
(`solver.pipeline.candidates.check_candidate`) and its closed-form latency meets ``latency_max``
(`solver.pipeline.evaluation.evaluate`).

The distribution
================

`random_candidate` draws, until the plan is valid:

1. **an order**: a random topological order of the tasks -- from the entry on, repeatedly one of
   the ready tasks (every predecessor already taken) uniformly at random;
2. **groups**: ``k`` uniform in ``1..min(n, C)`` (``n`` tasks, ``C`` usable contexts), and the
   order cut into ``k`` contiguous non-empty segments, the ``k - 1`` cut points uniform among the
   ``binom(n - 1, k - 1)`` choices; each segment is a group.  The group graph of segments of a
   topological order is acyclic, and every acyclic grouping is the segments of some topological
   order (list its groups in a topological order of the group graph), so every valid plan can be
   drawn;
3. **replicas and contexts**: uniform among the ``A(C, k)`` ways to give the ``k`` groups
   disjoint non-empty sets of usable contexts -- context by context, to no group, to a group that
   already has one or to one that has none yet, each weighted by the number of completions that
   leave no group empty;
4. **rejection** of plans over ``max_threads`` or the latency bound.

With replica counts a spec fixes (`solver.pipeline.candidates`, "Fixed replicas"), step 3 gives
each group holding a fixed count ``N`` a uniformly drawn set of ``N`` of the contexts left (groups
in order), then the free groups share the rest as above (`fixed_contexts`); a grouping whose
segment holds two different counts, or whose fixed counts leave a free group no context, is drawn
as above and rejected (it breaks them).  The formula below is for specs without fixed counts.

So ``P(plan) = sum over the (order, cuts) giving its grouping of P(order) / (min(n, C)
binom(n - 1, k - 1)) / A(C, k)``, divided by the probability of validity: every valid plan has a
positive probability, not the same one (groupings reached by more orders are likelier).  Uniform
over the valid plans was the first choice and was dropped: on `xeon-lata-dag` 1 of 20,000
uniform plans was valid (0.8% of uniform groupings are acyclic), about 3 s of draws per sample,
where this design needs a few hundred draws (BENCHMARKS.md, "Pipeline certificates").
`tests/pipeline/test_sampling.py` compares the frequencies with this formula evaluated over the
brute-force enumeration of a small problem.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from tasksolve.solver.pipeline.candidates import Candidate, Group, check_candidate, fixed_count
from tasksolve.solver.pipeline.evaluation import evaluate
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem

#: draws before a problem whose valid plans are too rare is refused
MAX_DRAWS = 200_000


@cache
def completions(remaining: int, filled: int, k: int) -> int:
    """Ways to assign `remaining` contexts (each to no group or one of `k` groups) when `filled`
    groups already hold a context, leaving no group empty."""
    if k - filled > remaining:
        return 0
    if remaining == 0:
        return 1
    return (1 + filled) * completions(remaining - 1, filled, k) + (k - filled) * completions(
        remaining - 1, filled + 1, k
    )


def context_sets(contexts: int, k: int) -> int:
    """``A(C, k)``: disjoint non-empty context sets for `k` distinct groups."""
    return completions(contexts, 0, k)


def _pick(rng: np.random.Generator, weights: list[int]) -> int:
    """An index with probability proportional to integer `weights` (of any size; the draw is
    64 bits wider than the total, so the bias is below 2**-64)."""
    total = sum(weights)
    value = 0
    for _ in range(0, total.bit_length() + 64, 62):
        value = (value << 62) | int(rng.integers(0, 2**62))
    r = value % total
    for i, w in enumerate(weights):
        if r < w:
            return i
        r -= w
    raise AssertionError("weights exhausted")


def random_order(problem: PipelineProblem, rng: np.random.Generator) -> list[int]:
    """Step 1: a random topological order, a uniformly chosen ready task at a time."""
    waiting = [len(p) for p in problem.preds]
    ready = [t for t in range(problem.n) if waiting[t] == 0]
    order: list[int] = []
    while ready:
        t = ready.pop(int(rng.integers(len(ready))))
        order.append(t)
        for s in problem.succs[t]:
            waiting[s] -= 1
            if waiting[s] == 0:
                ready.append(s)
    return order


def random_contexts(
    problem: PipelineProblem, k: int, rng: np.random.Generator, contexts: list[int] | None = None
) -> list[list[int]]:
    """Step 3: disjoint non-empty sets of `contexts` (default: the usable ones) for `k` groups,
    uniformly among the ``A(C, k)``."""
    contexts = list(problem.contexts) if contexts is None else contexts
    c = len(contexts)
    owner: list[list[int]] = [[] for _ in range(k)]
    filled: list[int] = []  # groups holding a context, in the order they got their first
    for j, context in enumerate(contexts):
        left = c - j - 1
        stay = completions(left, len(filled), k)
        fresh = completions(left, len(filled) + 1, k)
        choice = _pick(rng, [stay] + [stay] * len(filled) + [fresh] * (k - len(filled)))
        if choice == 0:
            continue
        if choice <= len(filled):
            owner[filled[choice - 1]].append(context)
        else:
            g = [g for g in range(k) if not owner[g]][choice - 1 - len(filled)]
            owner[g].append(context)
            filled.append(g)
    return owner


def draw_plan(problem: PipelineProblem, rng: np.random.Generator) -> Candidate:
    """Steps 1-3 of the module docstring: an acyclic plan, maybe over a cap or the bound."""
    n = problem.n
    order = random_order(problem, rng)
    k = int(rng.integers(1, min(n, problem.n_contexts) + 1))
    cuts = sorted(int(x) for x in rng.choice(np.arange(1, n), size=k - 1, replace=False)) if k > 1 else []
    segments = [order[a:b] for a, b in zip([0, *cuts], [*cuts, n])]
    owner = fixed_contexts(problem, segments, rng) or random_contexts(problem, k, rng)
    return canonical(
        Candidate(tuple(Group(tuple(sorted(seg)), len(cs), tuple(cs)) for seg, cs in zip(segments, owner)))
    )


def fixed_contexts(problem: PipelineProblem, segments: list[list[int]], rng: np.random.Generator):
    """Step 3 with fixed replica counts (module docstring): each segment's contexts, or None when
    the spec fixes none, a segment holds two counts or the free segments would get no context."""
    counts = [fixed_count(problem, seg) for seg in segments]
    if not any(counts) or None in counts or sum(counts) + counts.count(0) > problem.n_contexts:
        return None
    pool, owner = list(problem.contexts), [[] for _ in segments]
    for g, count in enumerate(counts):
        if count:
            taken = {int(i) for i in rng.choice(len(pool), size=count, replace=False)}
            owner[g] = [c for i, c in enumerate(pool) if i in taken]
            pool = [c for i, c in enumerate(pool) if i not in taken]
    free = [g for g, count in enumerate(counts) if not count]
    for g, cs in zip(free, random_contexts(problem, len(free), rng, pool)):
        owner[g] = cs
    return owner


def canonical(cand: Candidate) -> Candidate:
    """Groups ordered by their first task, contexts ascending, no stage labels."""
    groups = sorted(cand.groups, key=lambda g: min(g.tasks))
    return Candidate(tuple(Group(tuple(sorted(g.tasks)), g.replicas, tuple(sorted(g.contexts or ()))) for g in groups))


def is_valid(problem: PipelineProblem, cand: Candidate) -> bool:
    """Acyclic, within the caps, and within the latency bound on the closed form."""
    return not check_candidate(problem, cand) and evaluate(problem, cand).feasible


def random_candidate(problem: PipelineProblem, rng: np.random.Generator, max_draws: int = MAX_DRAWS) -> Candidate:
    """A valid random plan (module docstring); raises `PipelineError` when none of `max_draws`
    draws is valid."""
    for _ in range(max_draws):
        cand = draw_plan(problem, rng)
        if is_valid(problem, cand):
            return cand
    raise PipelineError(
        f"no valid random pipeline plan of `{problem.app}` in {max_draws} draws: valid plans "
        "(acyclic, within max_threads and the latency bound) are too rare to sample"
    )


# ------------------------------------------------------------------------------ JSON form
def encode(cand: Candidate) -> dict[str, Any]:
    """A plan as JSON: ``{"groups": [[task index, ...], ...], "contexts": [[context, ...], ...]}``."""
    cand = canonical(cand)
    return {"groups": [list(g.tasks) for g in cand.groups], "contexts": [list(g.contexts or ()) for g in cand.groups]}


def decode(data: dict[str, Any]) -> Candidate:
    """The candidate of `encode`'s form."""
    return Candidate(
        tuple(
            Group(tuple(int(t) for t in tasks), len(contexts), tuple(int(c) for c in contexts))
            for tasks, contexts in zip(data["groups"], data["contexts"])
        )
    )
