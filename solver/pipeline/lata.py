"""LATA: latency- and throughput-aware parallel pipelining (Kuang & Bhuyan, "LATA: a latency and
throughput-aware packet processing system", DAC 2010), step by step in the order of the paper.

The schedule is built on *virtual* nodes (one processor each) before anything is mapped, so every
crossing edge is charged the **location-independent estimate of Eq. 1-2** (§2.2:
`Topology.average_message_cycles`, carried by `PipelineEdge.estimate`): `with_estimate(problem,
"eq2")`.  A task's work is its cycles times its frequency (§2.4, `Task.work`).  A node's code must
fit the instruction cache (§4, `Topology.icache`, `Task.code_size`): no step builds a node that
does not.

LATA's own figures (§2.3, Fig. 2-4), computed by `figures`:

* the **schedule length** ``L = sum over stages of the largest computation time of a node of the
  stage + sum over adjacent stages of CCP_i``, where ``CCP_i = max c_{a,b}`` over nodes ``a`` in
  stage ``i`` and ``b`` in stage ``i+1`` (§3.1), ``c_{a,b}`` the estimated cost of the edges from
  ``a`` to ``b`` (`Figures.schedule_length`);
* ``T_max`` = the largest node time over its replicas; a node's time is its computation plus its
  incoming messages (the paper does not say whether a stage time holds its communication; the
  closed form of `solver.pipeline.problem` charges it to the consumer, so we do too).

The steps reduce and bound ``max(L, the closed form's longest path under the estimate)``
(`Figures.length`; our addition): the paper's ``L`` charges a join only its largest incoming
message and ignores edges that skip a stage, which the closed form -- and the simulation -- pay.

Steps (each function's docstring cites its section):

1. `by_levels` -- list-based pipeline scheduling (§3.1);
2. `hide` -- latency hiding, BaH / FoH (§3.2.1, computation reduction);
3. `shorten` -- CCP elimination and CCP reduction (BaS / FoS) ranked by ``Q = dL / dTh`` while
   ``L > L0`` (§3.2.1, communication reduction);
4. `decompose` -- SeD / PaD / BaD / FoD on the ``T_max`` node while it lowers ``T_max`` and
   ``L <= L0`` (§3.2.2);
5. pre-mapping onto ``C`` virtual processors (§3.3.1, `solver.pipeline.lata_premap`), then the
   cache-aware real mapping (§3.3.2, `solver.pipeline.mapping.lata_map`).

Our additions, stated: (a) the plan is judged by the exact closed form after mapping
(`evaluate`), where a pair on two sockets pays memory where Eq. 2 charged an average, so LATA is
run with several internal bounds -- ``L0``, then the shares 95%, 90%, ... 50% of the sequential
time below it (`internal_bounds`), and ``L0`` lowered by the mapped plan's overshoot (at most
`TIGHTEN` times) -- with the Eq. 2 estimate and with the costliest level (``"worst"``), and the
schedule whose every CCP is eliminated (one node, replicated on every processor by pre-mapping)
when its code fits; the best plan by exact evaluation is kept and its note says which run
produced it.  `lata(..., profiles=["eq2"], tighten=0)` is the paper's run alone.  (b) When no
run meets ``L0``, the lowest-latency plan loses replicas until it does (`unreplicate`).  (c)
Decomposition keeps at most ``C`` nodes (the paper's "spare nodes" are the processors the
latency reduction left free).  (d) The steps bound ``Figures.length`` rather than ``L`` (above).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction

from tasksolve.solver.pipeline.candidates import Candidate, Group, group_preds, normalize_stages
from tasksolve.solver.pipeline.evaluation import MethodResult, evaluate, first_contexts, sequential_candidate
from tasksolve.solver.pipeline.mapping import lata_map
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem

TIGHTEN = 6  # re-runs with a lowered internal bound when the mapped plan misses L0 (our addition)


# ------------------------------------------------------------------------------ estimates
def with_estimate(problem: PipelineProblem, profile: str | int) -> PipelineProblem:
    """The problem with every edge costing the same wherever its ends run: the Eq. 2 estimate
    (``"eq2"``, the paper's), the costliest level (``"worst"``) or the cost at sharing level
    `profile` (an int)."""
    edges = []
    for e in problem.edges:
        if profile == "eq2":
            c = e.estimate
        elif profile == "worst":
            c = e.worst
        else:
            c = e.at(int(profile))
        edges.append(replace(e, cost=(c,) * len(e.cost), estimate=c))
    return replace(problem, edges=tuple(edges))


def estimate_profiles(problem: PipelineProblem) -> list[str | int]:
    """Distinct communication estimates: Eq. 2, the costliest level, then each sharing level."""
    out, seen = [], set()
    for p in ["eq2", "worst"] + list(range(-1, problem.n_levels - 1)):
        key = tuple(e.cost for e in with_estimate(problem, p).edges)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def fits(problem: PipelineProblem, tasks) -> bool:
    """The tasks' code fits one context's instruction cache (§4; always without `icache`)."""
    return problem.icache is None or sum(problem.code[t] for t in tasks) <= problem.icache


# ------------------------------------------------------------------------------ figures
@dataclass(frozen=True)
class Figures:
    """LATA's figures of a schedule (ticks; module docstring)."""

    length: int  # what the steps reduce and bound: the larger of `schedule_length` and `latency`
    schedule_length: int  # the paper's L: stage computation maxima plus CCPs
    tmax: Fraction  # largest node time over its replicas
    at_tmax: int  # nodes at T_max (a tie-break: decomposition progresses when it falls)
    ccp: tuple[tuple[int, int, int, int], ...]  # (weight, stage i, node in i, node in i+1), heaviest first
    work: tuple[int, ...]  # per node: computation
    times: tuple[int, ...]  # per node: computation + incoming messages
    latency: int  # the closed form's longest path with the estimate (for the trace)

    @property
    def ccp_total(self) -> int:
        """The sum over adjacent stages of their CCP."""
        return _ccp_sum(self.ccp)


def _ccp_sum(ccp) -> int:
    best: dict[int, int] = {}
    for w, s, _, _ in ccp:
        best[s] = max(best.get(s, 0), w)
    return sum(best.values())


def figures(problem: PipelineProblem, cand: Candidate) -> Figures:
    """``L`` and ``T_max`` of `cand` under `problem`'s (estimated) edge costs (§2.3, §3.1)."""
    ev = evaluate(problem, cand, pessimistic=True)
    stages = ev.stages
    top: dict[int, int] = {}
    for g, s in enumerate(stages):
        top[s] = max(top.get(s, 0), ev.work[g])
    where = cand.group_of(problem.n)
    pair: dict[tuple[int, int], int] = {}
    for e in problem.edges:
        a, b = where[e.source], where[e.target]
        if a != b and stages[b] == stages[a] + 1:
            pair[(a, b)] = pair.get((a, b), 0) + e.worst
    ccp = sorted(((w, stages[a], a, b) for (a, b), w in pair.items()), key=lambda x: (-x[0], x[1], x[2], x[3]))
    periods = [Fraction(t, r) for t, r in zip(ev.times, ev.replicas)]
    tmax = max(periods)
    paper = sum(top.values()) + _ccp_sum(ccp)
    return Figures(
        length=max(paper, ev.latency),
        schedule_length=paper,
        tmax=tmax,
        at_tmax=sum(1 for p in periods if p == tmax),
        ccp=tuple(ccp),
        work=ev.work,
        times=ev.times,
        latency=ev.latency,
    )


# ------------------------------------------------------------------------------ helpers
def build(problem: PipelineProblem, groups: list[tuple[tuple[int, ...], int]], stages: list[int]) -> Candidate | None:
    """Candidate from (tasks, replicas) and stage labels (empty groups dropped), labels made valid;
    None when the groups form a cycle or a node's code does not fit the i-cache."""
    keep = [i for i, (tasks, _) in enumerate(groups) if tasks]
    if not all(fits(problem, groups[i][0]) for i in keep):
        return None
    cand = Candidate(
        tuple(Group(tuple(sorted(groups[i][0])), groups[i][1]) for i in keep), tuple(stages[i] for i in keep)
    )
    return normalize_stages(problem, cand)


def _parts(cand: Candidate) -> tuple[list[tuple[tuple[int, ...], int]], list[int]]:
    return [(g.tasks, g.replicas) for g in cand.groups], list(cand.stages)


def task_names(problem: PipelineProblem, tasks) -> str:
    return "+".join(problem.tasks[t] for t in tasks)


def trace_step(trace: list[dict] | None, problem: PipelineProblem, name: str, detail: str, f: Figures, threads: int):
    if trace is not None:
        trace.append(
            {
                "step": name,
                "detail": detail,
                "period": problem.cycles(f.tmax),
                "stage_latency": problem.cycles(f.schedule_length),
                "latency": problem.cycles(f.latency),
                "threads": threads,
            }
        )


def _succs(cand: Candidate, preds: list[set[int]]) -> list[set[int]]:
    out: list[set[int]] = [set() for _ in cand.groups]
    for g, ps in enumerate(preds):
        for p in ps:
            out[p].add(g)
    return out


# ------------------------------------------------------------------------------ step 1
def by_levels(problem: PipelineProblem, trace: list[dict] | None = None) -> Candidate:
    """List-based pipeline scheduling (§3.1): priority = computation top level with unit times
    (the level of a task is one more than its highest predecessor's); the nodes of one level form
    one stage, each node (task) on its own processor.  The number of nodes is not bounded here:
    pre-mapping fits them to the processors (§3.3.1).  A task whose code alone exceeds the
    i-cache makes the problem infeasible."""
    for t in range(problem.n):
        if not fits(problem, (t,)):
            raise PipelineError(
                f"task `{problem.tasks[t]}` has {problem.code[t]} instructions: more than the "
                f"{problem.icache}-instruction i-cache (topology.icache)"
            )
    cand = Candidate(tuple(Group((t,)) for t in range(problem.n)), problem.levels)
    cand = normalize_stages(problem, cand)
    assert cand is not None
    trace_step(
        trace,
        problem,
        "levels",
        f"{problem.n} tasks on {max(cand.stages) + 1} stages by level",
        figures(problem, cand),
        cand.threads,
    )
    return cand


# ------------------------------------------------------------------------------ step 2
def hiding_moves(problem: PipelineProblem, cand: Candidate) -> Iterator[tuple[str, int, Candidate]]:
    """Latency hiding (§3.2.1): every *critical node* (one whose computation time is its stage's
    largest) placed into its precedent stage (BaH) or following stage (FoH) when its
    dependencies allow; yields (name, node, candidate)."""
    f = figures(problem, cand)
    preds = group_preds(problem, cand)
    succs = _succs(cand, preds)
    top: dict[int, int] = {}
    for g, s in enumerate(cand.stages):
        top[s] = max(top.get(s, 0), f.work[g])
    last = max(cand.stages)
    for g, s in enumerate(cand.stages):
        if f.work[g] < top[s]:
            continue
        for name, target in (("BaH", s - 1), ("FoH", s + 1)):
            if not 0 <= target <= last:
                continue
            if name == "BaH" and any(cand.stages[p] >= target for p in preds[g]):
                continue
            if name == "FoH" and any(cand.stages[x] <= target for x in succs[g]):
                continue
            stages = list(cand.stages)
            stages[g] = target
            trial = normalize_stages(problem, Candidate(cand.groups, tuple(stages)))
            if trial is not None:
                yield name, g, trial


def hide(problem: PipelineProblem, cand: Candidate, trace: list[dict] | None = None) -> Candidate:
    """Latency hiding (§3.2.1), repeated while it shortens ``L``: among the BaH / FoH moves of the
    critical nodes, the one with the largest latency reduction; ties favour BaH ("increases the
    chances of more potential latency reduction in future iterations"), then the earlier node."""
    while True:
        base = figures(problem, cand).length
        best = None
        for name, g, trial in hiding_moves(problem, cand):
            gain = base - figures(problem, trial).length
            if gain > 0:
                key = (-gain, 0 if name == "BaH" else 1, g)
                if best is None or key < best[0]:
                    best = (key, name, g, trial)
        if best is None:
            return cand
        _, name, g, cand = best
        detail = f"{task_names(problem, cand.groups[g].tasks)} hidden in stage {cand.stages[g]}"
        trace_step(trace, problem, name, detail, figures(problem, cand), cand.threads)


# ------------------------------------------------------------------------------ step 3
def eliminate(problem: PipelineProblem, cand: Candidate, stage: int) -> Candidate | None:
    """CCP elimination (§3.2.1, Fig. 4): stages `stage` and `stage + 1` become one -- possible when
    every node of `stage + 1` has at most one predecessor node in `stage`; such a node is attached
    after it (one processor), a node without one joins `stage` in parallel."""
    preds = group_preds(problem, cand)
    groups, stages = _parts(cand)
    for b, s in enumerate(cand.stages):
        if s != stage + 1:
            continue
        inside = [p for p in preds[b] if cand.stages[p] == stage]
        if len(inside) > 1:
            return None
        if inside:
            a = inside[0]
            groups[a] = (groups[a][0] + groups[b][0], max(groups[a][1], groups[b][1]))
            groups[b] = ((), 1)
        else:
            stages[b] = stage
    stages = [x - 1 if x > stage else x for x in stages]
    return build(problem, groups, stages)


def ccp_edge(problem: PipelineProblem, cand: Candidate, a: int, b: int):
    """The heaviest edge from node `a` to node `b` (ties: the first)."""
    where = cand.group_of(problem.n)
    edges = [e for e in problem.edges if where[e.source] == a and where[e.target] == b]
    return max(edges, key=lambda e: (e.worst, -e.source, -e.target))


def switch(problem: PipelineProblem, cand: Candidate, a: int, b: int, backward: bool) -> Candidate | None:
    """CCP reduction (§3.2.1, Fig. 5), on the tasks at the two ends of the heaviest edge from node
    `a` to node `b` ("both BaS and FoS are tested on the task in the two nodes"): BaS switches the
    consumer task backward onto `a`'s processor (Fig. 5(b): E to B), FoS the producer task forward
    onto `b`'s (Fig. 5(c): B to E).  With single-task nodes this moves the whole node."""
    e = ccp_edge(problem, cand, a, b)
    groups, stages = _parts(cand)
    task, src, dst = (e.target, b, a) if backward else (e.source, a, b)
    groups[src] = (tuple(t for t in groups[src][0] if t != task), groups[src][1])
    groups[dst] = (groups[dst][0] + (task,), groups[dst][1])
    return build(problem, groups, stages)


def _q(base: Figures, after: Figures) -> Fraction | None:
    """The beneficial ratio ``Q = dL / dTh`` (§3.2.1); None when the throughput does not fall
    (an infinite ratio)."""
    loss = Fraction(1) / base.tmax - Fraction(1) / after.tmax
    return None if loss <= 0 else Fraction(base.length - after.length) / loss


def _ccp_action(problem: PipelineProblem, cand: Candidate, base: Figures, ccp) -> tuple | None:
    """Elimination or reduction of one CCP: reduction is the BaS / FoS with a latency gain and the
    larger CCP reduction (ties: BaS); the one of the two with the larger Q is taken (ties:
    elimination, which removes the CCP)."""
    _, stage, a, b = ccp
    options = []
    elim = eliminate(problem, cand, stage)
    if elim is not None:
        f = figures(problem, elim)
        if f.length < base.length:
            options.append(("elimination", "CCP", elim, f, f"stages {stage} and {stage + 1} combined"))
    reductions = []
    for backward in (True, False):
        trial = switch(problem, cand, a, b, backward)
        if trial is None:
            continue
        f = figures(problem, trial)
        if f.length < base.length:
            name = "BaS" if backward else "FoS"
            e = ccp_edge(problem, cand, a, b)
            task, onto = (e.target, a) if backward else (e.source, b)
            detail = f"{problem.tasks[task]} -> processor of {task_names(problem, cand.groups[onto].tasks)}"
            reductions.append(((-(base.ccp_total - f.ccp_total), 0 if backward else 1), name, trial, f, detail))
    if reductions:
        _, name, trial, f, detail = min(reductions, key=lambda r: r[0])
        options.append(("reduction", name, trial, f, detail))
    best = None
    for rank, (kind, name, trial, f, detail) in enumerate(options):
        q = _q(base, f)
        key = (0 if q is None else 1, -(q or 0), rank)
        if best is None or key < best[0]:
            best = (key, kind, name, trial, f, detail, q)
    return None if best is None else best[1:]


def shorten(problem: PipelineProblem, cand: Candidate, trace: list[dict] | None = None) -> Candidate:
    """Communication reduction (§3.2.1) while ``L > L0``: the biggest CCP first; its elimination
    and its reduction are tested and the one with the larger ``Q = dL / dTh`` is applied; when
    neither shortens ``L``, the next biggest CCP.  Stops when ``L <= L0`` or no CCP can be
    shortened.  Every action lowers ``L``, so the loop ends."""
    bound = problem.latency_max
    if bound is None:
        return cand
    while True:
        base = figures(problem, cand)
        if base.length <= bound:
            return cand
        action = None
        for ccp in base.ccp:
            if ccp[0] > 0:
                action = _ccp_action(problem, cand, base, ccp)
                if action is not None:
                    break
        if action is None:
            return cand
        kind, name, cand, f, detail, q = action
        qtext = "inf" if q is None else f"{float(q):.3g}"
        trace_step(trace, problem, name, f"CCP {kind}: {detail} (Q = {qtext})", f, cand.threads)


# ------------------------------------------------------------------------------ step 4
def decompositions(problem: PipelineProblem, cand: Candidate, b: int) -> Iterator[tuple[str, str, Candidate]]:
    """The four decompositions of node `b` (§3.2.2, Fig. 6), at each of its tasks: SeD (split in
    two adjacent stages, a new stage after its own), PaD (the task and the rest as two parallel
    nodes of its stage, when independent), BaD (the task, with no predecessor in the node, alone
    in the precedent stage), FoD (the task, with no successor in the node, alone in the following
    stage)."""
    groups, stages = _parts(cand)
    tasks, reps = groups[b]
    s = stages[b]
    last = max(stages)
    where = cand.group_of(problem.n)
    inside = set(tasks)
    for i, t in enumerate(tasks):
        rest = tuple(x for x in tasks if x != t)
        if i > 0:
            new_groups = groups + [(tasks[i:], reps)]
            new_groups[b] = (tasks[:i], reps)
            new_stages = [x + 1 if x > s else x for x in stages] + [s + 1]
            yield (
                "SeD",
                f"{task_names(problem, tasks[:i])} | {task_names(problem, tasks[i:])}",
                build(problem, new_groups, new_stages),
            )
        tied_in = any(p in inside for p in problem.preds[t])
        tied_out = any(x in inside for x in problem.succs[t])
        if not tied_in and not tied_out:
            new_groups = groups + [((t,), reps)]
            new_groups[b] = (rest, reps)
            yield "PaD", f"{problem.tasks[t]} || {task_names(problem, rest)}", build(problem, new_groups, stages + [s])
        if not tied_in and s > 0 and all(stages[where[p]] < s - 1 for p in problem.preds[t]):
            new_groups = groups + [((t,), reps)]
            new_groups[b] = (rest, reps)
            yield "BaD", f"{problem.tasks[t]} -> stage {s - 1}", build(problem, new_groups, stages + [s - 1])
        if not tied_out and s < last and all(stages[where[x]] > s + 1 for x in problem.succs[t]):
            new_groups = groups + [((t,), reps)]
            new_groups[b] = (rest, reps)
            yield "FoD", f"{problem.tasks[t]} -> stage {s + 1}", build(problem, new_groups, stages + [s + 1])


def decompose(problem: PipelineProblem, cand: Candidate, trace: list[dict] | None = None) -> Candidate:
    """Throughput improvement by decomposition (§3.2.2): the node with ``T_max``, when it holds
    more than one task, is decomposed at the point (task and technique) that lowers ``T_max``
    most (ties: fewer nodes at ``T_max``, then the order SeD, PaD, BaD, FoD), among those that
    keep ``L <= L0`` (our reading of "if the latency constraint is not violated, we take that
    action": the best admissible one) and at most ``C`` nodes (the paper's spare nodes; our
    bound).  Repeated until ``T_max`` stops falling."""
    bound = problem.latency_max
    order = {"SeD": 0, "PaD": 1, "BaD": 2, "FoD": 3}
    while True:
        base = figures(problem, cand)
        b = max(range(len(cand.groups)), key=lambda g: (Fraction(base.times[g], cand.groups[g].replicas), -g))
        if len(cand.groups[b].tasks) < 2:
            return cand
        best = None
        for name, detail, trial in decompositions(problem, cand, b):
            if trial is None or len(trial.groups) > problem.n_contexts:
                continue
            f = figures(problem, trial)
            if (f.tmax, f.at_tmax) >= (base.tmax, base.at_tmax):
                continue
            if bound is not None and f.length > max(bound, base.length):
                continue
            key = (f.tmax, f.at_tmax, order[name], detail)
            if best is None or key < best[0]:
                best = (key, name, detail, trial, f)
        if best is None:
            return cand
        _, name, detail, cand, f = best
        trace_step(trace, problem, name, detail, f, cand.threads)


# ------------------------------------------------------------------------------ LATA
def schedule(problem: PipelineProblem, trace: list[dict] | None = None) -> Candidate:
    """Steps 1-4 (§3.1-3.2) on `problem`, whose edge costs are the scheduling estimate."""
    cand = by_levels(problem, trace)
    cand = hide(problem, cand, trace)
    cand = shorten(problem, cand, trace)
    return decompose(problem, cand, trace)


def run_once(problem: PipelineProblem, profile: str | int, bound: int | None, trace: list[dict]) -> Candidate:
    """One LATA run: schedule with the `profile` estimate and internal bound `bound`, pre-map onto
    the contexts (§3.3.1), map (§3.3.2)."""
    from tasksolve.solver.pipeline.lata_premap import premap_nodes

    estimate = with_estimate(problem, profile).with_bound(bound)
    cand = premap_nodes(estimate, schedule(estimate, trace), trace)
    return lata_map(problem, cand)


def internal_bounds(problem: PipelineProblem) -> list[int | None]:
    """The internal bounds LATA is run with (our addition, module docstring): ``L0`` itself, then
    the shares 95%, 90%, ..., 50% of the sequential time below it (a grid that does not depend
    on ``L0``, so a looser ``L0`` never loses a run of a tighter one), down to the critical path."""
    bound = problem.latency_max
    if bound is None:
        return [None]
    grid = [problem.sequential * k // 20 for k in range(20, 9, -1)]
    return [bound] + [b for b in grid if problem.critical_path <= b < bound]


def _mapped_step(trace: list[dict], problem: PipelineProblem, step: str, detail: str, ev) -> None:
    trace.append(
        {
            "step": step,
            "detail": detail,
            "period": ev.period_cycles,
            "stage_latency": problem.cycles(ev.stage_latency),
            "latency": ev.latency_cycles,
            "threads": ev.threads,
        }
    )


def _mapped_run(problem: PipelineProblem, profile, bound, attempt):
    trace: list[dict] = []
    if profile == "one":
        mapped = first_contexts(problem, sequential_candidate(problem, problem.n_contexts))
        detail = "every CCP eliminated: one node replicated on every processor"
    else:
        mapped = run_once(problem, profile, bound, trace)
        detail = "pre-mapping onto the contexts, cache-aware real mapping"
    ev = evaluate(problem, mapped)
    _mapped_step(trace, problem, "map", detail, ev)
    return ev, mapped, trace, profile, attempt, bound


def unreplicate(problem: PipelineProblem, run):
    """Our addition: a mapped plan that misses ``L0`` loses replicas one at a time -- each time
    the one whose removal gives the lowest exact latency (then period) -- until it meets the
    bound or none is left: replicas spread a node over outer domains, whose messages then pay the
    outer level (the closed form charges a replicated node its worst pair)."""
    ev, mapped, trace, profile, attempt, bound = run
    cand, trace = mapped.unmapped(), list(trace)
    while not ev.feasible:
        best = None
        for g, group in enumerate(cand.groups):
            if group.replicas > 1:
                groups = tuple(Group(x.tasks, x.replicas - (i == g)) for i, x in enumerate(cand.groups))
                trial = lata_map(problem, Candidate(groups, cand.stages))
                e = evaluate(problem, trial)
                if best is None or (e.latency, e.period, g) < best[0]:
                    best = ((e.latency, e.period, g), trial, e, g)
        if best is None:
            break
        _, mapped, ev, g = best
        cand = mapped.unmapped()
        _mapped_step(
            trace, problem, "unreplicate", f"{task_names(problem, cand.groups[g].tasks)} x{cand.groups[g].replicas}", ev
        )
    return ev, mapped, trace, profile, attempt, bound


def lata(problem: PipelineProblem, *, profiles: list[str | int] | None = None, tighten: int = TIGHTEN) -> MethodResult:
    """LATA on `problem` (module docstring): for each estimate of `profiles` (default Eq. 2, then
    the costliest level) and each internal bound of `internal_bounds` (unless `tighten` is 0:
    then ``L0`` only), a run; the run with ``L0`` is re-run up to `tighten` times with the
    internal bound lowered by the mapped plan's overshoot; and the schedule whose every CCP is
    eliminated (one node, replicated on every processor by pre-mapping, §3.3.2); when none meets
    ``L0``, the one of lowest latency loses replicas (`unreplicate`).  The best plan
    by exact evaluation (meets the bound, then throughput, latency, threads) is returned with the
    trace of its run."""
    t0 = time.perf_counter()
    runs = []
    for profile in profiles or ["eq2", "worst"]:
        bounds = internal_bounds(problem) if tighten else [problem.latency_max]
        for k, bound in enumerate(bounds):
            run = _mapped_run(problem, profile, bound, 0)
            runs.append(run)
            for attempt in range(1, tighten + 1 if k == 0 else 0):
                ev = run[0]
                if ev.feasible or bound is None:
                    break
                bound -= ev.latency - problem.latency_max
                if bound < problem.critical_path:
                    break
                run = _mapped_run(problem, profile, bound, attempt)
                runs.append(run)
    if tighten and fits(problem, range(problem.n)):
        runs.append(_mapped_run(problem, "one", None, 0))
    if tighten and not any(r[0].feasible for r in runs):
        runs.append(unreplicate(problem, min(runs, key=lambda r: (r[0].latency, r[0].period))))
    ev, mapped, trace, profile, attempt, bound = min(runs, key=lambda r: r[0].rank())
    label = {"eq2": "Eq. 2", "worst": "the costliest level", "one": "none"}.get(profile, f"level {profile}")
    note = f"scheduled with communication estimated by {label}"
    if bound is not None and bound != problem.latency_max:
        note += f", internal bound {problem.cycles(bound):.6g} cycles"
    if any(step["step"] == "unreplicate" for step in trace):
        note += ", replicas removed to meet L0"
    return MethodResult(
        method="lata",
        candidate=mapped,
        evaluation=ev,
        status="HEURISTIC",
        claims_feasible=ev.feasible,
        seconds=time.perf_counter() - t0,
        notes=[note],
        trace=trace,
    )
