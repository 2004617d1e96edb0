"""LATA: latency- and throughput-aware parallel pipelining (Kuang & Bhuyan, "LATA: a latency and
throughput-aware packet processing system", DAC 2010), step by step.

This module was written from a description of LATA's steps and the paper's abstract, before the
paper's text was at hand, on the closed-form model of `solver.pipeline.problem`; where we had to
decide, the docstrings say so.  It has not yet been checked step by step against the paper (DAC'10
§3): the differences known so far -- among them the location-independent communication estimate
of Eq. 2, per-task frequencies and the instruction-cache limit, none of which is modelled -- are
listed in docs/design.md ("Departures", LATA).

1. **List-based pipeline scheduling by levels** (`by_levels`): every task becomes a thread at
   the stage of its ASAP level (longest chain of predecessors), so the tasks of one level run in
   parallel.  With more tasks than contexts, the merge of two threads that least increases the
   stage latency (then the period) is applied until they fit.
2. **Latency hiding** (`hide`): LATA's latency is the *stage latency* -- the sum over stages of
   the slowest thread of the stage, its incoming communication included, i.e. "stage times plus
   the critical communication between stages" (the issue's wording of the paper).  The model's latency (the longest
   path, `solver.pipeline.problem`) never exceeds it; LATA's moves are judged on both, the bound
   on the model's latency (our decision: the plans are judged by it).  A thread whose time (work + communication) sets
   its stage's time is moved into the slack of the stage after it (**FoH**, forward hiding: its
   successors are at least two stages later) or before it (**BaH**, backward hiding: its
   predecessors are at least two stages earlier) when it fits there, so its communication is
   overlapped with the longer threads of that stage and the stage latency drops.
3. **CCP elimination and reduction** (`shorten`), while the latency exceeds ``L0``: for
   each critical communication path (CCP: a crossing edge into a thread that sets its stage's
   time, or lies on the longest path), **BaS** (backward shift: the consumer moves into the producer's thread) or **FoS**
   (forward shift: the producer moves into the consumer's thread).  Shifting the whole thread
   *eliminates* the communication between the two threads; shifting one task *reduces* it.
   Among all shifts the one with the largest benefit ratio ``Q = latency reduction / period
   increase`` (infinite when the period does not grow) is applied; hiding is re-run after each.
   Shifts that only lower the stage latency (or, at a join, shorten one of several critical
   branches) come after those that lower the latency.  Our addition: **UnRep** (one replica
   fewer at either end of a CCP), which matters once mapped -- a thread replicated over several
   domains pays the outer level's cost.
   If no shift helps and the bound is still missed, the sequential thread (latency = the
   sequential time) is the last resort.
4. **Decomposition** (`decompose`) of the bottleneck thread while contexts are free and the
   period falls, the latency staying within ``L0``: **SeD** (sequential: split its task
   list into two consecutive stages), **PaD** (parallel: split independent tasks into two
   threads of the same stage), **BaD** / **FoD** (backward / forward: move its first task into
   a thread of the previous stage, or its last task into a thread of the next stage), and
   **Rep** (our addition after NPIRE: one more replica, which divides its period).
5. **Pre-mapping** by recursive bipartition at the smallest CCP and **cache-aware real mapping**
   (`solver.pipeline.mapping`).

Steps 1-4 cannot know the mapping, so they charge every crossing edge an *estimated* cost.  The
paper uses the average cost of Eq. 2; we run the schedule once per distinct cost profile -- the
costliest level of each edge (pessimistic, so a schedule within ``L0`` stays within it after any
mapping when costs grow outward), then each sharing level's cost -- map each schedule, evaluate
it exactly, and keep the best (our addition; it only ever chooses among LATA schedules).  LATA
*claims* the bound is met only when the mapped plan's exact latency meets it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction

from solver.pipeline.candidates import Candidate, Group, group_preds, normalize_stages
from solver.pipeline.evaluation import Evaluation, MethodResult, evaluate, sequential_candidate
from solver.pipeline.mapping import lata_map
from solver.pipeline.problem import PipelineProblem


# ------------------------------------------------------------------------------ helpers
def with_estimate(problem: PipelineProblem, profile: str | int) -> PipelineProblem:
    """The problem with every edge costing the same at every level: its costliest level
    (``"worst"``) or the cost at sharing level `profile`."""
    edges = []
    for e in problem.edges:
        c = e.worst if profile == "worst" else e.at(int(profile))
        edges.append(replace(e, cost=(c,) * len(e.cost)))
    return replace(problem, edges=tuple(edges))


Evaluator = Callable[[Candidate], Evaluation]


def _ev(problem: PipelineProblem, cand: Candidate) -> Evaluation:
    return evaluate(problem, cand, pessimistic=True)


def _sorted_tasks(tasks) -> tuple[int, ...]:
    return tuple(sorted(tasks))  # task index order is a topological order


def _build(problem: PipelineProblem, groups: list[tuple[tuple[int, ...], int]], stages: list[int]) -> Candidate | None:
    """Candidate from (tasks, replicas) and stage labels (groups left empty are dropped), with
    labels made valid; None when the groups form a cycle."""
    keep = [i for i, (tasks, _) in enumerate(groups) if tasks]
    cand = Candidate(
        tuple(Group(_sorted_tasks(groups[i][0]), groups[i][1]) for i in keep), tuple(stages[i] for i in keep)
    )
    return normalize_stages(problem, cand)


def _parts(cand: Candidate) -> tuple[list[tuple[tuple[int, ...], int]], list[int]]:
    return [(g.tasks, g.replicas) for g in cand.groups], list(cand.stages)


def _step(trace: list[dict], problem: PipelineProblem, name: str, detail: str, ev: Evaluation) -> None:
    trace.append(
        {
            "step": name,
            "detail": detail,
            "period": ev.period_cycles,
            "stage_latency": problem.cycles(ev.stage_latency),
            "latency": ev.latency_cycles,
            "threads": ev.threads,
        }
    )


def _names(problem: PipelineProblem, tasks) -> str:
    return "+".join(problem.tasks[t] for t in tasks)


# ------------------------------------------------------------------------------ step 1
def by_levels(problem: PipelineProblem, trace: list[dict] | None = None) -> Candidate:
    """List-based pipeline scheduling by levels (step 1)."""
    groups = [((t,), 1) for t in range(problem.n)]
    stages = [problem.levels[t] for t in range(problem.n)]
    cand = _build(problem, groups, stages)
    assert cand is not None
    if trace is not None:
        _step(
            trace,
            problem,
            "levels",
            f"{problem.n} tasks on {max(cand.stages) + 1} stages by ASAP level",
            _ev(problem, cand),
        )
    while len(cand.groups) > problem.n_contexts:
        best = None
        groups, stages = _parts(cand)
        for a in range(len(groups)):
            for b in range(len(groups)):
                if a == b or stages[a] > stages[b] or (stages[a] == stages[b] and a > b):
                    continue
                trial_groups = list(groups)
                trial_groups[a] = (groups[a][0] + groups[b][0], 1)
                trial_groups[b] = ((), 1)
                trial = _build(problem, trial_groups, stages)
                if trial is None:
                    continue
                ev = _ev(problem, trial)
                key = (ev.stage_latency, ev.period, a, b)
                if best is None or key < best[0]:
                    best = (key, trial, (a, b))
        assert best is not None  # merging everything into one thread is always possible
        _, cand, (a, b) = best
        if trace is not None:
            _step(
                trace,
                problem,
                "pack",
                f"merged {_names(problem, groups[a][0])} with "
                f"{_names(problem, groups[b][0])} to fit {problem.n_contexts} contexts",
                _ev(problem, cand),
            )
    return cand


# ------------------------------------------------------------------------------ step 2
def hide(
    problem: PipelineProblem, cand: Candidate, trace: list[dict] | None = None, evaluator: Evaluator | None = None
) -> Candidate:
    """Latency hiding (step 2): FoH / BaH moves while they lower the stage latency."""
    ev_of = evaluator or (lambda c: _ev(problem, c))
    while True:
        base = ev_of(cand)
        preds = group_preds(problem, cand)
        succs: list[set[int]] = [set() for _ in cand.groups]
        for g, ps in enumerate(preds):
            for p in ps:
                succs[p].add(g)
        stage_max: dict[int, int] = {}
        for g, s in enumerate(cand.stages):
            stage_max[s] = max(stage_max.get(s, 0), base.times[g])
        best = None
        for g, s in enumerate(cand.stages):
            if base.times[g] < stage_max[s]:
                continue  # only threads that set their stage's time
            for name, target in (("FoH", s + 1), ("BaH", s - 1)):
                if name == "FoH" and any(cand.stages[x] <= target for x in succs[g]):
                    continue
                if name == "BaH" and (target < 0 or any(cand.stages[x] >= target for x in preds[g])):
                    continue
                if target not in stage_max:
                    continue  # moving into an empty stage hides nothing
                stages = list(cand.stages)
                stages[g] = target
                trial = normalize_stages(problem, Candidate(cand.groups, tuple(stages)))
                if trial is None:
                    continue
                ev = ev_of(trial)
                if ev.stage_latency < base.stage_latency:
                    key = (ev.stage_latency, ev.period, g, name)
                    if best is None or key < best[0]:
                        best = (key, trial, name, g)
        if best is None:
            return cand
        _, cand, name, g = best
        if trace is not None:
            _step(
                trace,
                problem,
                name,
                f"{_names(problem, cand.groups[g].tasks)} hidden in stage {cand.stages[g]}",
                ev_of(cand),
            )


# ------------------------------------------------------------------------------ step 3
def _shift_moves(problem: PipelineProblem, cand: Candidate, base: Evaluation):
    """Candidate BaS / FoS moves on the critical communication paths."""
    where = cand.group_of(problem.n)
    stage_max: dict[int, int] = {}
    for g, s in enumerate(cand.stages):
        stage_max[s] = max(stage_max.get(s, 0), base.times[g])
    groups, stages = _parts(cand)
    critical = set(base.critical)
    seen = set()
    for e in problem.edges:
        p, g = where[e.source], where[e.target]
        if p == g or base.comm[g] == 0:
            continue
        if base.times[g] < stage_max[cand.stages[g]] and g not in critical:
            continue  # a CCP: into a thread that sets its stage's time or lies on the longest path
        options = []
        # BaS: the consumer joins the producer's thread (one task: reduction; all: elimination)
        moved = list(groups)
        moved[p] = (groups[p][0] + (e.target,), groups[p][1])
        moved[g] = (tuple(t for t in groups[g][0] if t != e.target), groups[g][1])
        options.append(("BaS", "reduction", moved, f"{problem.tasks[e.target]} -> thread of {problem.tasks[e.source]}"))
        merged = list(groups)
        merged[p] = (groups[p][0] + groups[g][0], max(groups[p][1], groups[g][1]))
        merged[g] = ((), 1)
        options.append(
            (
                "BaS",
                "elimination",
                merged,
                f"{_names(problem, groups[g][0])} -> thread of {_names(problem, groups[p][0])}",
            )
        )
        # FoS: the producer joins the consumer's thread
        moved = list(groups)
        moved[g] = (groups[g][0] + (e.source,), groups[g][1])
        moved[p] = (tuple(t for t in groups[p][0] if t != e.source), groups[p][1])
        options.append(("FoS", "reduction", moved, f"{problem.tasks[e.source]} -> thread of {problem.tasks[e.target]}"))
        merged = list(groups)
        merged[g] = (groups[p][0] + groups[g][0], max(groups[p][1], groups[g][1]))
        merged[p] = ((), 1)
        options.append(
            (
                "FoS",
                "elimination",
                merged,
                f"{_names(problem, groups[p][0])} -> thread of {_names(problem, groups[g][0])}",
            )
        )
        # our addition: fewer replicas of either end keep the two threads' contexts closer
        # (a replicated thread spread over several domains pays the outer level's cost)
        for end in (p, g):
            if groups[end][1] > 1:
                fewer = list(groups)
                fewer[end] = (groups[end][0], groups[end][1] - 1)
                options.append(
                    ("UnRep", "reduction", fewer, f"{_names(problem, groups[end][0])} x{groups[end][1] - 1}")
                )
        for name, kind, new_groups, detail in options:
            signature = tuple(sorted(tuple(sorted(t)) for t, _ in new_groups if t))
            if (name, signature) in seen:
                continue
            seen.add((name, signature))
            new_stages = list(stages)
            if name == "BaS":
                new_stages[p] = stages[p]
            trial = _build(problem, new_groups, new_stages)
            if trial is not None and trial.threads <= problem.n_contexts:
                yield name, kind, trial, detail


def shorten(
    problem: PipelineProblem, cand: Candidate, trace: list[dict] | None = None, evaluator: Evaluator | None = None
) -> Candidate:
    """CCP elimination / reduction (step 3) until the latency meets the bound.

    The benefit of a shift is the reduction of the latency (longest path, the model's latency),
    else of the stage latency, else of the sum of finish times (`_latency_key`); ``Q`` divides it
    by the period increase.  Every applied shift strictly lowers that key, so the loop ends."""
    bound = problem.latency_max
    if bound is None:
        return cand
    ev_of = evaluator or (lambda c: _ev(problem, c))
    hiding = evaluator is None  # hiding only relabels stages: part of the scheduling phase
    if hiding:
        cand = hide(problem, cand, trace)
    while ev_of(cand).latency > bound:
        base = ev_of(cand)
        best = None
        for name, kind, trial, detail in _shift_moves(problem, cand, base):
            ev = ev_of(trial)
            before, after = _latency_key(base), _latency_key(ev)
            if after >= before:
                continue
            tier = next(i for i, (a, b) in enumerate(zip(before, after)) if a != b)
            benefit = before[tier] - after[tier]
            loss = ev.period - base.period
            q = Fraction(benefit) / loss if loss > 0 else None  # None: infinite benefit ratio
            key = (tier, 0 if q is None else 1, -(q or 0), -benefit, ev.period, detail)
            if best is None or key < best[0]:
                best = (key, trial, name, kind, detail, q)
        if best is None:
            break
        _, cand, name, kind, detail, q = best
        if trace is not None:
            qtext = "inf" if q is None else f"{float(q):.3g}"
            _step(trace, problem, name, f"CCP {kind}: {detail} (Q = {qtext})", ev_of(cand))
        if hiding:
            cand = hide(problem, cand, trace)
    if ev_of(cand).latency > bound and problem.sequential <= bound:
        cand = sequential_candidate(problem)
        if trace is not None:
            _step(trace, problem, "sequential", "no shift meets the bound: one thread runs every task", ev_of(cand))
    return cand


# ------------------------------------------------------------------------------ step 4
def _components(problem: PipelineProblem, tasks: tuple[int, ...]) -> list[list[int]]:
    inside = set(tasks)
    parent = {t: t for t in tasks}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for t in tasks:
        for p in problem.preds[t]:
            if p in inside:
                parent[find(p)] = find(t)
    comps: dict[int, list[int]] = {}
    for t in tasks:
        comps.setdefault(find(t), []).append(t)
    return list(comps.values())


def _decompositions(problem: PipelineProblem, cand: Candidate, b: int):
    groups, stages = _parts(cand)
    tasks, reps = groups[b]
    s = stages[b]
    free = problem.n_contexts - cand.threads
    # SeD: split into two consecutive stages
    if len(tasks) > 1 and free >= reps:
        for i in range(1, len(tasks)):
            new_groups = list(groups) + [(tasks[i:], reps)]
            new_groups[b] = (tasks[:i], reps)
            new_stages = [x + 1 if x > s else x for x in stages] + [s + 1]
            yield "SeD", f"{_names(problem, tasks[:i])} | {_names(problem, tasks[i:])}", new_groups, new_stages
    # PaD: independent tasks into two parallel threads
    comps = _components(problem, tasks)
    if len(comps) > 1 and free >= reps:
        comps.sort(key=lambda c: -sum(problem.work[t] for t in c))
        left, right, wl, wr = [], [], 0, 0
        for c in comps:
            w = sum(problem.work[t] for t in c)
            if wl <= wr:
                left += c
                wl += w
            else:
                right += c
                wr += w
        new_groups = list(groups) + [(tuple(sorted(right)), reps)]
        new_groups[b] = (tuple(sorted(left)), reps)
        yield "PaD", f"{_names(problem, sorted(left))} || {_names(problem, sorted(right))}", new_groups, stages + [s]
    # BaD / FoD: move the first task back / the last task forward
    where = cand.group_of(problem.n)
    if len(tasks) > 1:
        first, last = tasks[0], tasks[-1]
        for p in sorted({where[x] for x in problem.preds[first]} - {b}):
            new_groups = list(groups)
            new_groups[p] = (groups[p][0] + (first,), groups[p][1])
            new_groups[b] = (tasks[1:], reps)
            yield "BaD", f"{problem.tasks[first]} -> thread of {_names(problem, groups[p][0])}", new_groups, stages
        for q in sorted({where[x] for x in problem.succs[last]} - {b}):
            new_groups = list(groups)
            new_groups[q] = ((last,) + groups[q][0], groups[q][1])
            new_groups[b] = (tasks[:-1], reps)
            yield "FoD", f"{problem.tasks[last]} -> thread of {_names(problem, groups[q][0])}", new_groups, stages
    # Rep: one more replica
    if free >= 1:
        new_groups = list(groups)
        new_groups[b] = (tasks, reps + 1)
        yield "Rep", f"{_names(problem, tasks)} x{reps + 1}", new_groups, stages


def _latency_key(ev: Evaluation) -> tuple:
    """What CCP shifts lower, in order: the latency, the stage latency, the sum of the groups'
    finish times (which falls when one of several critical branches into a join is shortened)."""
    return (ev.latency, ev.stage_latency, sum(ev.finish))


def _throughput_key(ev: Evaluation) -> tuple:
    at_max = sum(1 for t, r in zip(ev.times, ev.replicas) if Fraction(t, r) == ev.period)
    return (ev.period, at_max)


def decompose(
    problem: PipelineProblem, cand: Candidate, trace: list[dict] | None = None, evaluator: Evaluator | None = None
) -> Candidate:
    """Decomposition of the bottleneck (step 4) while it improves the period."""
    bound = problem.latency_max
    ev_of = evaluator or (lambda c: _ev(problem, c))
    while True:
        base = ev_of(cand)
        base_key = _throughput_key(base)
        best = None
        ranking = sorted(range(len(cand.groups)), key=lambda g: -Fraction(base.times[g], base.replicas[g]))
        for b in ranking:
            if Fraction(base.times[b], base.replicas[b]) != base.period:
                break
            for name, detail, new_groups, new_stages in _decompositions(problem, cand, b):
                trial = _build(problem, new_groups, new_stages)
                if trial is None or trial.threads > problem.n_contexts:
                    continue
                ev = ev_of(trial)
                if bound is not None and ev.latency > max(bound, base.latency):
                    continue
                key = _throughput_key(ev)
                if key >= base_key:
                    continue
                rank = (key, ev.threads, ev.stage_latency, name, detail)
                if best is None or rank < best[0]:
                    best = (rank, trial, name, detail)
        if best is None:
            return cand
        _, cand, name, detail = best
        if trace is not None:
            _step(trace, problem, name, detail, ev_of(cand))


# ------------------------------------------------------------------------------ LATA
def schedule(problem: PipelineProblem, trace: list[dict] | None = None) -> Candidate:
    """Steps 1-4 on `problem` (whose edge costs are the scheduling estimate)."""
    cand = by_levels(problem, trace)
    cand = hide(problem, cand, trace)
    cand = shorten(problem, cand, trace)
    cand = decompose(problem, cand, trace)
    return cand


def estimate_profiles(problem: PipelineProblem) -> list[str | int]:
    """Distinct communication estimates: the costliest level, then each sharing level outward
    in."""
    profiles: list[str | int] = ["worst"] + list(range(-1, problem.n_levels - 1))
    out, seen = [], set()
    for p in profiles:
        key = tuple(with_estimate(problem, p).edges)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def mapped_evaluator(problem: PipelineProblem) -> Evaluator:
    """Evaluate an unmapped schedule exactly after LATA's mapping (pre-mapping + real mapping)."""

    def evaluate_mapped(cand: Candidate) -> Evaluation:
        return evaluate(problem, lata_map(problem, cand))

    return evaluate_mapped


def lata(
    problem: PipelineProblem, *, profiles: list[str | int] | None = None, refine: bool | None = None
) -> MethodResult:
    """LATA on `problem`: the best mapped schedule over the communication estimates.

    Two orders are tried for each estimate (`refine` None; True or False keeps one):

    * the paper's: steps 1-4 with the estimate, then the mapping;
    * refined (our addition): steps 1-3 with the estimate, then the mapping's actual costs take
      over -- CCP shifts while the mapped latency exceeds the bound, then the decompositions of
      step 4 while the mapped period falls, every trial re-mapped and evaluated exactly (a
      mapping costs milliseconds) -- so replication never spreads a thread where its messages
      would break the bound.

    The best plan by exact evaluation (meets the bound, then throughput, latency, threads) is
    returned, with the trace of the run that produced it."""
    t0 = time.perf_counter()
    best = None
    exact = mapped_evaluator(problem)
    orders = [False, True] if refine is None else [bool(refine)]
    for profile in profiles or estimate_profiles(problem):
        estimate = with_estimate(problem, profile)
        for refined in orders:
            trace: list[dict] = []
            if refined:
                cand = shorten(estimate, hide(estimate, by_levels(estimate, trace), trace), trace)
                _step(
                    trace, problem, "refine", "from here on, every trial is mapped and evaluated exactly", exact(cand)
                )
                cand = shorten(problem, cand, trace, exact)
                cand = decompose(problem, cand, trace, exact)
            else:
                cand = schedule(estimate, trace)
            mapped = lata_map(problem, cand)
            ev = evaluate(problem, mapped)
            trace.append(
                {
                    "step": "map",
                    "detail": "pre-mapping by bipartition, cache-aware real mapping",
                    "period": ev.period_cycles,
                    "stage_latency": problem.cycles(ev.stage_latency),
                    "latency": ev.latency_cycles,
                    "threads": ev.threads,
                }
            )
            if best is None or ev.rank() < best[0].rank():
                best = (ev, mapped, trace, profile, refined)
    ev, mapped, trace, profile, refined = best
    level = profile if profile == "worst" else ("machine" if profile == -1 else problem.level_names[profile])
    return MethodResult(
        method="lata",
        candidate=mapped,
        evaluation=ev,
        status="HEURISTIC",
        claims_feasible=ev.feasible,
        seconds=time.perf_counter() - t0,
        notes=[
            f"scheduled with communication estimated at the {level} level"
            + (", refined with the mapping's costs" if refined else ", mapped once")
        ],
        trace=trace,
    )
