"""NPIRE's task splitting on the search side (Labrecque & Steffan, "Scaling Task Graphs for Network
Processors", §2.3 Figure 3(c), §2.5).

Task splitting breaks a large task into smaller *task-splits* that the pipeline search may place
in different threads, for load balance.  It is a graph transformation: `split_task` replaces a
task of `cycles` by ``k`` pieces ``<task>_s1 .. <task>_sk`` in a chain, so the pieces run one
after the other for each packet (the ordered dependences between splits, §2.5), and returns a new
`Application`; `split_spec` does it inside a spec and `split_problem` builds the
`PipelineProblem` of the result.  `split_search` is NPIRE's feedback loop (§2.5): split candidate
tasks in two, keep the best split while the figure improves, at most five times;
`split_for_pipeline` runs it with the best throughput of the heuristic pipeline methods under
the latency bound as the figure (`tasksolve pipeline --split`, which then solves the split
graph).

Decisions (BENCHMARKS.md, "NPIRE transformations"):

* pieces of equal cycles (§2.5: "two task-splits of roughly the same dynamic execution
  duration"), each with the task's demands;
* the incoming edges go to the first piece, the outgoing edges leave the last; each chain edge
  carries the live data set, ``live_bytes`` (default: the largest message the task receives,
  the packet state handed to it) -- the overhead that made splitting pay little in §5;
* a critical section (the last cycles of the task, `simulate.locks`) stays whole in the last
  piece: NPIRE migrates a lock held across a split point from producer to consumer split (§2.5),
  which a lock held by one thread cannot express.  When the section is longer than an equal
  piece, the other pieces share the cycles before it;
* an early signal moves to the last piece, at the same point of the task's work when it falls in
  that piece, at its start otherwise (an approximation: the earlier pieces do not signal);
* candidates in `split_search` are the tasks (and task-splits) with the most cycles, not the
  most queue time: queue time needs a simulated plan, while the largest tasks are those that bound
  a pipeline's period.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem
from tasksolve.specs import dump_spec, load_spec_text
from tasksolve.specs.application import Application

MAX_ITERATIONS = 5  # §2.5: "generally no benefit to performing more than five iterations"
CANDIDATES = 3  # §2.5: "the top three bottleneck tasks"
SPLIT_METHODS = ("lata", "parallel", "list", "greedy", "bipar")  # the pipeline search `--split` scores


def piece_names(app: Application, task: str, pieces: int) -> list[str]:
    """Names of the pieces of `task`, distinct from every other task's name."""
    names = []
    for i in range(1, pieces + 1):
        name = f"{task}_s{i}"
        while name in app.tasks and name != task:
            name += "_"
        names.append(name)
    return names


def _piece_cycles(cycles: float, critical: float, pieces: int) -> list[float]:
    equal = cycles / pieces
    if critical <= equal:
        return [equal] * pieces
    rest = (cycles - critical) / (pieces - 1)
    return [rest] * (pieces - 1) + [critical]


def split_task(app: Application, task: str, pieces: int, live_bytes: int | None = None) -> Application:
    """`app` with `task` replaced by a chain of `pieces` task-splits (see the module docstring)."""
    if task not in app.tasks:
        raise PipelineError(f"no task `{task}` to split")
    if pieces < 1:
        raise PipelineError(f"a task splits into at least 1 piece (got {pieces})")
    if pieces == 1:
        return app
    original = app.tasks[task]
    critical = original.critical_cycles
    if critical >= original.cycles:
        raise PipelineError(
            f"task `{task}` runs wholly inside the critical section of `{original.critical.lock}`: "
            "its lock would have to migrate between task-splits (NPIRE §2.5), which is not modelled"
        )
    names = piece_names(app, task, pieces)
    cycles = _piece_cycles(original.cycles, critical, pieces)
    incoming = [e.bytes for e in app.edges if e.target == task]
    live = max(incoming, default=0) if live_bytes is None else int(live_bytes)
    base = original.model_dump(mode="json", exclude_none=True, exclude={"critical", "signal", "cycles"})
    tasks: dict[str, Any] = {}
    for name, other in app.tasks.items():
        if name != task:
            tasks[name] = other.model_dump(mode="json", exclude_none=True)
            continue
        for i, piece in enumerate(names):
            tasks[piece] = {**base, "cycles": cycles[i]}
        last = tasks[names[-1]]
        if original.critical is not None:
            last["critical"] = {**original.critical.model_dump(mode="json", exclude_none=True), "cycles": critical}
        if original.signal is not None:
            start = original.cycles - cycles[-1]
            last["signal"] = max(0.0, original.signal * original.cycles - start) / cycles[-1]
    edges = []
    for edge in app.edges:
        source = names[-1] if edge.source == task else edge.source
        target = names[0] if edge.target == task else edge.target
        edges.append({"from": source, "to": target, "bytes": edge.bytes})
    edges += [{"from": a, "to": b, "bytes": live} for a, b in zip(names, names[1:])]
    data = {"tasks": tasks, "edges": edges}
    if app.description is not None:
        data["description"] = app.description
    return Application.model_validate(data)


def split_spec(spec, splits: dict[str, int], app: str | None = None, live_bytes: int | None = None):
    """`spec` with the tasks of `splits` (task -> pieces) of application `app` (the only one when
    omitted) split, checked and loaded again."""
    name = _one_app(spec, app)
    application = spec.applications[name]
    for task, pieces in splits.items():
        application = split_task(application, task, pieces, live_bytes)
    data = yaml.safe_load(dump_spec(spec))
    data["applications"][name] = application.model_dump(mode="json", by_alias=True, exclude_none=True)
    return load_spec_text(yaml.safe_dump(data, sort_keys=False))


def split_problem(spec, splits: dict[str, int], app: str | None = None, **problem_options) -> PipelineProblem:
    """The `PipelineProblem` of `spec` after `split_spec` (options as `PipelineProblem.from_spec`)."""
    return PipelineProblem.from_spec(split_spec(spec, splits, app), app=_one_app(spec, app), **problem_options)


def split_search(
    spec,
    evaluate: Callable[[Any], float],
    app: str | None = None,
    candidates: int = CANDIDATES,
    iterations: int = MAX_ITERATIONS,
) -> tuple[Any, list[dict]]:
    """NPIRE's iterative splitting (§2.5): each iteration splits each of the `candidates` largest
    tasks in two, keeps the split whose spec `evaluate` (higher is better, e.g. the throughput
    of the pipeline search's plan) scores best if it beats the current spec, and stops when none
    does or after `iterations`.  Returns the final spec and one record per iteration."""
    name = _one_app(spec, app)
    best, best_value = spec, evaluate(spec)
    history = [{"split": None, "value": best_value}]
    for _ in range(iterations):
        tasks = best.applications[name].tasks
        order = sorted(tasks, key=lambda t: (-tasks[t].cycles, t))
        tried = []
        for task in order[:candidates]:
            try:
                candidate = split_spec(best, {task: 2}, name)
            except PipelineError:
                continue
            tried.append((evaluate(candidate), task, candidate))
        if not tried:
            break
        value, task, candidate = max(tried, key=lambda row: row[0])
        if value <= best_value:
            break
        best, best_value = candidate, value
        history.append({"split": task, "value": value})
    return best, history


def split_for_pipeline(
    spec, app: str | None = None, latency_max: str | None = None, cores: int | None = None, seconds: float = 1.0
):
    """`split_search` as `tasksolve pipeline --split` runs it.  A spec scores the best closed-form
    throughput, among the plans of LATA and its comparison systems whose mapping
    `solver.pipeline.cpsat.remap` has improved for up to `seconds` each, that meets the latency
    bound (0 if none: a split must not buy throughput with a broken bound); `latency_max` and
    `cores` as `solver.pipeline.job.build_problem` takes them.  Returns the split spec and the
    history."""
    import time

    from tasksolve.solver.pipeline.candidates import NoPlan
    from tasksolve.solver.pipeline.compare import run_method
    from tasksolve.solver.pipeline.cpsat import remap
    from tasksolve.solver.pipeline.evaluation import evaluate
    from tasksolve.solver.pipeline.job import build_problem

    name = _one_app(spec, app)

    def throughput(candidate) -> float:
        problem = build_problem(candidate, name, latency_max=latency_max, cores=cores)
        best = 0.0
        for method in SPLIT_METHODS:
            try:
                plan = run_method(problem, method).candidate
            except NoPlan:  # this method keeps no fixed replica counts here; the others may
                continue
            ev = evaluate(problem, remap(problem, plan, deadline=time.perf_counter() + seconds))
            if ev.feasible:
                best = max(best, problem.throughput(ev.period))
        return best

    return split_search(spec, throughput, name)


def _one_app(spec, app: str | None) -> str:
    if app is not None:
        if app not in spec.applications:
            raise PipelineError(f"unknown application `{app}`")
        return app
    apps = sorted({item.app for item in spec.workload})
    if len(apps) != 1:
        raise PipelineError(f"the workload holds several applications ({', '.join(apps)}); choose one")
    return apps[0]
