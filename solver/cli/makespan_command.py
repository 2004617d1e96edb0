"""`tasksolve makespan`: a shortest schedule of a task graph on P identical processors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import typer

from solver.cli import common

SPEC_SUFFIXES = (".yaml", ".yml")


def load_graph(path: Path, app_name: str | None):
    """The `TaskGraph` of ``path``: a Standard Task Graph file, or (``.yaml``/``.yml``) one
    application of a spec, through ``solver.makespan.from_spec.graph_from_spec(path, app_name)``.
    This is the single place where the command turns its GRAPH argument into a graph."""
    from solver.makespan.stg import StgFormatError, read_stg
    from solver.makespan.taskgraph import TaskGraphError

    if path.suffix.lower() in SPEC_SUFFIXES:
        from solver.makespan.from_spec import graph_from_spec

        try:
            return graph_from_spec(path, app_name)
        except (ValueError, OSError) as exc:
            common.fail(str(exc), common.EXIT_BAD_INPUT)
    if app_name is not None:
        common.fail("--app applies only to spec files (.yaml, .yml)", common.EXIT_BAD_INPUT)
    try:
        return read_stg(path)
    except (StgFormatError, TaskGraphError) as exc:
        common.fail(str(exc), common.EXIT_BAD_INPUT)


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
            lines.extend(textwrap.wrap(
                " ".join(f"{t.task}@{t.start}" for t in tasks), width=width + label_width + 3,
                initial_indent=" " * (label_width + 2), subsequent_indent=" " * (label_width + 2)))
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

    @app.command("makespan", help=HELP)
    def makespan_command(
        graph: Path = typer.Argument(
            ..., metavar="GRAPH", show_default=False,
            help="Task graph: a Standard Task Graph file (.stg); spec files (.yaml) with --app."),
        processors: int = typer.Option(
            ..., "--processors", "-p", metavar="P", show_default=False,
            help="Number of identical processors (at least 1)."),
        time_limit: float = typer.Option(
            10.0, "--time-limit", metavar="SECONDS",
            help="Time limit of the CP-SAT search; the best schedule found so far (never worse "
                 "than the list schedule) is returned when it expires."),
        seed: int = typer.Option(0, "--seed", metavar="N",
                                 help="Seed of the list-scheduling restarts and of CP-SAT."),
        workers: int = typer.Option(1, "--workers", metavar="N",
                                    help="CP-SAT search workers (threads)."),
        comm_delay: bool = typer.Option(
            False, "--comm-delay",
            help="Honour the edges' communication delays (paid only between tasks on "
                 "different processors): P|prec,c_ij|Cmax. Without it they are ignored."),
        uniform_delay: int | None = typer.Option(
            None, "--uniform-delay", metavar="C",
            help="Set every edge's communication delay to C (implies --comm-delay); STG files "
                 "have none."),
        app_name: str | None = typer.Option(
            None, "--app", metavar="NAME",
            help="With a spec file: the application whose task graph to schedule."),
        deterministic: bool = typer.Option(
            False, "--deterministic",
            help="Count the time limit in CP-SAT deterministic time (a work count, roughly "
                 "seconds but sometimes much longer in wall time; a guard stops at 20 times the "
                 "limit), so that runs with the same seed and one worker give the same answer "
                 "on any machine."),
        json_output: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    ) -> None:
        """Find a shortest (latency-optimal) schedule of a task graph on P processors."""
        from solver.makespan import solve_makespan

        if processors < 1:
            common.fail(f"--processors must be at least 1 (got {processors})")
        if not time_limit > 0:
            common.fail(f"--time-limit must be positive (got {time_limit:g})")
        if workers < 1:
            common.fail(f"--workers must be at least 1 (got {workers})")
        if seed < 0:
            common.fail(f"--seed must be 0 or more (got {seed})")
        if uniform_delay is not None and uniform_delay < 0:
            common.fail(f"--uniform-delay must be 0 or more (got {uniform_delay})")
        task_graph = load_graph(graph, app_name)
        if uniform_delay is not None:
            task_graph = task_graph.with_uniform_delay(uniform_delay)
            comm_delay = True
        try:
            result = solve_makespan(task_graph, processors, comm_delays=comm_delay,
                                    time_limit=time_limit, seed=seed, workers=workers,
                                    deterministic=deterministic)
        except RuntimeError as exc:
            common.fail(f"the solver failed: {exc}", common.EXIT_FAILURE)
        if json_output:
            out = result.to_dict()
            out.update(graph=str(graph), time_limit=time_limit, seed=seed, workers=workers,
                       tasks=len(task_graph))
            common.emit_json(out)
            return
        console = common.console
        console.print(
            f"[bold]{graph}[/]: {len(task_graph)} tasks, work {task_graph.total_work}, "
            f"critical path {task_graph.critical_path_length()}, {processors} processors"
            + (", communication delays" if comm_delay and task_graph.has_delays else ""),
            soft_wrap=True)
        colour = "green" if result.status.value == "OPTIMAL" else "yellow"
        how = {"bound": "the list schedule meets the lower bound",
               "list": "CP-SAT did not improve the list schedule",
               "cp-sat": "found by CP-SAT"}[result.source]
        console.print(
            f"makespan [bold]{result.makespan}[/] [{colour}]{result.status.value}[/] "
            f"(lower bound {result.lower_bound}; list schedule {result.list_makespan}; {how}; "
            f"{result.wall_time:.2f} s)", soft_wrap=True)
        b = result.bounds
        console.print(f"bounds: critical path {b['critical_path']}, work {b['work']}, "
                      f"energetic {b['energetic']}", soft_wrap=True)
        for line in gantt_lines(result.schedule, result.makespan):
            console.print(line, markup=False, highlight=False, soft_wrap=False)
