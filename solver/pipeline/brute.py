"""Brute force over every candidate of a small pipeline problem: the ground truth the CP-SAT model
is tested against.

Every partition of the tasks into groups (restricted-growth strings), every replica count per
group within the usable contexts, and -- when a communication cost depends on placement or a task
demands a shared resource (contention) -- every assignment of distinct contexts to the threads
(groups take sets of contexts; sequences when the replica order decides who hears from whom:
each replica's mean message cost).  Partitions whose groups depend on each other in a cycle are
skipped, and so are the groupings and replica vectors that break the replica counts a spec
fixes (`fixed_vectors`; `solver.pipeline.candidates`, "Fixed replicas").  Each candidate is
evaluated by `solver.pipeline.evaluation.evaluate`; the best by `Evaluation.rank` (feasible,
then period, latency, threads) wins.  Exponential: meant for at
most about 6 tasks and 6 contexts.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations, permutations

from tasksolve.solver.pipeline.candidates import Candidate, Group, fixed_count, group_order
from tasksolve.solver.pipeline.evaluation import Evaluation, evaluate, first_contexts
from tasksolve.solver.pipeline.problem import PipelineProblem


def set_partitions(n: int) -> Iterator[list[list[int]]]:
    """Every partition of ``range(n)`` (restricted-growth strings)."""

    def grow(i: int, labels: list[int], blocks: int):
        if i == n:
            groups: list[list[int]] = [[] for _ in range(blocks)]
            for t, b in enumerate(labels):
                groups[b].append(t)
            yield groups
            return
        for b in range(blocks + 1):
            labels.append(b)
            yield from grow(i + 1, labels, max(blocks, b + 1))
            labels.pop()

    yield from grow(0, [], 0)


def replica_vectors(groups: int, budget: int) -> Iterator[tuple[int, ...]]:
    if groups == 0:
        yield ()
        return
    for r in range(1, budget - (groups - 1) + 1):
        for rest in replica_vectors(groups - 1, budget - r):
            yield (r,) + rest


def fixed_vectors(
    problem: PipelineProblem, parts: list[list[int]], max_replicas: int | None = None
) -> Iterator[tuple[int, ...]]:
    """The replica vectors of `replica_vectors` over the usable contexts that keep the fixed
    counts of the groups `parts` (none when two tasks of different counts share a group), the
    free groups at most `max_replicas` each."""
    counts = [fixed_count(problem, p) for p in parts]
    if None in counts:
        return
    for reps in replica_vectors(len(parts), problem.n_contexts):
        free = [r for r, c in zip(reps, counts) if not c]
        if all(r == c for r, c in zip(reps, counts) if c) and (
            max_replicas is None or max(free, default=1) <= max_replicas
        ):
            yield reps


def context_assignments(
    replicas: tuple[int, ...], contexts: tuple[int, ...], ordered: bool = False
) -> Iterator[list[tuple[int, ...]]]:
    """Distinct contexts for each group's replicas: sets, or sequences when `ordered`."""
    if not replicas:
        yield []
        return
    first, rest = replicas[0], replicas[1:]
    for chosen in (permutations if ordered else combinations)(contexts, first):
        remaining = tuple(c for c in contexts if c not in chosen)
        for tail in context_assignments(rest, remaining, ordered):
            yield [chosen] + tail


def brute_force(
    problem: PipelineProblem, *, comm: str = "mean", max_replicas: int | None = None
) -> tuple[Evaluation | None, Candidate | None, int]:
    """The best candidate: ``(evaluation, candidate, candidates evaluated)``; `comm` as in
    `evaluate` (``"lca"``: the CP-SAT model's charge), `max_replicas` caps every free group's (a
    fixed count is kept above it, as in `solver.pipeline.model`)."""
    comm_varies = any(len(set(e.cost)) > 1 for e in problem.edges)
    placement_matters = problem.contention or comm_varies
    ordered = comm == "mean" and comm_varies  # which producer replica feeds which consumer replica
    best_ev, best_cand, count = None, None, 0
    for parts in set_partitions(problem.n):
        if len(parts) > problem.n_contexts:
            continue
        base = Candidate(tuple(Group(tuple(p)) for p in parts))
        if group_order(problem, base) is None:
            continue
        for reps in fixed_vectors(problem, parts, max_replicas):
            cand = Candidate(tuple(Group(tuple(p), r) for p, r in zip(parts, reps)))
            if placement_matters:
                options = (cand.with_contexts(a) for a in context_assignments(reps, problem.contexts, ordered))
            else:
                options = iter([first_contexts(problem, cand)])
            for mapped in options:
                ev = evaluate(problem, mapped, comm=comm)
                count += 1
                if best_ev is None or ev.rank() < best_ev.rank():
                    best_ev, best_cand = ev, mapped
    return best_ev, best_cand, count


def every_candidate(problem: PipelineProblem) -> Iterator[Candidate]:
    """Every mapped candidate, evaluated or not: each acyclic partition within the contexts, each
    replica vector keeping the fixed counts, each ordered assignment of distinct contexts -- the
    whole space `brute_force` searches (there, orders and placements are skipped where they cannot matter)."""
    for parts in set_partitions(problem.n):
        base = Candidate(tuple(Group(tuple(q)) for q in parts))
        if len(parts) > problem.n_contexts or group_order(problem, base) is None:
            continue
        for reps in fixed_vectors(problem, parts):
            cand = Candidate(tuple(Group(tuple(q), r) for q, r in zip(parts, reps)))
            for contexts in context_assignments(reps, problem.contexts, True):
                yield cand.with_contexts(contexts)
