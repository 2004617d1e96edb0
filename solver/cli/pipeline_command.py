"""`tasksolve pipeline`: latency-constrained parallel pipelines of a task graph (LATA, DAC'10).

The jobs are `solver.pipeline.job.solve_pipeline` and `solver.pipeline.sweep.sweep_pipeline`; this module parses the
options, shows the progress on stderr, and prints the stage diagram, the comparison table or the
sweep tables.  Errors propagate to the CLI's one error path (`solver.cli.errors`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from tasksolve.solver.cli import common, options
from tasksolve.specs import display
from tasksolve.specs.errors import PATH_MOST, shorten

METHOD_HELP = "cpsat|lata|parallel|list|greedy|random|bipar|all (or a comma-separated list)"


class StderrProgress:
    """The job's progress on stderr as a transient rich bar (the step being run, steps done, time),
    when stderr is a terminal and the output is not ``--json``; logs and pipes stay clean."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and common.err_console.is_terminal
        self.bar = None

    def __enter__(self) -> StderrProgress:
        if self.enabled:
            from rich import progress as rp

            self.bar = rp.Progress(
                rp.SpinnerColumn(),
                rp.TextColumn("{task.description}"),
                rp.BarColumn(),
                rp.MofNCompleteColumn(),
                rp.TimeElapsedColumn(),
                console=common.err_console,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("starting", total=None)
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, text: str, done: int, total: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, description=text, completed=done, total=total, refresh=True)


def _cores(text: str | None) -> tuple[int | None, list[int] | None]:
    """``--cores N`` (a count) or ``--cores A:B[:S]`` (a sweep)."""
    from tasksolve.solver.pipeline.problem import PipelineError
    from tasksolve.solver.pipeline.sweep import parse_range

    if text is None:
        return None, None
    if ":" in text:
        try:
            return None, [int(k) for k in parse_range(text, percent=False)]
        except PipelineError as exc:
            common.fail(f"--cores: {exc}")
    try:
        value = int(text)
    except ValueError:
        common.fail(f"--cores must be an integer or a range A:B[:S] (got {text!r})")
    if value < 1:
        common.fail(f"--cores must be at least 1 (got {value})")
    return value, None


def _fractions(text: str | None) -> list[float] | None:
    from tasksolve.solver.pipeline.problem import PipelineError
    from tasksolve.solver.pipeline.sweep import parse_range

    if text is None:
        return None
    try:
        return parse_range(text, percent=True)
    except PipelineError as exc:
        common.fail(f"--sweep-latency: {exc}")


HELP = """Group a task graph into pipeline stages, threads and replicas, and map them onto the
processor: maximise throughput with the per-packet latency at most L0.

The closed-form model (solver/pipeline/problem.py): a thread's time is its tasks' work plus
its incoming messages (LATA Eq. 1-2 by placement), slowed by the resource contention of its
domains; period = max over thread groups of time / replicas; latency = longest path of
thread times. With an oracle, CP-SAT's search.top_k best plans are measured and the best
measured one within the bound is kept. Several instances of the application: each gets its own
block of contexts (the topology split into blocks of one shape) and the same plan. Exit code 0
when the chosen plan meets the bound for the whole workload (and after a sweep), 1 when the
chosen method misses an achievable bound or --app leaves applications of the workload out, 2 on
bad input: a bound below the minimum achievable latency, instances that cannot each get a block,
3 when an oracle or a solver fails, 130 when interrupted.
"""

OUT_OPTION = options.out_dir_option(
    None, "the chosen plan (plan.yaml) or, with a sweep, its plots (sweep-latency.png, sweep-cores.png)"
)
PLOT_OPTION = typer.Option(
    None, "--plot", metavar="FILE", help="With a sweep: write the plot here instead of --out (PNG/SVG/PDF by suffix)."
)


def pipeline_command(
    spec_path: str = options.spec_argument(),
    app_name: str | None = typer.Option(
        None,
        "--app",
        metavar="NAME",
        help="Application to pipeline, every instance of it (needed when the workload has several; "
        "the plan then leaves the others out, and the exit code is 1).",
    ),
    method: str = typer.Option(
        "all", "--method", "--methods", "-m", metavar="METHOD", help=f"Method(s): {METHOD_HELP}."
    ),
    latency_max: str | None = typer.Option(
        None,
        "--latency-max",
        metavar="BOUND",
        help="Latency bound L0: a time (3us), cycles (2800), a share of the sequential time (75%), "
        "or none. Default: the spec's constraints.latency_max.",
    ),
    cores: str | None = typer.Option(
        None,
        "--cores",
        metavar="N|A:B[:S]",
        help="Use the first N usable contexts (of each instance's block with several instances); a range "
        "A:B[:S] sweeps the core count (LATA Figure 15).",
    ),
    sweep_latency: str | None = typer.Option(
        None,
        "--sweep-latency",
        metavar="A%:B%[:S%]",
        help="Sweep L0 over shares of the sequential time (LATA Figure 14), e.g. 60%:100%:5%.",
    ),
    time_limit: float | None = options.time_limit_option(),
    workers: int | None = options.workers_option(),
    seed: int | None = options.seed_option(),
    out: Path | None = OUT_OPTION,
    plot: Path | None = PLOT_OPTION,
    oracle: str | None = typer.Option(
        None,
        "--oracle",
        metavar="|".join((*options.ORACLE_KINDS, "none")),
        help=f"Measure each plan with an oracle ({options.oracle_help()}), or not (none). "
        "Default: the spec's oracle.kind.",
    ),
    packets: int | None = typer.Option(
        None, "--packets", min=100, metavar="N", help="Packets per simulation. Default: the spec's oracle.packets."
    ),
    load: str | None = options.load_option(),
    trace: bool = typer.Option(False, "--trace", help="Also print LATA's steps."),
    split: bool = typer.Option(
        False,
        "--split",
        help="NPIRE's task splitting first (§2.5): split the largest tasks in two while the heuristics' best "
        "throughput under the bound rises (at most 5 times), then solve the split graph; with --out, the split spec "
        "is written to OUT/spec.yaml (the plan names its task-splits).",
    ),
    allow_commands: bool = options.allow_commands_option(),
    json_output: bool = options.json_option(),
) -> None:
    from tasksolve.solver.pipeline.job import solve_pipeline
    from tasksolve.solver.pipeline.sweep import sweep_pipeline

    spec = common.load_spec_or_fail(spec_path)
    if oracle is None:  # the spec's own oracle: a command one runs its program only when asked
        common.chosen_oracle(None, spec, allow_commands)
    splits = None
    if split:
        spec, splits = _split(spec, app_name, latency_max, cores, out)
    core_count, core_range = _cores(cores)
    fractions = _fractions(sweep_latency)
    if plot is not None and fractions is None and core_range is None:
        common.fail("--plot needs a sweep (--sweep-latency or a --cores range)")
    settings = dict(
        app=app_name,
        methods=method,
        latency_max=latency_max,
        time_limit=time_limit,
        workers=options.resolve_workers(workers, spec),
        seed=options.resolve_seed(seed, spec),
        out_dir=out,
    )
    with StderrProgress(not json_output) as progress:
        if fractions is not None or core_range is not None:
            sweep = sweep_pipeline(
                spec, fractions=fractions, cores=core_range, plot_file=plot, progress=progress, **settings
            )
        else:
            job = solve_pipeline(
                spec,
                cores=core_count,
                oracle=oracle,
                packets=packets,
                progress=progress,
                load=options.parse_load(load),
                **settings,
            )
    if fractions is not None or core_range is not None:
        if json_output:
            common.emit_json(sweep.to_dict())
        else:
            _print_sweep(sweep)
        return
    if json_output:
        common.emit_json(job.to_dict() | ({"splits": splits} if splits is not None else {}))
    else:
        _print_job(job, trace)
        for row in (splits or [])[1:]:
            common.console.print(f"split: `{row['split']}` in two -> {display.rate(row['value'])}", markup=False)
    raise typer.Exit(common.EXIT_OK if job.meets_bound and job.covers_workload else common.EXIT_NEGATIVE)


def _split(spec, app_name, latency_max, cores, out):
    """`--split`: the split spec and the history of `solver.pipeline.npire.split_for_pipeline`."""
    from tasksolve.solver.pipeline.npire import split_for_pipeline
    from tasksolve.specs import dump_spec
    from tasksolve.specs.files import write_text_atomic

    count = None if cores is None or ":" in cores else int(cores)
    split_spec, history = split_for_pipeline(spec, app_name, latency_max=latency_max, cores=count)
    if out is not None and len(history) > 1:
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / "spec.yaml", dump_spec(split_spec))
        split_spec.set_source(str(out / "spec.yaml"))  # the plan written beside it names this file
    return split_spec, history


def _figures(throughput: float | None, latency: float | None) -> str:
    return f"{display.rate(throughput)}, {display.seconds(latency)}"


def _print_sweep(sweep) -> None:
    from rich import box
    from rich.table import Table

    methods = list(dict.fromkeys(p.method for _, p in sweep.points))
    for kind in sweep.kinds:
        mine = sweep.of(kind)
        table = Table(
            title=("throughput, latency by latency bound L0" if kind == "latency" else "throughput, latency by cores"),
            box=box.SIMPLE_HEAD,
            pad_edge=False,
        )
        table.add_column("L0" if kind == "latency" else "cores", justify="right", no_wrap=True)
        for m in methods:
            table.add_column(m, justify="right", no_wrap=True)
        for x in dict.fromkeys(p.x for p in mine):
            cells = [display.share(x, 0) if kind == "latency" else str(int(x))]
            for m in methods:
                p = next((p for p in mine if p.x == x and p.method == m), None)
                if p is None:
                    cells.append("-")
                elif p.throughput is None:
                    cells.append(p.status.lower())
                else:
                    cells.append(_figures(p.throughput, p.latency) + ("" if p.feasible else "*"))
            table.add_row(*cells)
        common.console.print(table)
    common.console.print("* misses the latency bound", markup=False)
    for note in sweep.notes:
        common.console.print(f"note: {note}", markup=False)
    for path in sweep.plots:
        common.console.print(f"plot: {path}", markup=False, soft_wrap=True)


def _diagram(problem, result) -> list[str]:
    """One line per thread group, stage by stage: tasks, replicas, time per packet, contexts."""
    ev, cand = result.evaluation, result.candidate
    by_stage: dict[int, list[int]] = {}
    for g, s in enumerate(ev.stages):
        by_stage.setdefault(s, []).append(g)
    names = problem.context_names
    width = max(len(" -> ".join(problem.tasks[t] for t in g.tasks)) for g in cand.groups)
    lines = []
    for s in sorted(by_stage):
        for i, g in enumerate(sorted(by_stage[s], key=lambda g: min(cand.groups[g].tasks))):
            group = cand.groups[g]
            tasks = " -> ".join(problem.tasks[t] for t in group.tasks)
            ctx = [names[c] for c in (group.contexts or ())]
            contexts = ", ".join(ctx) if len(ctx) <= 4 else f"{', '.join(ctx[:2])}, ... {ctx[-1]} ({len(ctx)})"
            label = f"s{s}" if i == 0 else ""
            time_text = f"{problem.cycles(ev.times[g]):.6g} cy"
            if ev.comm[g]:
                time_text += f" ({problem.cycles(ev.comm[g]):.6g} comm)"
            bottleneck = "  <- bottleneck" if g == ev.bottleneck else ""
            lines.append(
                f"  {label:>4} | {tasks:<{width}}  x{group.replicas:<2} {time_text:<24} [{contexts}]{bottleneck}"
            )
    return lines


def _comparison_table(job):
    from rich import box
    from rich.table import Table

    kinds = {m.oracle for m in job.measured.values()}
    label = "sim" if kinds == {"des"} else "an." if kinds == {"analytic"} else "cmd"
    table = Table(
        title="comparison (closed form" + (", measured" if job.measured else "") + ")",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    columns = ["method", "status", "latency", "rate", "thr", "L0"]
    if job.measured:
        columns += [f"{label} latency", f"{label} rate"]
    for col in columns:
        table.add_column(col, justify="left" if col in ("method", "status") else "right", no_wrap=True)
    for row in job.rows():
        cells = [
            row["method"] + ("*" if row["method"] == job.chosen else ""),
            row["status"].lower(),
            display.seconds(row["latency"]),
            display.rate(row["throughput"]),
            str(row["threads"]),
            "ok" if row["meets_bound"] else "miss",
        ]
        if job.measured:
            sim = row["simulated"]
            cells += (
                ["-", "-"]
                if sim is None
                else [
                    display.seconds(sim["loaded_latency_mean"] or sim["latency_mean"])
                    + (" miss" if row.get("measured_meets_bound") is False else ""),
                    display.rate(sim["throughput"]),
                ]
            )
        table.add_row(*cells)
    footnote = "* chosen; latency = closed-form latency (longest path), rate = clock / period, thr = threads"
    if job.measured:
        footnote += {
            "sim": "; sim = simulation: latency at the offered load (oracle.load, --load) of the plan's maximum rate, "
            "rate with saturated sources; miss = over L0 at that load",
            "an.": "; an. = analytic model with resource contention",
            "cmd": "; cmd = the spec's command, run pinned on this host",
        }[label]
    return table, footnote


def _print_job(job, trace: bool) -> None:
    from tasksolve.solver.pipeline.problem import format_cycles

    console, problem, result = common.console, job.problem, job.result
    ev = result.evaluation
    each = f" per instance, {problem.instances} instances" if problem.instances > 1 else ""
    console.print(
        f"{job.spec_name}: `{problem.app}` ({problem.n} tasks, sequential "
        f"{format_cycles(problem.cycles(problem.sequential), problem.clock)}, critical path "
        f"{format_cycles(problem.cycles(problem.critical_path), problem.clock)}) on {problem.n_contexts} contexts"
        f"{each}; L0 = {problem.describe_bound()}",
        markup=False,
        soft_wrap=True,
    )
    status = result.status + (f", gap {display.share(result.gap, 1)}" if result.gap is not None else "")
    console.print(
        f"chosen: {job.chosen} ({status}): throughput {display.rate(ev.throughput)} "
        f"(period {ev.period_cycles:.6g} cycles), latency {display.seconds(ev.latency_seconds)}, "
        f"{ev.threads} threads",
        markup=False,
        soft_wrap=True,
    )
    copies = f" of instance #{problem.instance}, repeated on every instance's block" if problem.instances > 1 else ""
    console.print(f"stages (tasks, replicas, time per packet, contexts){copies}:", markup=False)
    for line in _diagram(problem, result):
        console.print(line, markup=False, soft_wrap=True)
    table, footnote = _comparison_table(job)
    console.print(table)
    console.print(footnote, markup=False, soft_wrap=True)
    for note in job.notes:
        console.print(f"note: {note}", markup=False, soft_wrap=True)
    if trace and "lata" in job.results:
        console.print("LATA steps:", markup=False)
        for step in job.results["lata"].trace:
            console.print(
                f"  {step['step']:<10} {step['detail']}  (period {step['period']:.6g}, latency "
                f"{step['latency']:.6g}, stage latency {step['stage_latency']:.6g} cycles, "
                f"{step['threads']} threads)",
                markup=False,
                soft_wrap=True,
            )
    if job.written is not None:
        console.print(f"plan written to {shorten(str(job.written), PATH_MOST)}", markup=False, soft_wrap=True)
    if not job.covers_workload:
        common.err_console.print(
            f"the plan covers `{problem.app}` only: it leaves {', '.join(job.left_out)} of the workload out",
            markup=False,
        )
    if not job.meets_bound:
        common.err_console.print(
            f"the {job.chosen} plan misses the latency bound {problem.describe_bound()} "
            f"(latency {format_cycles(ev.latency_cycles, problem.clock)})",
            markup=False,
        )


def register(app: typer.Typer) -> None:
    """Attach the `pipeline` command to the `tasksolve` application."""
    app.command("pipeline", help=HELP)(pipeline_command)
