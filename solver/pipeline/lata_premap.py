"""LATA's pre-mapping (Kuang & Bhuyan, DAC'10 §3.3.1): the scheduled nodes onto ``C`` virtual
processors (the usable contexts), before the cache-aware real mapping of
`solver.pipeline.mapping`.

1. **Combining** (`combine`): two independent nodes of one parallel section become one when that
   increases neither ``L`` nor ``T_max`` (and their code fits the i-cache).
2. **Recursive bipartition** (`bipartition`), when more nodes than processors remain: the
   pipeline (its stages in order) is cut at the smallest CCP (ties: the more balanced cut) and
   the processors are shared in proportion to the workload (the computation of the tasks) of the
   two parts, never more processors than tasks to a part of several stages (the paper's "avoid
   assigning more than one virtual processor to a single task"), never fewer than its code needs
   (i-cache).  It ends when (1) a part has one processor left: all its tasks run on it, in
   order; or (2) a part is one stage: its processors take "a fair share of workload by
   round-robin" (`spread`) -- fewer processors than nodes: the nodes are packed onto them,
   heaviest first onto the least loaded; more: every node gets one and the extra ones are
   replicas of the node with the largest time per replica, one at a time (a replicated node
   takes packets in turn).
3. **Extra processors** (`replicate_bottleneck`): "when the real system provides more cores than
   the original scheduled topology, [...] put extra cores to the bottleneck stage for
   packet-level parallelism" (§3.3.2): one replica at a time to the node with the largest time
   per replica.

4. **Sparing** (`spare`, our reading of §5.3): nodes merged to free processors for the
   bottleneck while the latency stays within ``L0``.

Fixed replicas (`solver.pipeline.candidates`, not the paper's): a node whose replicas the spec
fixes keeps that count and never gets an extra processor; tasks of different counts are never
one node (`fits`); when the fixed nodes make more threads than processors, the bipartition is
redone on fewer processors (`premap_nodes`).

Where the paper is silent (our choices): the proportional share is rounded to the nearest
integer; a cut whose share rounds to no processor for one part is taken only when every cut
does (then that part gets one); ties between equal CCPs go to the more balanced workload.
"""

from __future__ import annotations

from fractions import Fraction

from tasksolve.solver.pipeline.candidates import Candidate, Group, NoPlan, fixed_count
from tasksolve.solver.pipeline.evaluation import evaluate
from tasksolve.solver.pipeline.lata_figures import build, figures, fits, node_error, task_names, trace_step
from tasksolve.solver.pipeline.problem import PipelineProblem


def combine(problem: PipelineProblem, cand: Candidate, trace: list[dict] | None = None) -> Candidate:
    """Step 1 of pre-mapping: merge two nodes of one stage (the lightest pair first) while that
    keeps ``L`` and ``T_max``."""
    while True:
        base = figures(problem, cand)
        best = None
        for a in range(len(cand.groups)):
            for b in range(a + 1, len(cand.groups)):
                if cand.stages[a] != cand.stages[b]:
                    continue
                groups = [(g.tasks, g.replicas) for g in cand.groups]
                groups[a] = (groups[a][0] + groups[b][0], 1)
                groups[b] = ((), 1)
                trial = build(problem, groups, list(cand.stages))
                if trial is None:
                    continue
                f = figures(problem, trial)
                if f.length <= base.length and f.tmax <= base.tmax:
                    key = (base.work[a] + base.work[b], a, b)
                    if best is None or key < best[0]:
                        best = (key, trial, f, a, b)
        if best is None:
            return cand
        _, trial, f, a, b = best
        detail = f"{task_names(problem, cand.groups[a].tasks)} with {task_names(problem, cand.groups[b].tasks)}"
        cand = trial
        trace_step(trace, problem, "combine", detail, f, cand.threads)


def _min_processors(problem: PipelineProblem, tasks: list[int]) -> int:
    """Processors the tasks need to be nodes that `fit` (code, fixed counts), filled in order
    (first fit)."""
    count, node = 1, []
    for t in tasks:
        if not fits(problem, node + [t]):
            count, node = count + 1, []
        node.append(t)
    return count


def spread(
    problem: PipelineProblem, nodes: list[tuple[tuple[int, ...], int]], k: int
) -> list[tuple[tuple[int, ...], int]]:
    """A single stage's nodes, given as (tasks, time), on `k` processors (termination case 2):
    packed heaviest first onto the least loaded processor whose code still fits when ``k`` is
    smaller, else one each and the extra processors as replicas of the node with the largest time
    per replica.  Returns (tasks, replicas)."""
    if len(nodes) > k:
        bins: list[list[int]] = [[] for _ in range(k)]
        load = [0] * k
        for tasks, t in sorted(nodes, key=lambda n: (-n[1], n[0])):
            options = [i for i in range(k) if fits(problem, bins[i] + list(tasks))]
            if not options:
                raise node_error(
                    problem, f"the i-cache of {problem.icache} instructions cannot hold the stage on {k} contexts"
                )
            i = min(options, key=lambda i: (load[i], i))
            bins[i] += tasks
            load[i] += t
        return [(tuple(sorted(b)), 1) for b in bins if b]
    fixed = [fixed_count(problem, tasks) for tasks, _ in nodes]
    reps = [f or 1 for f in fixed]
    free = [i for i, f in enumerate(fixed) if not f]
    for _ in range(k - sum(reps) if free else 0):
        i = max(free, key=lambda i: (Fraction(nodes[i][1], reps[i]), -i))
        reps[i] += 1
    return [(tasks, r) for (tasks, _), r in zip(nodes, reps)]


def bipartition(problem: PipelineProblem, cand: Candidate, processors: int) -> Candidate:
    """Step 2 of pre-mapping (module docstring): recursive bipartition of the stages at the
    smallest CCP, processors in proportion to workload."""
    f = figures(problem, cand)
    n_stages = max(cand.stages) + 1
    nodes_of = [[g for g, s in enumerate(cand.stages) if s == i] for i in range(n_stages)]
    boundary = dict.fromkeys(range(n_stages - 1), 0)
    for w, s, _, _ in f.ccp:
        boundary[s] = max(boundary[s], w)

    def work(stages: range) -> int:
        return sum(f.work[g] for s in stages for g in nodes_of[s])

    def tasks(stages: range) -> list[int]:
        return sorted(t for s in stages for g in nodes_of[s] for t in cand.groups[g].tasks)

    out: list[tuple[tuple[tuple[int, ...], int], int]] = []  # ((tasks, replicas), stage)

    def split(stages: range, k: int) -> None:
        if k == 1:
            out.append(((tuple(tasks(stages)), 1), stages.start))
            return
        if len(stages) == 1:
            nodes = [(cand.groups[g].tasks, f.times[g]) for g in nodes_of[stages.start]]
            for node in spread(problem, nodes, k):
                out.append((node, stages.start))
            return
        total = work(stages)
        options = []
        for cut in range(stages.start + 1, stages.stop):
            left, right = range(stages.start, cut), range(cut, stages.stop)
            share = round(k * work(left) / total) if total else k // 2
            proportional = 1 <= share <= k - 1  # both parts get a processor by proportion
            key = (not proportional, boundary[cut - 1], abs(2 * work(left) - total), cut)
            options.append((key, left, right, share))
        _, left, right, share = min(options)
        lo = _min_processors(problem, tasks(left))
        hi = k - _min_processors(problem, tasks(right))
        if lo > hi:
            raise node_error(
                problem, f"the i-cache of {problem.icache} instructions cannot hold the pipeline on {k} contexts"
            )
        if len(left) > 1:
            share = min(share, len(tasks(left)))
        if len(right) > 1:
            share = max(share, k - len(tasks(right)))
        share = min(max(share, lo, 1), hi, k - 1)
        split(left, share)
        split(right, k - share)

    split(range(n_stages), processors)
    groups = [node for node, _ in out]
    return _build_checked(problem, groups, [s for _, s in out])


def _build_checked(problem: PipelineProblem, groups, stages) -> Candidate:
    cand = build(problem, groups, stages)
    if cand is None:
        raise node_error(problem, f"the i-cache of {problem.icache} instructions cannot hold a pre-mapped node")
    return cand


def replicate_bottleneck(problem: PipelineProblem, cand: Candidate, trace: list[dict] | None = None) -> Candidate:
    """Extra processors to the bottleneck, one replica at a time (§3.3.2, last paragraph); the
    bottleneck among the nodes whose replicas the spec leaves free (`_replicate_once`)."""
    while cand.threads < problem.n_contexts:
        more = _replicate_once(problem, cand)
        if more is None:
            break
        cand = more
        b = evaluate(problem, cand, pessimistic=True).bottleneck
        detail = f"{task_names(problem, cand.groups[b].tasks)} x{cand.groups[b].replicas}"
        trace_step(trace, problem, "replicate", detail, figures(problem, cand), cand.threads)
    return cand


def spare(problem: PipelineProblem, cand: Candidate, trace: list[dict] | None = None) -> Candidate:
    """Sparing nodes for the bottleneck (our reading of §5.3: "LATA spares nodes from parallel
    sections to help reduce the bottleneck stage time [...] Originally, those nodes are used to
    satisfy latency constraints"; the paper gives no procedure): two unreplicated nodes -- of one
    stage, or communicating across adjacent stages (a CCP elimination of one pair) -- become one,
    and the processor this frees is a replica of the bottleneck, when that lowers ``T_max`` and
    keeps the latency within ``L0``; the pair giving the lowest ``T_max`` first, repeated while
    one helps.  A looser bound spares more nodes: the rising throughput of Figure 14."""
    bound = problem.latency_max
    while True:
        base = figures(problem, cand)
        best = None
        for a in range(len(cand.groups)):
            for b in range(a + 1, len(cand.groups)):
                if cand.groups[a].replicas + cand.groups[b].replicas > 2:
                    continue
                if cand.stages[a] != cand.stages[b] and not _adjacent(problem, cand, a, b):
                    continue
                groups = [(g.tasks, g.replicas) for g in cand.groups]
                groups[a] = (groups[a][0] + groups[b][0], 1)
                groups[b] = ((), 1)
                merged = build(problem, groups, list(cand.stages))
                trial = None if merged is None else _replicate_once(problem, merged)
                if trial is None:
                    continue
                f = figures(problem, trial)
                if (f.tmax, f.at_tmax) >= (base.tmax, base.at_tmax) or (bound is not None and f.length > bound):
                    continue
                key = (f.tmax, f.at_tmax, f.length, a, b)
                if best is None or key < best[0]:
                    best = (key, trial, f, a, b)
        if best is None:
            return cand
        _, cand, f, a, b = best
        detail = f"{task_names(problem, cand.groups[a].tasks)}: a processor spared for the bottleneck"
        trace_step(trace, problem, "spare", detail, f, cand.threads)


def _adjacent(problem: PipelineProblem, cand: Candidate, a: int, b: int) -> bool:
    """Node `a` sends to node `b` or `b` to `a`, in adjacent stages."""
    if abs(cand.stages[a] - cand.stages[b]) != 1:
        return False
    where = cand.group_of(problem.n)
    return any({where[e.source], where[e.target]} == {a, b} for e in problem.edges)


def _replicate_once(problem: PipelineProblem, cand: Candidate) -> Candidate | None:
    """One more replica for the bottleneck node, or, when the spec fixes its replicas, for the
    free node of the largest time per replica; None when every node's count is fixed."""
    ev = evaluate(problem, cand, pessimistic=True)
    free = [g for g, grp in enumerate(cand.groups) if not fixed_count(problem, grp.tasks)]
    if not free:
        return None
    b = (
        ev.bottleneck
        if ev.bottleneck in free
        else max(free, key=lambda g: (Fraction(ev.times[g]) / ev.replicas[g], -g))
    )
    groups = tuple(Group(g.tasks, g.replicas + (1 if i == b else 0)) for i, g in enumerate(cand.groups))
    return Candidate(groups, cand.stages)


def premap_nodes(problem: PipelineProblem, cand: Candidate, trace: list[dict] | None = None) -> Candidate:
    """Pre-mapping (§3.3.1) of a schedule onto ``problem.n_contexts`` virtual processors."""
    combined = cand = combine(problem, cand, trace)
    k = problem.n_contexts
    while len(cand.groups) > problem.n_contexts or cand.threads > problem.n_contexts:
        if k < 1:  # only with fixed counts: without, one bipartition onto the contexts fits them
            raise NoPlan(f"the fixed replica counts leave no pre-mapping onto {problem.n_contexts} contexts")
        cand = bipartition(problem, combined, k)
        k -= max(1, cand.threads - problem.n_contexts)
        trace_step(
            trace,
            problem,
            "bipartition",
            f"{len(cand.groups)} nodes, {cand.threads} processors",
            figures(problem, cand),
            cand.threads,
        )
    cand = replicate_bottleneck(problem, cand, trace)
    return spare(problem, cand, trace)
