"""Pipeline candidates as `specs.Plan` values, and back; the dependency-validity check of a
pipeline plan.

A group of a candidate becomes ``R`` plan threads with the same ``(app, instance, stage,
tasks)`` and replica numbers ``0..R-1`` (`simulate.model` reads them the same way).  Names:
``dag#0.s1r0`` (stage 1, replica 0) when the stage holds one group, ``dag#0.s1.b2r0`` (branch 2
of stage 1) when it holds several.
"""

from __future__ import annotations

from collections import defaultdict

from tasksolve.solver.pipeline.candidates import Candidate, Group, depth_stages
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem
from tasksolve.specs import Plan, PlanThread, check_plan


def to_plan(problem: PipelineProblem, cand: Candidate, method: str | None = None) -> Plan:
    """The `Plan` of a mapped candidate: its threads for `problem`'s instance and, with several
    instances, the same threads for every other one on the corresponding contexts of its block
    (`PipelineProblem.placements`)."""
    if not cand.mapped:
        raise PipelineError("a candidate needs contexts before it becomes a plan")
    stages = cand.stages if cand.stages is not None else depth_stages(problem, cand)
    by_stage: dict[int, list[int]] = defaultdict(list)
    for g, s in enumerate(stages):
        by_stage[s].append(g)
    threads: dict[str, PlanThread] = {}
    bindings: dict[str, str] = {}
    for instance, where in problem.placements():
        prefix = f"{problem.app}#{instance}"
        for s in sorted(by_stage):
            members = sorted(by_stage[s], key=lambda g: min(cand.groups[g].tasks))
            for branch, g in enumerate(members):
                group = cand.groups[g]
                for r, c in enumerate(group.contexts or ()):
                    name = f"{prefix}.s{s}r{r}" if len(members) == 1 else f"{prefix}.s{s}.b{branch}r{r}"
                    threads[name] = PlanThread(
                        app=problem.app,
                        instance=instance,
                        tasks=[problem.tasks[t] for t in group.tasks],
                        stage=s,
                        replica=r,
                    )
                    bindings[name] = problem.context_names[c if where is None else where[c]]
    return Plan(spec=problem.name, method=method, bindings=bindings, threads=threads)


def from_plan(problem: PipelineProblem, plan: Plan) -> Candidate:
    """The candidate of a pipeline plan's threads for `problem`'s application instance; raises
    `PipelineError` when the plan is not a valid pipeline of it (see `pipeline_problems`)."""
    if plan.threads is None:
        raise PipelineError("not a pipeline plan: it has no `threads` section")
    index = {name: i for i, name in enumerate(problem.tasks)}
    names = {c: i for i, c in enumerate(problem.context_names)}
    groups: dict[tuple, list[tuple[int, int]]] = defaultdict(list)
    for name, thread in plan.threads.items():
        if thread.app != problem.app or thread.instance != problem.instance:
            continue
        try:
            tasks = tuple(index[t] for t in thread.tasks)
        except KeyError as exc:
            raise PipelineError(f"thread `{name}`: unknown task {exc.args[0]!r} of `{problem.app}`") from None
        context = plan.bindings.get(name)
        if context not in names:
            raise PipelineError(f"thread `{name}` is not bound to a context of the topology")
        groups[(thread.stage, tasks)].append((thread.replica, names[context]))
    if not groups:
        raise PipelineError(f"the plan has no thread of `{problem.app}#{problem.instance}`")
    keys = sorted(groups, key=lambda k: (k[0], min(k[1])))
    out, stages = [], []
    for key in keys:
        members = sorted(groups[key])
        out.append(Group(key[1], len(members), tuple(c for _, c in members)))
        stages.append(key[0])
    return Candidate(tuple(out), tuple(stages))


def pipeline_problems(spec, plan: Plan) -> list[str]:
    """Why `plan` is not a valid pipeline plan of `spec` (empty when it is): the binding checks
    of `specs.check_plan`, then for every application instance of the workload: every task is
    run by exactly one thread group, replicas of a group are numbered 0..R-1 and as many as its
    tasks' fixed `replicas` (one count per group), and every task's
    predecessors are in an earlier stage or earlier in the same thread (LATA's rule)."""
    from tasksolve.specs.errors import format_path

    out = [f"{format_path(p.path)}: {p.message}" if p.path else p.message for p in check_plan(spec, plan)]
    if plan.threads is None:
        return out + ["not a pipeline plan: it has no `threads` section"]
    groups: dict[tuple, list[tuple[int, str]]] = defaultdict(list)
    for name, th in plan.threads.items():
        groups[(th.app, th.instance, th.stage, tuple(th.tasks))].append((th.replica, name))
    where: dict[tuple[str, int, str], tuple[int, int, str]] = {}  # task -> (stage, position, group name)
    for (app, instance, stage, tasks), members in groups.items():
        replicas = sorted(r for r, _ in members)
        first = sorted(members)[0][1]
        if replicas != list(range(len(replicas))):
            out.append(f"`{first}`: the replicas of one group must be numbered 0..{len(replicas) - 1} (got {replicas})")
        if len(set(tasks)) != len(tasks):
            out.append(f"`{first}` runs a task twice")
        known = spec.applications[app].tasks if app in spec.applications else {}
        fixed = sorted({known[t].replicas for t in tasks if t in known} - {1})  # `solver.pipeline.candidates`
        if fixed and fixed != [len(replicas)]:
            out.append(
                f"`{first}`: {len(replicas)} replicas where its tasks' `replicas` fix {' and '.join(map(str, fixed))}"
            )
        for pos, task in enumerate(tasks):
            key = (app, instance, task)
            if key in where:
                out.append(
                    f"task `{app}#{instance}.{task}` is run by two thread groups (`{where[key][2]}` and `{first}`)"
                )
                continue
            where[key] = (stage, pos, first)
    for app, instance in spec.instances:
        application = spec.applications[app]
        for task in application.tasks:
            key = (app, instance, task)
            if key not in where:
                out.append(f"task `{app}#{instance}.{task}` is run by no thread")
                continue
            stage, pos, name = where[key]
            for pred in application.predecessors[task]:
                pk = (app, instance, pred)
                if pk not in where:
                    continue
                pstage, ppos, pname = where[pk]
                same = pname == name
                if not (pstage < stage or (same and ppos < pos)):
                    out.append(
                        f"`{app}#{instance}.{task}` (stage {stage}, `{name}`) runs no later than its "
                        f"predecessor `{pred}` (stage {pstage}, `{pname}`)"
                    )
    return out
