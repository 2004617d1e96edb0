"""``tasksolve calibrate``: fit a spec's task cycles and demands to plans measured on an oracle."""

from __future__ import annotations

from pathlib import Path

import typer

from tasksolve.solver.cli import options
from tasksolve.solver.cli.common import (
    EXIT_NEGATIVE,
    chosen_oracle,
    console,
    emit_json,
    err_console,
    fail,
    load_spec_or_fail,
)
from tasksolve.specs.errors import PATH_MOST, shorten
from tasksolve.specs.oracles import noun

DEFAULT_OUTPUT = Path("calibrated.yaml")


def calibrate(
    spec_path: str = options.spec_argument(),
    oracle: str | None = options.oracle_option(),
    allow_commands: bool = options.allow_commands_option(),
    plans: int = typer.Option(
        100, "--plans", min=1, help="Random plans to measure (besides a packed and a few balanced ones)."
    ),
    starts: int = typer.Option(8, "--starts", min=0, help="Random starts of the fit besides the spec's own values."),
    all_resources: bool = typer.Option(
        False, "--all-resources", help="Fit every task's demand on every resource, not only those it lists."
    ),
    fit_communication: bool = typer.Option(
        False,
        "--fit-communication",
        help="Fit the cycles of a message at each level of the topology too (the spec's communication).",
    ),
    output: Path | None = options.output_file_option("the calibrated spec", DEFAULT_OUTPUT),
    old_out: Path | None = options.old_out_file_option(),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace the --output file if it exists, and write the fit even when the spec's own values "
        "describe the measurements better.",
    ),
    seed: int | None = options.seed_option(),
    workers: int | None = options.workers_option(),
    as_json: bool = options.json_option(),
) -> None:
    """Measure plans on an oracle and fit each task's cycles and demands so that the closed form
    reproduces them; write the calibrated spec.

    With --oracle command the measurements are the user's program; with des, the simulation.
    Parameters the experiments cannot tell apart (a demand on a resource no plan saturates) are
    reported as not identified and keep the spec's values.  A fit that describes the measurements
    worse than the spec's own values is not written unless --force (exit 1, both errors shown).
    Exit code 0 on success, 1 when the fit is worse than the spec, 2 on bad input, 3 when the
    oracle fails.
    """
    from tasksolve.solver.calibration import calibrate as run_calibration
    from tasksolve.solver.cli.progress import Phases
    from tasksolve.specs.display import share
    from tasksolve.specs.files import write_text_atomic
    from tasksolve.specs.loader import dump_spec

    out = options.deprecated(output, old_out, "--out FILE", "--output FILE", DEFAULT_OUTPUT)
    spec = load_spec_or_fail(spec_path)
    if out.exists() and not force:
        fail(f"{out} exists; give --force to replace it, or another --output")
    kind = chosen_oracle(oracle, spec, allow_commands)
    with Phases(enabled=not as_json) as say:
        result = run_calibration(
            spec,
            oracle_kind=kind,
            plans=plans,
            starts=starts,
            seed=options.resolve_seed(seed, spec),
            workers=options.resolve_workers(workers, spec),
            fit_all_resources=all_resources,
            fit_communication=fit_communication,
            progress=say,
        )
    refused = result.fit.worse_than_spec and not force
    if refused:
        if as_json:
            emit_json({**result.to_dict(), "out": None, "written": False})
        else:
            _print(result, None)
        err_console.print(
            f"error: the fit describes the measurements worse than {spec.name}'s own values (rms "
            f"{share(result.fit.rms)} vs {share(result.fit.rms_before)}); {out} not written (--force writes it)",
            markup=False,
        )
        raise typer.Exit(EXIT_NEGATIVE)
    header = (
        f"# {spec.name} calibrated on the {noun(kind)} from {len(result.plans)} measured plans "
        f"(tasksolve calibrate): rms relative error {share(result.fit.rms)}, worst {share(result.fit.worst)}\n"
        f"# identified by the measurements: {', '.join(result.fit.identified) or 'none'}; the rest keep the spec's values\n"
    )
    write_text_atomic(out, header + dump_spec(result.spec))
    if as_json:
        emit_json({**result.to_dict(), "out": str(out), "written": True})
        return
    _print(result, out)


def _print(result, out: Path | None) -> None:
    from rich.table import Table

    from tasksolve.specs.display import share

    fit = result.fit
    table = Table(
        title=f"{result.spec.name}: fitted on {len(result.plans)} plans ({result.oracle} oracle"
        + (", thread times" if result.thread_times else ", throughputs only")
        + ")"
    )
    for column in ("parameter", "spec", "fitted", "identified"):
        table.add_column(column, justify="left" if column == "parameter" else "right")
    for p in fit.parameters:
        table.add_row(
            p.parameter.name, f"{p.prior:.4g}", f"{p.value:.4g}", "yes" if p.identified else "no: kept the spec's value"
        )
    console.print(table)
    before = float((fit.prior_residuals**2).mean() ** 0.5)
    console.print(
        f"relative error of the instance throughputs: rms {share(fit.rms)}, worst {share(fit.worst)} "
        f"(with the spec's values: rms {share(before)})",
        markup=False,
    )
    identified = ", ".join(fit.identified) or "none"
    console.print(f"identified by the measurements: {identified}", markup=False)
    if fit.warning:
        console.print(f"warning: {fit.warning}", markup=False)
    if out is not None:
        console.print(f"wrote {shorten(str(out), PATH_MOST)}", markup=False)


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate)
