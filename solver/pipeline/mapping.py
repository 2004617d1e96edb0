"""Mapping pipeline threads onto hardware contexts (LATA, DAC'10 §3.3.2 and the placement before it).

LATA's own pre-mapping -- the scheduled nodes onto C virtual processors -- is
`solver.pipeline.lata_premap`; what follows places those threads on the contexts.

* **Domain bipartition** (`premap`; our addition: the paper maps with its greedy alone): the
  threads (every replica of every group), in stage order, are cut in two where the
  communication crossing the cut is smallest, subject to each half fitting the contexts of one
  half of the machine; each half is then cut again for the halves of its half, down to the
  domains of the outermost topology level (sockets on the Xeon, cores on the T2).  The cut
  starts as a contiguous cut of the stage order and is refined by single swaps that lower the
  crossing traffic (Kernighan-Lin style).
* **Cache-aware real mapping** (`real_map`): inside each outermost domain, thread pairs are
  taken heaviest communication first and put on the free pair of contexts whose shared cache
  makes their messages cheapest (LATA Eq. 1-2 through `message_cycles`); a thread whose partner
  is already placed goes to the free context cheapest to reach it; threads without
  communication fill the remaining contexts in order.

Traffic between two threads is the cost of the messages between their groups at the costliest
level (cycles, `PipelineEdge.worst`), shared equally among the replica pairs; replicas of one
group attract each other with the group's whole traffic (splitting them makes all its messages
pay the outer level in the model).  Both steps keep
`constraints.max_threads` (a context that would exceed a cap is skipped).
"""

from __future__ import annotations

import random
from collections import defaultdict

from tasksolve.solver.pipeline.candidates import Candidate, depth_stages
from tasksolve.solver.pipeline.problem import PipelineProblem

Thread = tuple[int, int]  # (group index, replica index)


def threads_in_stage_order(problem: PipelineProblem, cand: Candidate) -> list[Thread]:
    stages = cand.stages if cand.stages is not None else depth_stages(problem, cand)
    order = sorted(range(len(cand.groups)), key=lambda g: (stages[g], g))
    return [(g, r) for g in order for r in range(cand.groups[g].replicas)]


def group_edges(problem: PipelineProblem, cand: Candidate) -> dict[tuple[int, int], list]:
    """{(producer group, consumer group): [edges]} for the crossing edges."""
    where = cand.group_of(problem.n)
    out: dict[tuple[int, int], list] = defaultdict(list)
    for e in problem.edges:
        a, b = where[e.source], where[e.target]
        if a != b:
            out[(a, b)].append(e)
    return out


def traffic(problem: PipelineProblem, cand: Candidate) -> dict[tuple[Thread, Thread], float]:
    """Symmetric thread-pair weights (cycles of messages at the costliest level per packet,
    shared among replica pairs)."""
    weights: dict[tuple[Thread, Thread], float] = defaultdict(float)
    touching = [0.0] * len(cand.groups)
    for (a, b), edges in group_edges(problem, cand).items():
        ra, rb = cand.groups[a].replicas, cand.groups[b].replicas
        total = sum(e.worst for e in edges) / problem.scale
        touching[a] += total
        touching[b] += total
        w = total / (ra * rb)
        for i in range(ra):
            for j in range(rb):
                x, y = (a, i), (b, j)
                weights[(x, y)] += w
                weights[(y, x)] += w
    # replicas of one group: splitting them over two domains makes every message of the group
    # pay the outer level (the model charges a replicated group its worst pair), so they attract
    # each other with the group's whole traffic, shared among the replica pairs
    for g, group in enumerate(cand.groups):
        r = group.replicas
        if r > 1 and touching[g] > 0:
            w = touching[g] / (r * (r - 1) / 2)
            for i in range(r):
                for j in range(i + 1, r):
                    weights[((g, i), (g, j))] += w
                    weights[((g, j), (g, i))] += w
    return weights


def outer_domains(problem: PipelineProblem) -> list[list[int]]:
    """Usable contexts grouped by outermost-level domain, in order."""
    stride = problem.strides[0]
    by: dict[int, list[int]] = defaultdict(list)
    for c in problem.contexts:
        by[c // stride].append(c)
    return [by[d] for d in sorted(by)]


def neighbours(weights) -> dict[Thread, dict[Thread, float]]:
    nbr: dict[Thread, dict[Thread, float]] = defaultdict(dict)
    for (a, b), w in weights.items():
        nbr[a][b] = w
    return nbr


def _bipartition(
    threads: list[Thread], cap_left: int, cap_right: int, all_nbr: dict[Thread, dict[Thread, float]]
) -> tuple[list[Thread], list[Thread]]:
    n = len(threads)
    lo, hi = max(0, n - cap_right), min(n, cap_left)
    if lo > hi:
        raise ValueError("more threads than contexts")
    members = set(threads)
    nbr = {t: {u: w for u, w in all_nbr.get(t, {}).items() if u in members} for t in threads}
    # contiguous cuts of the stage order, the crossing traffic updated thread by thread
    position = {t: k for k, t in enumerate(threads)}
    cut, best = 0.0, None
    for i in range(hi + 1):
        if i >= lo:
            key = (round(cut, 9), -i)  # smallest CCP, then keep more on the left (pack)
            if best is None or key < best[0]:
                best = (key, i)
        if i < n:
            t = threads[i]
            for u, w in nbr[t].items():
                cut += w if position[u] > i else -w
    side = {t: (0 if k < best[1] else 1) for k, t in enumerate(threads)}
    # refinement: single swaps (or moves into free room) that lower the crossing traffic
    for _ in range(n):
        delta = {}
        for t in threads:
            same = sum(w for u, w in nbr[t].items() if side[u] == side[t])
            other = sum(w for u, w in nbr[t].items() if side[u] != side[t])
            delta[t] = same - other
        left = [t for t in threads if side[t] == 0]
        right = [t for t in threads if side[t] == 1]
        best_gain, best_option = -1e-9, None
        for a in left:
            for b in right:
                d = delta[a] + delta[b] + 2 * nbr[a].get(b, 0.0)
                if d < best_gain:
                    best_gain, best_option = d, ((a, 1), (b, 0))
        if len(left) < cap_left:
            for b in right:
                if delta[b] < best_gain:
                    best_gain, best_option = delta[b], ((b, 0),)
        if len(right) < cap_right:
            for a in left:
                if delta[a] < best_gain:
                    best_gain, best_option = delta[a], ((a, 1),)
        if best_option is None:
            break
        for t, s in best_option:
            side[t] = s
    return [t for t in threads if side[t] == 0], [t for t in threads if side[t] == 1]


def premap(problem: PipelineProblem, cand: Candidate) -> dict[Thread, int]:
    """Outermost domain (index into `outer_domains`) of each thread, by recursive bipartition at
    the smallest CCP."""
    nbr = neighbours(traffic(problem, cand))
    domains = outer_domains(problem)
    caps = [_capacity(problem, d) for d in domains]
    threads = threads_in_stage_order(problem, cand)
    if len(threads) > sum(caps):
        raise ValueError(f"{len(threads)} threads for {sum(caps)} usable contexts")
    out: dict[Thread, int] = {}

    def split(ts: list[Thread], lo: int, hi: int) -> None:
        if hi - lo == 1:
            for t in ts:
                out[t] = lo
            return
        mid = (lo + hi) // 2
        left, right = _bipartition(ts, sum(caps[lo:mid]), sum(caps[mid:hi]), nbr)
        split(left, lo, mid)
        split(right, mid, hi)

    split(threads, 0, len(domains))
    return out


def _capacity(problem: PipelineProblem, contexts: list[int]) -> int:
    cap = len(contexts)
    for level, limit in problem.max_threads:
        if level == 0:
            cap = min(cap, limit)
        elif level < 0:
            cap = min(cap, limit)
    return cap


def _allowed(problem: PipelineProblem, used: list[int], c: int) -> bool:
    for level, cap in problem.max_threads:
        if level < 0:
            if len(used) + 1 > cap:
                return False
            continue
        d = c // problem.strides[level]
        if sum(1 for u in used if u // problem.strides[level] == d) + 1 > cap:
            return False
    return True


def real_map(problem: PipelineProblem, cand: Candidate, parts: dict[Thread, int]) -> Candidate:
    """Contexts for every thread inside its pre-mapped outermost domain, heaviest edge first onto
    the cheapest free pair of contexts."""
    domains = outer_domains(problem)
    free = [list(d) for d in domains]
    used: list[int] = []
    placed: dict[Thread, int] = {}
    pair_edges: dict[tuple[Thread, Thread], list] = defaultdict(list)
    for (a, b), edges in group_edges(problem, cand).items():
        for i in range(cand.groups[a].replicas):
            for j in range(cand.groups[b].replicas):
                pair_edges[((a, i), (b, j))].extend(edges)
    weights = traffic(problem, cand)
    pairs = sorted(pair_edges, key=lambda p: (-weights[p], p))

    def cost(edges, x: int, y: int) -> int:
        level = problem.pair_level(x, y)
        return sum(e.at(level) for e in edges)

    def take(t: Thread, c: int) -> None:
        placed[t] = c
        free[parts[t]].remove(c)
        used.append(c)

    def candidates(t: Thread) -> list[int]:
        return [c for c in free[parts[t]] if _allowed(problem, used, c)] or list(free[parts[t]])

    for a, b in pairs:
        edges = pair_edges[(a, b)]
        if a in placed and b in placed:
            continue
        if a not in placed and b not in placed:
            if parts[a] == parts[b]:
                options = [(cost(edges, x, y), x, y) for x in candidates(a) for y in candidates(b) if x != y]
                if options:
                    _, x, y = min(options)
                    take(a, x)
                    take(b, y)
                    continue
            take(a, candidates(a)[0])
        one, other = (a, b) if a in placed else (b, a)
        if other in placed:
            continue
        options = [(cost(edges, placed[one], y), y) for y in candidates(other)]
        take(other, min(options)[1])
    for t in threads_in_stage_order(problem, cand):
        if t not in placed:
            take(t, candidates(t)[0])
    contexts = [[placed[(g, r)] for r in range(grp.replicas)] for g, grp in enumerate(cand.groups)]
    return cand.with_contexts(contexts)


def lata_map(problem: PipelineProblem, cand: Candidate) -> Candidate:
    """Pre-mapping by recursive bipartition, then cache-aware real mapping."""
    return real_map(problem, cand, premap(problem, cand))


def random_map(problem: PipelineProblem, cand: Candidate, rng: random.Random) -> Candidate:
    """Threads on a uniformly random injective choice of usable contexts."""
    contexts = list(problem.contexts)
    rng.shuffle(contexts)
    out, k = [], 0
    for g in cand.groups:
        out.append(contexts[k : k + g.replicas])
        k += g.replicas
    return cand.with_contexts(out)
