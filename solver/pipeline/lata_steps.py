"""LATA's scheduling steps 1-4 (Kuang & Bhuyan, DAC'10 §3.1-3.2), in the paper's order, on the
figures of `solver.pipeline.lata_figures`; `schedule` runs them all.

1. `by_levels` -- list-based pipeline scheduling (§3.1);
2. `hide` -- latency hiding, BaH / FoH (§3.2.1, computation reduction);
3. `shorten` -- CCP elimination and CCP reduction (BaS / FoS) ranked by ``Q = dL / dTh`` while
   ``L > L0`` (§3.2.1, communication reduction);
4. `decompose` -- SeD / PaD / BaD / FoD on the ``T_max`` node while it lowers ``T_max`` and
   ``L <= L0`` (§3.2.2).

Each step reduces and bounds `Figures.length` (the larger of the paper's ``L`` and the closed
form's longest path under the estimate; our addition, see `solver.pipeline.lata`).
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from tasksolve.solver.pipeline.candidates import Candidate, Group, fixed_count, group_preds, normalize_stages
from tasksolve.solver.pipeline.lata_figures import (
    Figures,
    build,
    figures,
    fits,
    parts,
    successors,
    task_names,
    trace_step,
)
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem


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
    cand = Candidate(tuple(Group((t,), fixed_count(problem, (t,)) or 1) for t in range(problem.n)), problem.levels)
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
    succs = successors(cand, preds)
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
    groups, stages = parts(cand)
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
    groups, stages = parts(cand)
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
    groups, stages = parts(cand)
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


def schedule(problem: PipelineProblem, trace: list[dict] | None = None) -> Candidate:
    """Steps 1-4 (§3.1-3.2) on `problem`, whose edge costs are the scheduling estimate."""
    cand = by_levels(problem, trace)
    cand = hide(problem, cand, trace)
    cand = shorten(problem, cand, trace)
    return decompose(problem, cand, trace)
