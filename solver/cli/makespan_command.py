"""`tasksolve makespan`: a shortest schedule of a task graph on P identical processors.

GRAPH is a Standard Task Graph file, a spec file, or a built-in example's name (as every command
takes a spec); the schedule is `solver.makespan.solve_makespan`.  Errors propagate to the CLI's
one error path (`solver.cli.errors`).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import typer

from tasksolve.solver.cli import common, options
from tasksolve.specs import display

SPEC_SUFFIXES = (".yaml", ".yml")
DEFAULT_TIME_LIMIT = 10.0  # seconds, for STG files (a spec brings its search.time_limit)


def is_spec(graph: str) -> bool:
    """A spec file (by suffix) or, when no such file exists, a built-in example's name."""
    from tasksolve.specs.loader import builtin_names

    if graph.lower().endswith(SPEC_SUFFIXES):
        return True
    return not Path(graph).exists() and graph in builtin_names("")


def load_graph(graph: str, app_name: str | None):
    """``(TaskGraph, Spec or None)`` of GRAPH: one application of a spec (a file or a built-in
    example's name) through `solver.makespan.from_spec.graph_from_spec`, or an STG file.
    This is the single place where the command turns its GRAPH argument into a graph."""
    from tasksolve.solver.makespan.stg import read_stg

    if is_spec(graph):
        from tasksolve.solver.makespan.from_spec import graph_from_spec
        from tasksolve.specs import load_spec

        spec = load_spec(graph)  # a SpecError is reported with its locations (exit 2)
        if app_name is not None and app_name not in spec.applications:
            from tasksolve.specs.errors import did_you_mean

            apps = list(spec.applications)
            common.fail(
                f"{graph}: no application `{app_name}` (applications: {', '.join(apps)}){did_you_mean(app_name, apps)}"
            )
        return graph_from_spec(graph, app_name), spec  # load_spec resolves example names too
    if app_name is not None:
        common.fail("--app applies only to spec files (.yaml, .yml) and built-in examples")
    return read_stg(graph), None


def gantt_lines(schedule, makespan: int, width: int = 64) -> list[str]:
    """A text Gantt chart: one bar per processor (consecutive tasks alternate between two
    shades, ``.`` is idle time), then the tasks of that processor as ``name@start``."""
    lines: list[str] = []
    scale = width / makespan if makespan else 0.0
    label_width = len(f"P{schedule.processors - 1}")
    for p in range(schedule.processors):
        tasks = schedule.on_processor(p)
        cells = ["."] * width
        busy = 0
        for k, t in enumerate(x for x in tasks if x.end > x.start):
            busy += t.end - t.start
            lo = int(t.start * scale)
            hi = max(lo + 1, int(round(t.end * scale)))
            for c in range(lo, min(hi, width)):
                cells[c] = "█" if k % 2 == 0 else "▒"
        share = 100 * busy / makespan if makespan else 0.0
        lines.append(f"{('P' + str(p)).rjust(label_width)} |{''.join(cells)}| {share:3.0f}% busy")
        if tasks:
            lines.extend(
                textwrap.wrap(
                    " ".join(f"{t.task}@{t.start}" for t in tasks),
                    width=width + label_width + 3,
                    initial_indent=" " * (label_width + 2),
                    subsequent_indent=" " * (label_width + 2),
                )
            )
    return lines


HELP = (
    "Find a shortest (latency-optimal) schedule of a task graph on P identical processors."
    "\n\n"
    "Lower bounds (critical path, work / P, energetic reasoning) and list scheduling (HLFET, "
    "ETF) first; when they meet, the schedule is optimal at once. Otherwise CP-SAT, hinted with "
    "the list schedule, proves optimality or improves the schedule within the time limit. "
    "OPTIMAL means the makespan equals the lower bound."
    "\n\n"
    "Exit code 2 on a malformed graph or a bad option, 3 if the solver fails."
)


def register(app: typer.Typer) -> None:
    """Attach the `makespan` command to the `tasksolve` application."""
    app.command("makespan", help=HELP)(makespan_command)


def makespan_command(
    graph: str = typer.Argument(
        ...,
        metavar="GRAPH",
        show_default=False,
        help="Task graph: a Standard Task Graph file (.stg), or a spec (a file or a built-in example's "
        "name, see `tasksolve examples`) with --app to choose its application.",
    ),
    processors: int = typer.Option(
        ..., "--processors", "-P", metavar="P", show_default=False, help="Number of identical processors (at least 1)."
    ),
    time_limit: float | None = options.time_limit_option(
        "Time limit of the CP-SAT search (the best schedule found so far, never worse than the list "
        "schedule, is returned when it expires)",
        f"the spec's search.time_limit, else {DEFAULT_TIME_LIMIT:g}s",
    ),
    seed: int | None = options.seed_option(),
    workers: int | None = options.workers_option(),
    comm_delay: bool = typer.Option(
        False,
        "--comm-delay",
        help="Honour the edges' communication delays (paid only between tasks on "
        "different processors): P|prec,c_ij|Cmax. Without it they are ignored.",
    ),
    uniform_delay: int | None = typer.Option(
        None,
        "--uniform-delay",
        min=0,
        metavar="C",
        help="Set every edge's communication delay to C (implies --comm-delay); STG files have none.",
    ),
    app_name: str | None = typer.Option(
        None, "--app", metavar="NAME", help="With a spec: the application whose task graph to schedule."
    ),
    deterministic: bool = typer.Option(
        False,
        "--deterministic",
        help="Count the time limit in CP-SAT deterministic time (a work count, roughly "
        "seconds but sometimes much longer in wall time; a guard stops at 20 times the "
        "limit), so that runs with the same seed and --workers 1 give the same answer "
        "on any machine.",
    ),
    json_output: bool = options.json_option(),
) -> None:
    """Find a shortest (latency-optimal) schedule of a task graph on P processors."""
    from tasksolve.solver.errors import SolverFailed
    from tasksolve.solver.makespan import solve_makespan

    if processors < 1:
        common.fail(f"--processors must be at least 1 (got {processors})")
    task_graph, spec = load_graph(graph, app_name)
    if time_limit is None:
        time_limit = float(spec.search.time_limit) if spec is not None else DEFAULT_TIME_LIMIT
    workers = options.resolve_workers(workers, spec)
    seed = options.resolve_seed(seed, spec)
    if uniform_delay is not None:
        task_graph = task_graph.with_uniform_delay(uniform_delay)
        comm_delay = True
    try:
        result = solve_makespan(
            task_graph,
            processors,
            comm_delays=comm_delay,
            time_limit=time_limit,
            seed=seed,
            workers=workers,
            deterministic=deterministic,
        )
    except RuntimeError as exc:  # solve_makespan's CP-SAT failures
        raise SolverFailed(f"the makespan solver failed: {exc}") from exc
    if json_output:
        out = result.to_dict()
        out.update(graph=graph, time_limit=time_limit, seed=seed, workers=workers, tasks=len(task_graph))
        common.emit_json(out)
        return
    _print_result(graph, task_graph, result, processors, comm_delay)


def _print_result(graph: str, task_graph, result, processors: int, comm_delay: bool) -> None:
    from rich.markup import escape

    console = common.console
    console.print(
        f"[bold]{escape(graph)}[/]: {len(task_graph)} tasks, work {task_graph.total_work}, "
        f"critical path {task_graph.critical_path_length()}, {processors} processors"
        + (", communication delays" if comm_delay and task_graph.has_delays else ""),
        soft_wrap=True,
    )
    colour = "green" if result.status.value == "OPTIMAL" else "yellow"
    how = {
        "bound": "the list schedule meets the lower bound",
        "list": "CP-SAT did not improve the list schedule",
        "cp-sat": "found by CP-SAT",
    }[result.source]
    console.print(
        f"makespan [bold]{result.makespan}[/] [{colour}]{result.status.value}[/] "
        f"(lower bound {result.lower_bound}; list schedule {result.list_makespan}; {how}; "
        f"{display.seconds(result.wall_time)})",
        soft_wrap=True,
    )
    b = result.bounds
    console.print(
        f"bounds: critical path {b['critical_path']}, work {b['work']}, energetic {b['energetic']}", soft_wrap=True
    )
    for line in gantt_lines(result.schedule, result.makespan):
        console.print(line, markup=False, highlight=False, soft_wrap=False)
