"""Dynamic-programming reference for linear chains: interval mapping of a chain for the minimum
period under a latency bound, with and without replication (Subhlok & Vondran's chain mapping,
in the form of Benoit & Robert, "Mapping pipeline skeletons onto heterogeneous platforms",
for identical processors and placement-independent communication).

A chain ``t0 -> t1 -> ... -> t(n-1)`` is cut into consecutive intervals; interval ``[a, b)`` is
one group whose time is ``T(a, b) = sum of its work + the cost of the edge entering it`` (the
model of `solver.pipeline.problem`; for a chain the latency is the sum of the interval times).
Given a period ``P``, an interval needs ``ceil(T / P)`` replicas (replication divides its
period, never its latency), or, without replication, ``T <= P`` and one thread.

``feasible(P)``: ``best[i][k]`` = the smallest latency of a cut of the first ``i`` tasks on
``k`` threads; ``P`` is feasible when some ``best[n][k <= C] <= L0``.  Feasibility is monotone
in ``P`` and the optimum is one of the values ``T(a, b) / r``, so a binary search over those
candidates gives the exact optimum (a `Fraction` of ticks), and the latency reported is the
smallest one at that period.

An interval holding a task whose stage the spec fixes at ``N`` replicas (`solver.pipeline.candidates`,
"Fixed replicas") gets exactly ``N`` (feasible at ``P`` when ``T <= N P``; without replication
only ``N = 1``), and an interval holding two different counts is never one group.

Exact only when communication costs do not depend on placement (every level costs the same,
e.g. a flat topology or a direct cost table with one value) and no task demands a shared
resource (contention makes placement matter); `chain_dp` refuses otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from tasksolve.solver.pipeline.candidates import Candidate, Group, fixed_count
from tasksolve.solver.pipeline.evaluation import first_contexts
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem


@dataclass(frozen=True)
class ChainSolution:
    period: Fraction | None  # ticks; None when no cut meets the latency bound
    latency: int | None  # ticks, the smallest at that period
    intervals: tuple[tuple[int, int, int], ...]  # (first task, end task exclusive, replicas)

    def candidate(self, problem: PipelineProblem) -> Candidate:
        groups = tuple(Group(tuple(range(a, b)), r) for a, b, r in self.intervals)
        return first_contexts(problem, Candidate(groups, tuple(range(len(groups)))))


def is_chain(problem: PipelineProblem) -> bool:
    """Whether the tasks (in the problem's topological order) form one path t0 -> ... -> t(n-1)."""
    pairs = sorted((e.source, e.target) for e in problem.edges)
    return pairs == [(i, i + 1) for i in range(problem.n - 1)]


def _entry_cost(problem: PipelineProblem) -> list[int]:
    cost = [0] * problem.n
    for e in problem.edges:
        if len(set(e.cost)) != 1:
            raise PipelineError(
                "the chain DP needs communication costs that do not depend on placement "
                f"(edge {problem.tasks[e.source]} -> {problem.tasks[e.target]} costs {e.cost})"
            )
        cost[e.target] = e.cost[0]
    return cost


def chain_dp(problem: PipelineProblem, replication: bool = True) -> ChainSolution:
    """Minimum period of the chain under `problem.latency_max` on `problem.n_contexts` threads."""
    if not is_chain(problem):
        raise PipelineError("the chain DP needs a linear chain of tasks")
    if problem.contention:
        names = ", ".join(r.name for r in problem.resources)
        raise PipelineError(f"the chain DP needs tasks without resource demands (contention on {names})")
    n, C = problem.n, problem.n_contexts
    entry = _entry_cost(problem)
    prefix = [0]
    for w in problem.work:
        prefix.append(prefix[-1] + w)

    def T(a: int, b: int) -> int:
        return prefix[b] - prefix[a] + (entry[a] if a > 0 else 0)

    fixed = {(a, b): fixed_count(problem, range(a, b)) for a in range(n) for b in range(a + 1, n + 1)}
    bound = problem.latency_max
    INF = math.inf

    def table(P: Fraction):
        best = [[INF] * (C + 1) for _ in range(n + 1)]
        back: list[list[tuple[int, int, int] | None]] = [[None] * (C + 1) for _ in range(n + 1)]
        best[0][0] = 0
        for a in range(n):
            for k in range(C + 1):
                if best[a][k] == INF:
                    continue
                for b in range(a + 1, n + 1):
                    t, f = T(a, b), fixed[a, b]
                    if f is None or (not replication and t > P):
                        break  # two fixed counts, or too slow: so are the longer intervals
                    r = (f or max(1, math.ceil(Fraction(t) / P))) if replication else 1
                    if k + r > C or (f and (r != f or t > f * P)):
                        continue
                    value = best[a][k] + t
                    if value < best[b][k + r]:
                        best[b][k + r] = value
                        back[b][k + r] = (a, k, r)
        return best, back

    def feasible(P: Fraction) -> tuple[bool, float, int]:
        best, _ = table(P)
        k = min(range(C + 1), key=lambda j: (best[n][j], j))
        lat = best[n][k]
        return lat != INF and (bound is None or lat <= bound), lat, k

    candidates = sorted(
        {
            Fraction(T(a, b), r)
            for a in range(n)
            for b in range(a + 1, n + 1)
            for r in (range(1, C + 1) if replication else (1,))
        }
    )
    lo, hi = 0, len(candidates) - 1
    if not feasible(candidates[hi])[0]:
        return ChainSolution(None, None, ())
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(candidates[mid])[0]:
            hi = mid
        else:
            lo = mid + 1
    P = candidates[lo]
    best, back = table(P)
    _, lat, k = feasible(P)
    intervals = []
    b = n
    while b > 0:
        a, k_prev, r = back[b][k]
        intervals.append((a, b, r))
        b, k = a, k_prev
    intervals.reverse()
    period = max(Fraction(T(a, b), r) for a, b, r in intervals)
    return ChainSolution(period, int(lat), tuple(intervals))
