"""Brute force over every candidate of a small pipeline problem: the ground truth the CP-SAT model
is tested against.

Every partition of the tasks into groups (restricted-growth strings), every replica count per
group within the usable contexts, and -- when a communication cost depends on placement -- every
assignment of distinct contexts to the threads (groups take sets of contexts; replicas of one
group are interchangeable).  Partitions whose groups depend on each other in a cycle are
skipped.  Each candidate is evaluated by `solver.pipeline.problem.evaluate`; the best by
`Evaluation.rank` (feasible, then period, latency, threads) wins.  Exponential: meant for at
most about 6 tasks and 6 contexts.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from solver.pipeline.candidates import Candidate, Group, group_order
from solver.pipeline.evaluation import Evaluation, evaluate, first_contexts
from solver.pipeline.problem import PipelineProblem


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


def context_assignments(replicas: tuple[int, ...], contexts: tuple[int, ...]) -> Iterator[list[tuple[int, ...]]]:
    if not replicas:
        yield []
        return
    first, rest = replicas[0], replicas[1:]
    for chosen in combinations(contexts, first):
        remaining = tuple(c for c in contexts if c not in chosen)
        for tail in context_assignments(rest, remaining):
            yield [chosen] + tail


def brute_force(problem: PipelineProblem) -> tuple[Evaluation | None, Candidate | None, int]:
    """The best candidate: ``(evaluation, candidate, candidates evaluated)``."""
    placement_matters = any(len(set(e.cost)) > 1 for e in problem.edges)
    best_ev, best_cand, count = None, None, 0
    for parts in set_partitions(problem.n):
        if len(parts) > problem.n_contexts:
            continue
        base = Candidate(tuple(Group(tuple(p)) for p in parts))
        if group_order(problem, base) is None:
            continue
        for reps in replica_vectors(len(parts), problem.n_contexts):
            cand = Candidate(tuple(Group(tuple(p), r) for p, r in zip(parts, reps)))
            if placement_matters:
                options = (cand.with_contexts(a) for a in context_assignments(reps, problem.contexts))
            else:
                options = iter([first_contexts(problem, cand)])
            for mapped in options:
                ev = evaluate(problem, mapped)
                count += 1
                if best_ev is None or ev.rank() < best_ev.rank():
                    best_ev, best_cand = ev, mapped
    return best_ev, best_cand, count
