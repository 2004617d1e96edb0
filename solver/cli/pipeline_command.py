"""`tasksolve pipeline`: latency-constrained parallel pipelines of a task graph (LATA, DAC'10),
exact (CP-SAT) and heuristic (LATA and its comparison systems), with a stage diagram, a
comparison table, sweeps (Figures 14-15) and the simulation's figures when available."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from solver.cli import common

METHOD_HELP = "cpsat|lata|parallel|list|greedy|random|bipar|all (or a comma-separated list)"


def _int(text: str, option: str, minimum: int = 0) -> int:
    try:
        value = int(text)
    except ValueError:
        common.fail(f"{option} must be an integer (got {text!r})")
    if value < minimum:
        common.fail(f"{option} must be at least {minimum} (got {value})")
    return value


def _float(text: str, option: str) -> float:
    try:
        value = float(text)
    except ValueError:
        common.fail(f"{option} must be a number (got {text!r})")
    if not math.isfinite(value) or value <= 0:
        common.fail(f"{option} must be a positive number (got {text!r})")
    return value


def _methods(text: str) -> list[str]:
    from solver.pipeline.compare import METHOD_NAMES

    names = [m.strip().lower() for m in text.split(",") if m.strip()]
    if not names:
        common.fail(f"--method: expected {METHOD_HELP}")
    if "all" in names:
        return list(METHOD_NAMES)
    from specs.errors import did_you_mean

    for m in names:
        if m not in METHOD_NAMES:
            common.fail(f"--method: unknown method `{m}` (one of {', '.join(METHOD_NAMES)}, all){did_you_mean(m, METHOD_NAMES)}")
    return list(dict.fromkeys(names))


def _chosen(results: dict) -> str:
    """The method whose plan is reported: CP-SAT when it found a plan, else the best one."""
    from solver.pipeline.evaluation import Evaluation

    if "cpsat" in results and results["cpsat"].status in ("OPTIMAL", "FEASIBLE"):
        return "cpsat"
    ranked: list[tuple[tuple, str]] = []
    for name, r in results.items():
        ev: Evaluation = r.evaluation
        ranked.append((ev.rank(), name))
    return min(ranked)[1]


def _fmt_lat(seconds: float) -> str:
    return f"{seconds * 1e6:.3f}"


def _fmt_thr(pps: float) -> str:
    return f"{pps / 1e6:.4g}"


def _infeasible(problem, time_limit: float, workers: int, seed: int) -> None:
    """Stop with exit 2 naming the bound and the smallest achievable latency."""
    from solver.pipeline import cpsat
    from solver.pipeline.problem import format_cycles

    bound = problem.cycles(problem.latency_max)
    best, lower, status = cpsat.min_latency(problem, time_limit=min(time_limit, 20.0), workers=workers, seed=seed)
    if best is not None and status == "OPTIMAL":
        minimum = f"the minimum achievable latency is {format_cycles(problem.cycles(best), problem.clock)}"
    elif best is not None:
        minimum = (f"the minimum achievable latency lies between {format_cycles(problem.cycles(lower), problem.clock)} "
                   f"and {format_cycles(problem.cycles(best), problem.clock)}")
    else:
        minimum = f"no plan beats the critical path of {format_cycles(problem.cycles(lower), problem.clock)}"
    if best is not None and best <= problem.latency_max:
        return  # achievable after all (the caller reports its methods' miss)
    common.fail(f"latency bound {format_cycles(bound, problem.clock)} cannot be met: {minimum} "
                f"(sequential time {format_cycles(problem.cycles(problem.sequential), problem.clock)})")


def _diagram(problem, result) -> list[str]:
    ev = result.evaluation
    cand = result.candidate
    lines = []
    by_stage: dict[int, list[int]] = {}
    for g, s in enumerate(ev.stages):
        by_stage.setdefault(s, []).append(g)
    names = problem.context_names
    width = max(len(" -> ".join(problem.tasks[t] for t in g.tasks)) for g in cand.groups)
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
            lines.append(f"  {label:>4} | {tasks:<{width}}  x{group.replicas:<2} {time_text:<24} [{contexts}]{bottleneck}")
    return lines


def _row(problem, name: str, result, measured) -> dict:
    ev = result.evaluation
    row = {
        "method": name,
        "status": result.status,
        "latency": ev.latency_seconds,
        "throughput": ev.throughput,
        "latency_cycles": ev.latency_cycles,
        "period_cycles": ev.period_cycles,
        "stage_latency_cycles": problem.cycles(ev.stage_latency),
        "threads": ev.threads,
        "stages": (max(ev.stages) + 1) if ev.stages else 0,
        "meets_bound": ev.feasible,
        "seconds": result.seconds,
        "simulated": measured.to_dict() if measured is not None else None,
    }
    if result.bound is not None:
        row["period_bound_cycles"] = problem.cycles(result.bound)
        row["gap"] = result.gap
    if result.notes:
        row["notes"] = list(result.notes)
    return row


def register(app: typer.Typer) -> None:
    """Attach the `pipeline` command to the `tasksolve` application."""

    @app.command("pipeline")
    def pipeline_command(
        spec_path: str = typer.Argument(..., metavar="SPEC", show_default=False,
                                        help="Spec file, or the name of a built-in example (e.g. xeon-lata-dag)."),
        app_name: str | None = typer.Option(None, "--app", metavar="NAME",
                                            help="Application to pipeline (needed when the workload has several)."),
        method: str = typer.Option("all", "--method", metavar="METHOD", help=f"Method(s): {METHOD_HELP}."),
        latency_max: str | None = typer.Option(
            None, "--latency-max", metavar="BOUND",
            help="Latency bound L0: a time (3us), cycles (2800), a share of the sequential time (75%), "
                 "or none. Default: the spec's constraints.latency_max."),
        cores: str | None = typer.Option(
            None, "--cores", metavar="N|A:B[:S]",
            help="Use the first N usable contexts; a range A:B[:S] sweeps the core count (LATA Figure 15)."),
        sweep_latency: str | None = typer.Option(
            None, "--sweep-latency", metavar="A%:B%[:S%]",
            help="Sweep L0 over shares of the sequential time (LATA Figure 14), e.g. 60%:100%:5%."),
        time_limit: str | None = typer.Option(None, "--time-limit", metavar="S",
                                              help="CP-SAT time limit per solve in seconds (default: the spec's search.time_limit)."),
        workers: str | None = typer.Option(None, "--workers", metavar="N",
                                           help="CP-SAT workers (default: the spec's search.workers, else 2)."),
        seed: str = typer.Option("0", "--seed", metavar="N", help="Seed of Random and of CP-SAT (CP-SAT repeats itself with --workers 1 when it finishes "
                                           "within the time limit)."),
        out: Path | None = typer.Option(None, "--out", metavar="PLAN.yaml",
                                        help="Write the chosen plan (YAML, or JSON for .json), atomically."),
        plot: Path | None = typer.Option(None, "--plot", metavar="FILE",
                                         help="With a sweep: write the plot (PNG/SVG/PDF by suffix)."),
        oracle: str | None = typer.Option(
            None, "--oracle", metavar="des|analytic|none",
            help="Measure each plan with the simulation (des), the analytic model with contention, or not "
                 "(default: the spec's oracle.kind when the simulation is available)."),
        packets: str | None = typer.Option(None, "--packets", metavar="N",
                                           help="Packets per simulation (default: the spec's oracle.packets)."),
        trace: bool = typer.Option(False, "--trace", help="Also print LATA's steps."),
        json_output: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    ) -> None:
        """Group a task graph into pipeline stages, threads and replicas, and map them onto the
        processor: maximise throughput with the per-packet latency at most L0.

        The closed-form model (solver/pipeline/problem.py): a thread's time is its tasks' work plus
        its incoming messages (LATA Eq. 1-2 by placement); period = max over thread groups of
        time / replicas; latency = longest path of thread times. Exit code 2 when the bound is
        below the minimum achievable latency, 1 when the chosen method misses an achievable bound.
        """
        from solver.pipeline import compare as cmp
        from solver.pipeline.plans import to_plan
        from solver.pipeline.problem import (
            PipelineError,
            PipelineProblem,
            format_cycles,
        )
        from solver.pipeline.sweep import cores_sweep, latency_sweep, parse_range
        from solver.pipeline.sweep import plot as plot_sweep

        spec = common.load_spec_or_fail(spec_path)
        methods = _methods(method)
        limit = _float(time_limit, "--time-limit") if time_limit is not None else float(spec.search.time_limit)
        n_workers = _int(workers, "--workers", 1) if workers is not None else int(spec.search.workers or 2)
        seed_value = _int(seed, "--seed", 0)
        bound: object = "spec"
        if latency_max is not None:
            bound = None if latency_max.strip().lower() == "none" else latency_max.strip()
        core_count, core_range = None, None
        if cores is not None:
            if ":" in cores:
                try:
                    core_range = [int(k) for k in parse_range(cores, percent=False)]
                except PipelineError as exc:
                    common.fail(f"--cores: {exc}")
            else:
                core_count = _int(cores, "--cores", 1)
        fractions = None
        if sweep_latency is not None:
            try:
                fractions = parse_range(sweep_latency, percent=True)
            except PipelineError as exc:
                common.fail(f"--sweep-latency: {exc}")
        if plot is not None and fractions is None and core_range is None:
            common.fail("--plot needs a sweep (--sweep-latency or a --cores range)")
        try:
            problem = PipelineProblem.from_spec(spec, app_name, latency_max=bound, cores=core_count)
            if core_range is not None and max(core_range) > problem.n_contexts:
                common.fail(f"--cores {cores}: the spec has only {problem.n_contexts} usable contexts")
        except PipelineError as exc:
            common.fail(str(exc))
        if len(spec.workload) != 1 or spec.workload[0].instances != 1:
            note = f"note: pipelining one instance of `{problem.app}`; the plan covers that instance only"
            if not json_output:
                common.err_console.print(note, markup=False)

        # ------------------------------------------------------------------ sweeps
        if fractions is not None or core_range is not None:
            progress = None if json_output else (lambda text: common.err_console.print(text, markup=False))
            points = []
            try:
                if fractions is not None:
                    points += [("latency", p) for p in latency_sweep(problem, fractions, methods, time_limit=limit,
                                                                      workers=n_workers, seed=seed_value, progress=progress)]
                if core_range is not None:
                    points += [("cores", p) for p in cores_sweep(problem, core_range, methods, time_limit=limit,
                                                                  workers=n_workers, seed=seed_value, progress=progress)]
            except PipelineError as exc:
                common.fail(str(exc))
            written = []
            if plot is not None:
                kinds = sorted({k for k, _ in points})
                for kind in kinds:
                    target = plot if len(kinds) == 1 else plot.with_name(f"{plot.stem}-{kind}{plot.suffix}")
                    try:
                        plot_sweep([p for k, p in points if k == kind], str(target), kind=kind,
                                   title=f"{spec.name}: {problem.app}, " + ("throughput vs latency bound" if kind == "latency" else "throughput vs cores"))
                    except (OSError, ValueError) as exc:
                        common.fail(f"cannot write {target}: {exc}")
                    written.append(str(target))
            if json_output:
                common.emit_json({"spec": spec.name, "app": problem.app, "sequential_cycles": problem.cycles(problem.sequential),
                                  "critical_path_cycles": problem.cycles(problem.critical_path),
                                  "sweep": [dict(kind=k, **p.to_dict()) for k, p in points], "plots": written})
                return
            from rich import box
            from rich.table import Table

            for kind in sorted({k for k, _ in points}):
                mine = [p for k, p in points if k == kind]
                xs = list(dict.fromkeys(p.x for p in mine))
                table = Table(title=("throughput Mpps/latency us by latency bound" if kind == "latency"
                                     else "throughput Mpps/latency us by cores"), box=box.SIMPLE_HEAD, pad_edge=False)
                table.add_column("L0" if kind == "latency" else "cores", justify="right", no_wrap=True)
                for m in methods:
                    table.add_column(m, justify="right", no_wrap=True)
                for x in xs:
                    cells = [f"{x:.0%}" if kind == "latency" else str(int(x))]
                    for m in methods:
                        hit = [p for p in mine if p.x == x and p.method == m]
                        if not hit:
                            cells.append("-")
                            continue
                        p = hit[0]
                        if p.throughput is None:
                            cells.append(p.status.lower())
                            continue
                        mark = "" if p.feasible else "*"
                        cells.append(f"{_fmt_thr(p.throughput)}/{_fmt_lat(p.latency)}{mark}")
                    table.add_row(*cells)
                common.console.print(table)
            common.console.print("* misses the latency bound", markup=False)
            for w in written:
                common.console.print(f"plot: {w}", markup=False)
            return

        # ------------------------------------------------------------------ one problem
        if problem.latency_max is not None and problem.latency_max < problem.critical_path:
            common.fail(
                f"latency bound {problem.describe_bound()} cannot be met: it is below the critical path of "
                f"{format_cycles(problem.cycles(problem.critical_path), problem.clock)}, the minimum latency "
                f"with free communication (sequential time {format_cycles(problem.cycles(problem.sequential), problem.clock)})")
        try:
            results = cmp.compare(problem, methods, time_limit=limit, workers=n_workers, seed=seed_value)
        except PipelineError as exc:
            common.fail(str(exc))
        except Exception as exc:  # a solver failure, reported in one line
            common.fail(f"pipeline search failed: {type(exc).__name__}: {exc}", common.EXIT_FAILURE)
        if problem.latency_max is not None:
            if "cpsat" in results and results["cpsat"].status == "INFEASIBLE":
                _infeasible(problem, limit, n_workers, seed_value)
            elif not any(r.evaluation.feasible for r in results.values()):
                _infeasible(problem, limit, n_workers, seed_value)
        chosen = _chosen(results)
        result = results[chosen]

        # measurement (optional)
        kind = (oracle or ("des" if spec.oracle.kind == "command" else spec.oracle.kind)).lower()
        if kind not in ("des", "analytic", "none"):
            common.fail(f"--oracle: expected des, analytic or none (got {oracle!r})")
        measured: dict[str, object] = {}
        measure_note = None
        if kind != "none":
            overrides = {}
            if packets is not None and kind == "des":
                overrides["packets"] = _int(packets, "--packets", 100)
            try:
                measurer = cmp.Measurer(spec, problem, kind, seed=seed_value, **overrides)
                for name, r in results.items():
                    measured[name] = measurer.measure(to_plan(problem, r.candidate, name))
            except Exception as exc:  # the oracle is optional: report, keep the model's figures
                measure_note = f"simulation unavailable: {type(exc).__name__}: {exc}"
                measured = {}
        elif kind != "none":
            measure_note = "simulation not available (simulate.oracle could not be imported)"

        plan = to_plan(problem, result.candidate, chosen)
        if out is not None:
            try:
                plan.save(out)
            except OSError as exc:
                common.fail(f"cannot write {out}: {exc.strerror or exc}")

        ev = result.evaluation
        rows = [_row(problem, name, r, measured.get(name)) for name, r in results.items()]
        exit_code = common.EXIT_OK if ev.feasible else common.EXIT_NEGATIVE
        if json_output:
            common.emit_json({
                "spec": spec.name, "app": problem.app, "contexts": problem.n_contexts,
                "sequential_cycles": problem.cycles(problem.sequential),
                "critical_path_cycles": problem.cycles(problem.critical_path),
                "latency_max": None if problem.latency_max is None else problem.seconds(problem.latency_max),
                "latency_max_cycles": None if problem.latency_max is None else problem.cycles(problem.latency_max),
                "method": chosen, "status": result.status,
                "bound": None if result.bound is None else {
                    "period_cycles": problem.cycles(result.bound),
                    "throughput": result.throughput_bound(problem)},
                "gap": result.gap, "latency": ev.latency_seconds, "throughput": ev.throughput,
                "meets_bound": ev.feasible, "plan": plan.to_dict(), "comparison": rows,
                "trace": results["lata"].trace if "lata" in results else None,
                "notes": [n for n in [measure_note] if n],
                "written": str(out) if out is not None else None,
            })
            raise typer.Exit(exit_code)
        _print_text(spec, problem, results, chosen, rows, measured, measure_note, trace, out)
        if not ev.feasible:
            common.err_console.print(f"the {chosen} plan misses the latency bound {problem.describe_bound()} "
                                     f"(latency {format_cycles(ev.latency_cycles, problem.clock)})", markup=False)
        raise typer.Exit(exit_code)


def _print_text(spec, problem, results, chosen, rows, measured, measure_note, trace, out) -> None:
    from rich.table import Table

    from solver.pipeline.problem import format_cycles

    console = common.console
    result = results[chosen]
    ev = result.evaluation
    console.print(
        f"{spec.name}: `{problem.app}` ({problem.n} tasks, sequential "
        f"{format_cycles(problem.cycles(problem.sequential), problem.clock)}, critical path "
        f"{format_cycles(problem.cycles(problem.critical_path), problem.clock)}) on {problem.n_contexts} contexts; "
        f"L0 = {problem.describe_bound()}", markup=False, soft_wrap=True)
    status = result.status
    if result.gap is not None:
        status += f", gap {result.gap:.1%}"
    console.print(f"chosen: {chosen} ({status}): throughput {_fmt_thr(ev.throughput)} Mpps "
                  f"(period {ev.period_cycles:.6g} cycles), latency {_fmt_lat(ev.latency_seconds)} us, "
                  f"{ev.threads} threads", markup=False, soft_wrap=True)
    console.print("stages (tasks, replicas, time per packet, contexts):", markup=False)
    for line in _diagram(problem, result):
        console.print(line, markup=False, soft_wrap=True)
    from rich import box

    table = Table(title="comparison (closed form" + (", measured" if measured else "") + ")",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    for col, just in (("method", "left"), ("status", "left"), ("lat us", "right"), ("Mpps", "right"),
                      ("thr", "right"), ("L0", "center")):
        table.add_column(col, justify=just, no_wrap=True)
    if measured:
        kinds = {m.oracle for m in measured.values()}
        label = "sim" if kinds == {"des"} else "an."
        table.add_column(f"{label} lat us", justify="right", no_wrap=True)
        table.add_column(f"{label} Mpps", justify="right", no_wrap=True)
    for row in rows:
        cells = [row["method"] + ("*" if row["method"] == chosen else ""), row["status"].lower(),
                 _fmt_lat(row["latency"]), _fmt_thr(row["throughput"]), str(row["threads"]),
                 "ok" if row["meets_bound"] else "miss"]
        if measured:
            sim = row["simulated"]
            cells += ["-", "-"] if sim is None else [_fmt_lat(sim["latency_mean"]), _fmt_thr(sim["throughput"])]
        table.add_row(*cells)
    console.print(table)
    footnote = "* chosen; lat = closed-form latency (longest path), Mpps = clock / period"
    if measured:
        kinds = {m.oracle for m in measured.values()}
        footnote += ("; sim = simulation, saturated sources (queueing included)" if kinds == {"des"}
                     else "; an. = analytic model with resource contention")
    console.print(footnote, markup=False, soft_wrap=True)
    if measure_note:
        console.print(measure_note, markup=False)
    if trace and "lata" in results:
        console.print("LATA steps:", markup=False)
        for step in results["lata"].trace:
            console.print(f"  {step['step']:<10} {step['detail']}  (period {step['period']:.6g}, latency "
                          f"{step['latency']:.6g}, stage latency {step['stage_latency']:.6g} cycles, "
                          f"{step['threads']} threads)", markup=False, soft_wrap=True)
    if out is not None:
        console.print(f"plan written to {out}", markup=False)
