"""``tasksolve solve``: the best binding, proven for the closed form, selected on the oracle."""

from __future__ import annotations

from pathlib import Path

import typer

from tasksolve.solver.cli import options
from tasksolve.solver.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILURE,
    choices_or_fail,
    chosen_oracle,
    console,
    emit_json,
    err_console,
    fail,
    load_binding_spec_or_fail,
)
from tasksolve.solver.cli.progress import Phases
from tasksolve.specs.errors import PATH_MOST, shorten

RANDOM_PLANS = 5000  # `--random-plans` (`--samples` is the certificate's size in run and certify)
PLAN_TREE_MAX = 256  # threads: a larger plan is summarised in one line, not drawn as a tree


def solve_command(
    spec_path: str = options.spec_argument(),
    method: str | None = typer.Option(
        None,
        "--method",
        "-m",
        help="cpsat, blackbox, tsbsched, random, balanced, the pinning policies compact, compact-cores, "
        "scatter, distrib and os (unpinned), or all (comma-separated list allowed). Default: the spec's "
        "search.method.",
    ),
    top_k: int | None = typer.Option(
        None, "--top-k", "-k", min=1, help="CP-SAT: how many best distinct plans to measure. Default: search.top_k."
    ),
    time_limit: float | None = options.time_limit_option(
        "Time limit of the whole solve with CP-SAT: loading the spec, the random sample "
        "(at most 10%), CP-SAT's steps and K solves (the oracle's measurements and the predictors' "
        "profiling excepted)",
        "search.time_limit",
    ),
    workers: int | None = options.workers_option(),
    seed: int | None = options.seed_option(),
    oracle: str | None = options.oracle_option(),
    allow_commands: bool = options.allow_commands_option(),
    random_plans: int | None = typer.Option(
        None,
        "--random-plans",
        min=1,
        metavar="N",
        help=f"Random plans drawn for the hint, the random baseline and the predictors' candidates. "
        f"Default: {RANDOM_PLANS}.",
    ),
    old_samples: int | None = typer.Option(None, "--samples", min=1, hidden=True),
    deterministic: bool = options.deterministic_option(),
    zone: float = typer.Option(
        0.02,
        "--zone",
        min=0.001,
        max=0.5,
        help="On a noisy oracle (command): the indifference zone of the race of the finalists, relative "
        "(0.02: plans within 2% of the best are ties).",
    ),
    out: Path | None = options.out_dir_option(None, "the chosen plan (plan.yaml)"),
    as_json: bool = options.json_option(),
) -> None:
    """Find the best thread-to-context binding and compare it with the other methods.

    CP-SAT solves the closed-form model exactly (status, bound and gap are reported); its K best
    distinct plans are measured on the oracle and the best measured is the answer.  The table
    compares every method on the same oracle; loss is against the best measured.

    Exit code 0 with the answer, 2 on bad input (infeasible constraints included), 3 when the
    oracle fails or a solver step does (the plan is then printed, its bound and gap weaker),
    130 when interrupted.
    """
    import time

    started = time.perf_counter()  # the time limit counts from here: loading the spec included
    from tasksolve.solver.binding.compare import METHODS, Infeasible, solve

    samples = options.deprecated(random_plans, old_samples, "`solve --samples`", "--random-plans", RANDOM_PLANS)
    spec = load_binding_spec_or_fail(spec_path)
    settings = spec.search
    methods = choices_or_fail(method or settings.method, METHODS)
    oracle = chosen_oracle(oracle, spec, allow_commands)
    top_k = top_k or settings.top_k
    time_limit = time_limit or settings.time_limit
    workers = options.resolve_workers(workers, spec)
    seed = settings.seed if seed is None else seed
    quiet = as_json

    try:
        with Phases(enabled=not quiet) as progress:
            report = solve(
                spec,
                methods,
                oracle_kind=oracle,
                top_k=top_k,
                time_limit=time_limit,
                workers=workers,
                seed=seed,
                samples=samples,
                deterministic=deterministic,
                zone=zone,
                progress=progress,
                started=started,
            )
    except Infeasible as exc:  # located already where it names a field of the spec's file
        fail(str(exc) if str(exc).startswith(f"{spec.source}:") else f"{spec_path}: {exc}", EXIT_BAD_INPUT)
    if out is not None and report.plan is not None:
        out = out / "plan.yaml"
        report.plan.save(out, spec)
    if as_json:
        emit_json(report.to_dict())
    else:
        _print_report(spec, report, out)
    if report.failed_steps:
        err_console.print(
            f"error: solver step(s) failed: {', '.join(report.failed_steps)}; the plan is valid "
            "but its bound and gap are weaker than they should be",
            markup=False,
        )
        raise typer.Exit(EXIT_FAILURE)


def _print_report(spec, report, out, plan=None, label: str | None = None) -> None:
    """The comparison table, CP-SAT's line and the plan's tree: the report's answer, or `plan`
    (`label` naming it) where the main job adopted another."""
    from rich.table import Table

    from tasksolve.solver.report.render import plan_tree
    from tasksolve.specs import display
    from tasksolve.specs.objective import Objective

    objective = Objective.of(report.objective)
    floor = ""
    if report.noise is not None:
        console.print(report.noise.headline(objective), markup=False)
        if report.noise.noise_floor is not None:
            floor = f", host noise floor {report.noise.noise_floor:.1%}"
    # a line of its own, not the table's title: rich wraps a title to the table's width
    console.print(
        f"{spec.name}: {objective.name} ({len(spec.threads)} threads on {spec.topology.name}{floor})", markup=False
    )
    table = Table()
    show_hw = any(half_width_cell(row, objective) for row in report.comparison)
    columns = ["method", "model", "measured"] + (["±"] if show_hw else []) + ["loss"]
    for column in columns:
        table.add_column(column, justify="left" if column == "method" else "right", no_wrap=True)
    rows = []
    for row, entry in zip(report.comparison, report.to_dict()["comparison"]):
        loss = entry.get("loss")
        cells = [row.method, objective.format(row.predicted), objective.format(row.simulated)]
        cells += ([half_width_cell(row, objective)] if show_hw else []) + [f"{loss:.1%}" if loss is not None else ""]
        table.add_row(*cells)
        rows.append(dict(zip(columns, cells)))
    _print_table_or_list(table, rows)
    for row in report.comparison:
        if row.note:
            console.print(f"  {row.method}: {row.note}", markup=False)
    if report.policy_gain is not None:
        console.print(f"the {report.method} plan: {report.policy_gain.sentence(objective)}", markup=False)
    if report.status != "NOT_RUN":
        gap = display.share(report.gap)
        cpsat = report.details.cpsat
        source = cpsat.bound_source if cpsat else "cpsat"
        if report.model_objective is None:  # no plan from CP-SAT: it has no row and claims nothing
            console.print(f"CP-SAT: {report.status}, no plan", markup=False)
        else:
            console.print(
                f"CP-SAT: {report.status}, model objective {objective.format(report.model_objective)}, "
                f"bound {objective.format(report.bound)}{'' if source == 'cpsat' else f' ({source})'}, gap {gap}",
                markup=False,
            )
        for note in cpsat.notes if cpsat else []:
            console.print(f"  {note}", markup=False)
        for step in cpsat.steps if cpsat else []:
            if step["outcome"] in ("failed", "no answer in time"):
                console.print(
                    f"  {step['step']}: {step['outcome']}" + (f" ({step['detail']})" if step["detail"] else ""),
                    markup=False,
                )
    if report.noise is not None and report.noise.ties:
        console.print(
            f"  ties with the chosen plan (within the {report.noise.zone:.0%} zone, or not told apart "
            f"within oracle.budget): {', '.join(report.noise.ties)}",
            markup=False,
        )
    plan, label = (plan, label) if plan is not None else (report.plan, report.method)
    if len(plan.bindings) > PLAN_TREE_MAX:  # a tree of thousands of lines takes seconds and no one reads it
        console.print(
            f"chosen plan ({label}): {len(plan.bindings)} threads, not listed above "
            f"{PLAN_TREE_MAX}; --out DIR writes plan.yaml, --json prints it",
            markup=False,
        )
    else:
        console.print(plan_tree(spec, plan, title=f"chosen plan ({label})"))
    if out is not None:
        console.print(f"plan written to {shorten(str(out), PATH_MOST)}", markup=False)


def register(app: typer.Typer) -> None:
    app.command("solve")(solve_command)


def _print_table_or_list(table, rows: list[dict[str, str]]) -> None:
    """The comparison as a table where the terminal holds it, else one line per method (a table
    squeezed below its width cuts every figure to ``3.966 M…``)."""
    from rich.measure import Measurement

    if Measurement.get(console, console.options.update_width(10_000), table).maximum <= console.width:
        console.print(table)
        return
    for row in rows:
        hw = f" ± {row['±']}" if row.get("±") else ""
        loss = f", loss {row['loss']}" if row["loss"] else ""
        console.print(f"{row['method']}: measured {row['measured']}{hw} (model {row['model']}){loss}", markup=False)


def half_width_cell(row, objective) -> str:
    """A comparison row's 95% half-width as printed (two significant digits, `specs.display`):
    empty where there is none or where it is a deterministic run's float noise (under a millionth
    of the figure: "0.000000005457 pps")."""
    from tasksolve.specs import display

    if not row.half_width or not row.simulated or abs(row.half_width) <= 1e-6 * abs(row.simulated):
        return ""
    return display.half_width(row.half_width, objective.unit)
