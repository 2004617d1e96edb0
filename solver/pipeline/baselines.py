"""The comparison systems of LATA (DAC'10 §4-5: Parallel, Greedy, Random and Bipar) and the List
(HLFET) latency reference, on the closed-form model of `solver.pipeline.problem`.

The paper defines them by reference and a sentence each (§1, §4): **Parallel** [9] is spatial
parallelism, every processor running whole packets; **List** is HLFET [8], "a reference for the
best achievable latency"; these two are the first group, "no memory constraint is considered".
**Greedy** [25] (pipelining), **Random** [23] and **Bipar** [26] (parallel pipelining: "each stage
contains multiple parallel cores") form the second group of network-processor systems, which
"adopt packet-level parallelism" and have "limited memory constraints for each processor": a
thread's code must fit the i-cache (`Topology.icache`), and the contexts a pipeline leaves free
replicate its bottleneck stage (`replicate_bottleneck`, the same rule as LATA's §3.3.2).  Where
the paper is silent, each function says what we chose.  None of them looks at the latency bound
except List, which minimises latency; their plans are evaluated exactly like LATA's.

Replica counts a spec fixes (`solver.pipeline.candidates`, "Fixed replicas"; not the papers'):
each system's grouping is cut where the counts differ and given them (`respect_fixed`), tasks of
different counts never share a thread or stage (`fits`), the contexts left replicate only free
groups; a system that cannot keep them raises `NoPlan`.
"""

from __future__ import annotations

import heapq
import random
import time

from tasksolve.solver.pipeline.candidates import Candidate, Group, NoPlan, depth_stages, least_threads, respect_fixed
from tasksolve.solver.pipeline.evaluation import MethodResult, evaluate, first_contexts, sequential_candidate
from tasksolve.solver.pipeline.lata import estimate_profiles, fits, with_estimate
from tasksolve.solver.pipeline.lata_figures import node_error
from tasksolve.solver.pipeline.lata_premap import replicate_bottleneck
from tasksolve.solver.pipeline.mapping import lata_map, random_map
from tasksolve.solver.pipeline.problem import PipelineProblem
from tasksolve.specs.graphs import topological_order


def _result(problem: PipelineProblem, method: str, cand: Candidate, t0: float, notes=None) -> MethodResult:
    ev = evaluate(problem, cand)
    return MethodResult(
        method=method,
        candidate=cand,
        evaluation=ev,
        status="HEURISTIC",
        claims_feasible=None,
        seconds=time.perf_counter() - t0,
        notes=list(notes or []),
    )


def _with_stages(problem: PipelineProblem, groups: list[tuple[int, ...]]) -> Candidate:
    cand = Candidate(tuple(Group(tuple(sorted(g))) for g in groups if g))
    return Candidate(cand.groups, depth_stages(problem, cand))


def _kept(problem: PipelineProblem, method: str, cand: Candidate) -> Candidate:
    """`cand` keeping the fixed replica counts (`respect_fixed`); `NoPlan` when it cannot."""
    kept = respect_fixed(problem, cand)
    if kept is None:
        raise NoPlan(f"{method}: its plan's fixed replica counts exceed the {problem.n_contexts} contexts")
    return kept


# ------------------------------------------------------------------------------ Parallel
def parallel(problem: PipelineProblem) -> MethodResult:
    """**Parallel** (LATA's evaluation): every thread runs the whole task graph on its own packets
    -- one group of all tasks replicated on every usable context.  No communication; latency =
    the sequential time; period = sequential / C."""
    t0 = time.perf_counter()
    cand = first_contexts(problem, _kept(problem, "Parallel", sequential_candidate(problem, problem.n_contexts)))
    notes = ["the task graph cut where the fixed replica counts differ"] if len(cand.groups) > 1 else []
    return _result(problem, "parallel", cand, t0, notes)


# ------------------------------------------------------------------------------ List (HLFET)
def hlfet(problem: PipelineProblem, processors: int) -> tuple[list[int], list[int]]:
    """HLFET list scheduling of one packet (Adam, Chandy & Dickson 1974): ready tasks by highest
    static level (b-level of work), each on the processor where it can start earliest, a message
    from another processor arriving after its edge cost (`problem`'s costs, level-independent
    when built by `with_estimate`).  Returns (processor, start) per task."""
    proc = [-1] * problem.n
    start = [0] * problem.n
    finish = [0] * problem.n
    free_at = [0] * processors
    missing = [len(p) for p in problem.preds]
    ready = [(-problem.b_levels[t], t) for t in range(problem.n) if missing[t] == 0]
    heapq.heapify(ready)
    while ready:
        _, t = heapq.heappop(ready)
        best = None
        for p in range(processors):
            est = free_at[p]
            for e in problem.in_edges[t]:
                arrive = finish[e.source] + (0 if proc[e.source] == p else e.worst)
                est = max(est, arrive)
            if best is None or (est, p) < best:
                best = (est, p)
        est, p = best
        proc[t], start[t] = p, est
        finish[t] = est + problem.work[t]
        free_at[p] = finish[t]
        for s in problem.succs[t]:
            missing[s] -= 1
            if missing[s] == 0:
                heapq.heappush(ready, (-problem.b_levels[s], s))
    return proc, start


def hlfet_groups(problem: PipelineProblem, proc: list[int], start: list[int]) -> list[tuple[int, ...]]:
    """Threads of an HLFET schedule: each processor's tasks in start order, cut before every task
    that receives a message from another processor and after every task that sends one (a
    thread joins its inputs before it starts and sends its messages when it ends; start times
    keep the cuts acyclic)."""
    groups: list[tuple[int, ...]] = []
    for p in sorted(set(proc)):
        tasks = sorted((t for t in range(problem.n) if proc[t] == p), key=lambda t: (start[t], t))
        current: list[int] = []
        for t in tasks:
            if current and any(proc[q] != p for q in problem.preds[t]):
                groups.append(tuple(current))
                current = []
            current.append(t)
            if any(proc[s] != p for s in problem.succs[t]):
                groups.append(tuple(current))
                current = []
        if current:
            groups.append(tuple(current))
    return groups


def list_hlfet(problem: PipelineProblem) -> MethodResult:
    """**List** (HLFET), the lowest-latency reference of LATA: one packet list-scheduled (`hlfet`)
    on ``p`` processors, each processor's run between incoming messages becoming a thread
    (`hlfet_groups`).  Every ``p`` from 1 (the sequential thread) to ``min(tasks, C)`` and every
    communication estimate of `solver.pipeline.lata.estimate_profiles` is tried; among the plans
    that fit the contexts, the one of lowest exact latency (then period) is kept.  Threads are
    mapped in stage order onto neighbouring contexts."""
    t0 = time.perf_counter()
    best = None
    for profile in estimate_profiles(problem):
        estimate = with_estimate(problem, profile)
        for processors in range(1, min(problem.n, problem.n_contexts) + 1):
            proc, start = hlfet(estimate, processors)
            kept = respect_fixed(problem, _with_stages(problem, hlfet_groups(estimate, proc, start)))
            if kept is None or kept.threads > problem.n_contexts:
                continue
            cand = first_contexts(problem, kept)
            ev = evaluate(problem, cand)
            key = (ev.latency, ev.period, ev.threads)
            if best is None or key < best[0]:
                best = (key, cand)
    if best is None:
        raise NoPlan(f"List: no schedule keeps the fixed replica counts on {problem.n_contexts} contexts")
    return _result(problem, "list", best[1], t0)


# ------------------------------------------------------------------------------ Greedy
def greedy(problem: PipelineProblem) -> MethodResult:
    """**Greedy** pipeline ([25]; our reading, after Greedy Pipe, Franklin & Datar 2003, without its
    search over stage counts): tasks in HLFET priority order (highest b-level among the ready
    tasks) fill a stage -- one thread -- until the next task would make its work exceed
    ``sequential / C`` or its code overflow the i-cache; then a new stage opens.  The contexts
    left free replicate the bottleneck (module docstring).  Latency ignored; threads mapped in
    stage order onto neighbouring contexts."""
    t0 = time.perf_counter()
    target = problem.sequential / problem.n_contexts
    missing = [len(p) for p in problem.preds]
    ready = [(-problem.b_levels[t], t) for t in range(problem.n) if missing[t] == 0]
    heapq.heapify(ready)
    groups: list[list[int]] = [[]]
    load = 0
    while ready:
        _, t = heapq.heappop(ready)
        full = load + problem.work[t] > target or not fits(problem, groups[-1] + [t])
        if groups[-1] and full and least_threads(problem, groups + [[t]]) <= problem.n_contexts:
            groups.append([])
            load = 0
        groups[-1].append(t)
        load += problem.work[t]
        for s in problem.succs[t]:
            missing[s] -= 1
            if missing[s] == 0:
                heapq.heappush(ready, (-problem.b_levels[s], s))
    if not all(fits(problem, g) for g in groups):
        raise node_error(problem, f"Greedy: the task graph does not fit {problem.n_contexts} contexts' i-caches")
    cand = _kept(problem, "Greedy", Candidate(tuple(Group(tuple(g)) for g in groups), tuple(range(len(groups)))))
    return _result(problem, "greedy", first_contexts(problem, replicate_bottleneck(problem, cand)), t0)


# ------------------------------------------------------------------------------ Random
def random_topological_order(problem: PipelineProblem, rng: random.Random) -> list[int]:
    return topological_order(
        range(problem.n), problem.preds.__getitem__, choose=lambda ready: ready.pop(rng.randrange(len(ready)))
    )


RANDOM_DRAWS = 100  # random parallel pipelines drawn per run, the best kept


def random_draw(problem: PipelineProblem, rng: random.Random) -> Candidate | None:
    """One random parallel pipeline: a uniformly random topological order (random choice among the
    ready tasks) cut at random places into ``k`` consecutive stages, ``k`` uniform in
    ``1..min(tasks, C)``; every stage gets ``C // k`` replicas (a ``k``-deep, ``C // k``-wide
    parallel pipeline) and the contexts left replicate the bottleneck; random contexts.  A stage
    holding tasks of different fixed replica counts is cut where they differ (`respect_fixed`).
    None when a stage's code overflows the i-cache, or the fixed counts exceed the contexts."""
    order = random_topological_order(problem, rng)
    k = rng.randint(1, min(problem.n, problem.n_contexts))
    cuts = sorted(rng.sample(range(1, problem.n), k - 1)) if k > 1 else []
    bounds = [0] + cuts + [problem.n]
    groups = [tuple(order[a:b]) for a, b in zip(bounds, bounds[1:])]  # in order: `respect_fixed` cuts runs
    width = problem.n_contexts // k
    cand = respect_fixed(problem, Candidate(tuple(Group(g, width) for g in groups), tuple(range(len(groups)))))
    if cand is None or not all(fits(problem, g.tasks) for g in cand.groups):
        return None
    cand = Candidate(tuple(Group(tuple(sorted(g.tasks)), g.replicas) for g in cand.groups), cand.stages)
    return random_map(problem, replicate_bottleneck(problem, cand), rng)


def random_pipeline(problem: PipelineProblem, seed: int = 0, draws: int = RANDOM_DRAWS) -> MethodResult:
    """**Random** (Weng & Wolf [23], randomized mapping onto a parallel-pipeline topology; our
    reading): `draws` random parallel pipelines (`random_draw`), the one of highest throughput
    kept (then lower latency).  Deterministic for a given `seed`."""
    t0 = time.perf_counter()
    rng = random.Random(seed)
    best = None
    for _ in range(draws):
        cand = random_draw(problem, rng)
        if cand is not None:
            ev = evaluate(problem, cand)
            key = (ev.period, ev.latency)
            if best is None or key < best[0]:
                best = (key, cand)
    if best is None:
        raise node_error(
            problem, f"Random: no random pipeline of {draws} fits the {problem.icache}-instruction i-cache"
        )
    return _result(problem, "random", best[1], t0, [f"seed {seed}, best of {draws} random parallel pipelines"])


# ------------------------------------------------------------------------------ Bipar
def bipar(problem: PipelineProblem) -> MethodResult:
    """**Bipar** (Yu et al. [26], recursive bipartitioning and refining; our reading): the heaviest
    part (by work) is cut in two along its topological order where ``max(work of either half) +
    the cost of the messages crossing the cut`` (costliest level) is smallest -- balanced halves,
    small cut -- while that lowers the part's time and contexts remain; a part whose code
    overflows the i-cache is cut whatever the gain.  The parts are threads, staged by depth; the
    contexts left replicate the bottleneck (module docstring); mapped by the same recursive
    bipartition of the machine as LATA's (`solver.pipeline.mapping`)."""
    t0 = time.perf_counter()
    parts: list[list[int]] = [list(range(problem.n))]
    done: set[tuple[int, ...]] = set()
    while least_threads(problem, parts) < problem.n_contexts:
        options = [p for p in parts if len(p) > 1 and tuple(p) not in done]
        if not options:
            break
        part = max(options, key=lambda p: (not fits(problem, p), sum(problem.work[t] for t in p), -p[0]))
        total = sum(problem.work[t] for t in part)
        best = None
        for i in range(1, len(part)):
            left, right = set(part[:i]), set(part[i:])
            cut = sum(e.worst for e in problem.edges if e.source in left and e.target in right)
            wl = sum(problem.work[t] for t in left)
            key = (max(wl, total - wl) + cut, abs(2 * wl - total), i)
            if best is None or key < best[0]:
                best = (key, i)
        if best is None or (best[0][0] >= total and fits(problem, part)):
            done.add(tuple(part))
            continue
        i = best[1]
        k = parts.index(part)
        parts[k : k + 1] = [part[:i], part[i:]]
    if not all(fits(problem, p) for p in parts):
        raise node_error(problem, f"Bipar: the task graph does not fit {problem.n_contexts} contexts' i-caches")
    cand = replicate_bottleneck(problem, _kept(problem, "Bipar", _with_stages(problem, [tuple(p) for p in parts])))
    return _result(problem, "bipar", lata_map(problem, cand), t0)


METHODS = {
    "parallel": parallel,
    "list": list_hlfet,
    "greedy": greedy,
    "random": random_pipeline,
    "bipar": bipar,
}
