"""Pipeline candidates: groups of tasks with replicas and contexts, their validity, group graph
and stages (the model of `solver.pipeline.problem`).

**Fixed replicas.**  A pipeline spec's ``replicas: N`` (N >= 2) on a task fixes the replica count
of the group (stage) that runs the task to exactly N (`PipelineProblem.fixed_replicas`; a user's
program with a fixed worker pool): a group holding it has N replicas, two tasks fixing different
counts never share a group, and the other groups' counts stay the methods' choice.  Every method
keeps them -- `check_candidate` reports a plan that breaks them (`fixed_violations`),
`respect_fixed` adjusts a heuristic's plan to them, and a method that cannot raises `NoPlan`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem
from tasksolve.specs.graphs import CycleError, topological_order


@dataclass(frozen=True)
class Group:
    """Tasks (indices, in the order the thread runs them) and the replicas that run them;
    `contexts` (one per replica) once mapped."""

    tasks: tuple[int, ...]
    replicas: int = 1
    contexts: tuple[int, ...] | None = None

    @property
    def threads(self) -> int:
        return self.replicas


@dataclass(frozen=True)
class Candidate:
    """A parallel pipeline: groups, optional stage labels (one per group), optional mapping."""

    groups: tuple[Group, ...]
    stages: tuple[int, ...] | None = None

    @property
    def mapped(self) -> bool:
        return all(g.contexts is not None for g in self.groups)

    @property
    def threads(self) -> int:
        return sum(g.replicas for g in self.groups)

    def unmapped(self) -> Candidate:
        return Candidate(tuple(Group(g.tasks, g.replicas) for g in self.groups), self.stages)

    def with_contexts(self, contexts: Sequence[Sequence[int]]) -> Candidate:
        return Candidate(
            tuple(Group(g.tasks, g.replicas, tuple(int(c) for c in cs)) for g, cs in zip(self.groups, contexts)),
            self.stages,
        )

    def group_of(self, n: int) -> list[int]:
        where = [-1] * n
        for gi, g in enumerate(self.groups):
            for t in g.tasks:
                where[t] = gi
        return where

    def key(self) -> tuple:
        """Identity up to group order and stage labels (for deduplication)."""
        return tuple(sorted((g.tasks, g.replicas, g.contexts or ()) for g in self.groups))


def check_candidate(problem: PipelineProblem, cand: Candidate) -> list[str]:
    """Everything that makes `cand` invalid: tasks missing or repeated, an order inside a group
    against an edge, a cycle between groups (a task's predecessors must be in earlier stages or
    earlier in its own thread), stage labels against the group graph, replicas < 1 or other than
    a fixed count (`fixed_violations`), contexts repeated, unusable, miscounted or over
    `max_threads`, more threads than contexts."""
    out: list[str] = []
    seen: dict[int, int] = {}
    for gi, g in enumerate(cand.groups):
        if not g.tasks:
            out.append(f"group {gi} is empty")
        if g.replicas < 1:
            out.append(f"group {gi} has {g.replicas} replicas")
        for t in g.tasks:
            if not 0 <= t < problem.n:
                out.append(f"group {gi} names task index {t}")
                continue
            if t in seen:
                out.append(f"task `{problem.tasks[t]}` is in groups {seen[t]} and {gi}")
            seen[t] = gi
        position = {t: i for i, t in enumerate(g.tasks)}
        for t in g.tasks:
            for p in problem.preds[t] if 0 <= t < problem.n else ():
                if p in position and position[p] > position[t]:
                    out.append(f"group {gi} runs `{problem.tasks[t]}` before its predecessor `{problem.tasks[p]}`")
    missing = [problem.tasks[t] for t in range(problem.n) if t not in seen]
    if missing:
        out.append(f"tasks in no group: {', '.join(missing)}")
    if out:
        return out
    out += fixed_violations(problem, cand)
    order = group_order(problem, cand)
    if order is None:
        out.append("the groups depend on each other in a cycle")
        return out
    if cand.stages is not None:
        if len(cand.stages) != len(cand.groups):
            out.append(f"{len(cand.stages)} stage labels for {len(cand.groups)} groups")
        else:
            for gi, preds in enumerate(group_preds(problem, cand)):
                for p in preds:
                    if cand.stages[p] >= cand.stages[gi]:
                        out.append(
                            f"group {gi} (stage {cand.stages[gi]}) depends on group {p} "
                            f"(stage {cand.stages[p]}), not in an earlier stage"
                        )
    if cand.threads > problem.n_contexts:
        out.append(f"{cand.threads} threads for {problem.n_contexts} usable contexts")
    if cand.mapped:
        usable = set(problem.contexts)
        used: list[int] = []
        for gi, g in enumerate(cand.groups):
            assert g.contexts is not None
            if len(g.contexts) != g.replicas:
                out.append(f"group {gi}: {len(g.contexts)} contexts for {g.replicas} replicas")
            for c in g.contexts:
                if c not in usable:
                    out.append(f"group {gi}: context {c} is not usable")
            used.extend(g.contexts)
        if len(set(used)) != len(used):
            out.append("a context runs two threads")
        for level, cap in problem.max_threads:
            counts: dict[int, int] = {}
            for c in used:
                d = 0 if level < 0 else c // problem.strides[level]
                counts[d] = counts.get(d, 0) + 1
            if counts and max(counts.values()) > cap:
                out.append(f"more than {cap} threads in one domain of level {level}")
    return out


def group_preds(problem: PipelineProblem, cand: Candidate) -> list[set[int]]:
    where = cand.group_of(problem.n)
    preds: list[set[int]] = [set() for _ in cand.groups]
    for e in problem.edges:
        a, b = where[e.source], where[e.target]
        if a != b:
            preds[b].add(a)
    return preds


def group_order(problem: PipelineProblem, cand: Candidate) -> list[int] | None:
    """A topological order of the group graph (ties by index), or None on a cycle."""
    preds = group_preds(problem, cand)
    try:
        return topological_order(range(len(cand.groups)), preds.__getitem__)
    except CycleError:
        return None


def depth_stages(problem: PipelineProblem, cand: Candidate) -> tuple[int, ...]:
    """Stage of each group = its depth in the group graph (0 for the entry group)."""
    order = group_order(problem, cand)
    if order is None:
        raise PipelineError("the groups depend on each other in a cycle")
    preds = group_preds(problem, cand)
    depth = [0] * len(cand.groups)
    for g in order:
        depth[g] = max((depth[p] + 1 for p in preds[g]), default=0)
    return tuple(depth)


def normalize_stages(problem: PipelineProblem, cand: Candidate) -> Candidate | None:
    """Stage labels made valid and dense: each group goes to ``max(its label, 1 + the stage of
    its latest predecessor group)``, then empty stages are removed.  None when the groups form a
    cycle.  Labels absent: depth stages."""
    order = group_order(problem, cand)
    if order is None:
        return None
    preds = group_preds(problem, cand)
    labels = list(cand.stages) if cand.stages is not None else [0] * len(cand.groups)
    stage = [0] * len(cand.groups)
    for g in order:
        stage[g] = max([labels[g]] + [stage[p] + 1 for p in preds[g]])
    dense = {s: i for i, s in enumerate(sorted(set(stage)))}
    return Candidate(cand.groups, tuple(dense[s] for s in stage))


# ------------------------------------------------------------------------------ fixed replicas
class NoPlan(PipelineError):
    """A method has no plan that keeps the replica counts the spec fixes (module docstring)."""


def fixed_count(problem: PipelineProblem, tasks) -> int | None:
    """The replica count the spec fixes for a group of `tasks`: N when one of them fixes N, 0
    when none fixes one, None when two fix different counts (they may not share a group)."""
    if not problem.fixed_replicas:
        return 0
    counts = {problem.fixed_replicas[t] for t in tasks} - {0}
    return None if len(counts) > 1 else max(counts, default=0)


def fixed_threads(problem: PipelineProblem) -> int:
    """Threads every plan needs at least for its fixed counts: each distinct count is some group's."""
    return sum(set(problem.fixed_replicas) - {0})


def least_threads(problem: PipelineProblem, groups) -> int:
    """Threads the groups of tasks `groups` need at least: each its fixed count, or one (a group
    mixing counts: the sum of its counts, once cut where they differ)."""
    total = 0
    for tasks in groups:
        count = fixed_count(problem, tasks)
        total += (count or 1) if count is not None else sum({problem.fixed_replicas[t] for t in tasks} - {0})
    return total


def _fixed_names(problem: PipelineProblem, tasks) -> str:
    return ", ".join(f"`{problem.tasks[t]}` x{problem.fixed_replicas[t]}" for t in tasks if problem.fixed_replicas[t])


def fixed_violations(problem: PipelineProblem, cand: Candidate) -> list[str]:
    """The groups of `cand` that break the fixed replica counts (module docstring)."""
    out = []
    for gi, g in enumerate(cand.groups):
        n = fixed_count(problem, g.tasks)
        if n is None:
            out.append(f"group {gi} runs tasks of different fixed replica counts ({_fixed_names(problem, g.tasks)})")
        elif n and g.replicas != n:
            out.append(f"group {gi} has {g.replicas} replicas where {_fixed_names(problem, g.tasks)} fix {n}")
    return out


def _fixed_runs(problem: PipelineProblem, group: Group) -> list[Group]:
    """`group` cut, in its own task order, into runs of one fixed count each (a free task stays
    with the run it follows; the first run takes the free tasks before its first fixed one), each
    with its count (the group's replicas for a run with none)."""
    runs: list[tuple[list[int], int]] = []
    for t in group.tasks:
        count = problem.fixed_replicas[t]
        if not runs or (count and runs[-1][1] and count != runs[-1][1]):
            runs.append(([], 0))
        runs[-1][0].append(t)
        runs[-1] = (runs[-1][0], runs[-1][1] or count)
    return [Group(tuple(tasks), count or group.replicas) for tasks, count in runs]


def respect_fixed(problem: PipelineProblem, cand: Candidate) -> Candidate | None:
    """`cand` made to keep the fixed replica counts: a group mixing counts is cut into runs
    (`_fixed_runs`: runs of one group's topological task order, so the group graph stays acyclic,
    each run taking its group's stage label, labels made valid by `normalize_stages`), a group
    with a count gets it, and when that makes more threads than contexts the free group whose
    work per replica would grow least loses a replica, again while needed (never below one).
    `cand` itself when it keeps them already; else unmapped (the caller maps it); None when the
    threads cannot fit the contexts."""
    if not fixed_violations(problem, cand):
        return cand
    groups: list[Group] = []
    labels: list[int] = []
    for gi, g in enumerate(cand.groups):
        runs = _fixed_runs(problem, g)
        groups += runs
        labels += [cand.stages[gi] if cand.stages is not None else 0] * len(runs)
    free = [fixed_count(problem, g.tasks) == 0 for g in groups]
    work = [sum(problem.work[t] for t in g.tasks) for g in groups]
    while sum(g.replicas for g in groups) > problem.n_contexts:
        options = [i for i, g in enumerate(groups) if free[i] and g.replicas > 1]
        if not options:
            return None
        i = min(options, key=lambda i: (Fraction(work[i], groups[i].replicas - 1), i))
        groups[i] = Group(groups[i].tasks, groups[i].replicas - 1)
    return normalize_stages(problem, Candidate(tuple(groups), tuple(labels)))
