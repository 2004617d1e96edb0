"""`tasksolve evt`: estimate the optimum of a column of numbers with Extreme Value Theory."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from tasksolve.solver.cli import common


def _number(text: str, option: str, *, integer: bool = False) -> float:
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        kind = "an integer" if integer else "a number"
        common.fail(f"{option} must be {kind} (got {text!r})")
    if not math.isfinite(value):
        common.fail(f"{option} must be finite (got {text!r})")
    return value


_HELP = (
    "Estimate the best possible value of a sample and how far its best value is from it."
    "\n\n"
    "Peaks over threshold: a Generalized Pareto fit of the values beyond a threshold, the upper "
    "endpoint (lower with --minimize) with a profile-likelihood interval (Wilks), goodness of "
    "fit, and flags where the estimate should not be trusted. The gap is the relative distance "
    "of the best observed value from the estimate and from the interval's far limit."
    "\n\n"
    "Exit code 2 on unreadable or unusable input (empty file, text, NaN/inf, fewer than 20 "
    "values, constant sample)."
)


def _settings(confidence: str, max_fraction: str, gof_bootstrap: str, seed: str, threshold: str):
    """The numeric options, checked: (confidence, max fraction, bootstrap refits, seed)."""
    conf = _number(confidence, "--confidence")
    frac = _number(max_fraction, "--max-fraction")
    boot = int(_number(gof_bootstrap, "--gof-bootstrap", integer=True))
    seed_value = int(_number(seed, "--seed", integer=True))
    if boot < 0:
        common.fail("--gof-bootstrap must be 0 or more")
    if seed_value < 0:
        common.fail("--seed must be 0 or more")
    if threshold.strip().lower() != "auto":
        _number(threshold, "--threshold")
    return conf, frac, boot, seed_value


def _write_plots(result, folder: Path | None) -> list[Path]:
    """The diagnostic plots written into `folder` (none without --plots)."""
    if folder is None:
        return []
    from tasksolve.evt import plots as evt_plots

    try:
        return evt_plots.write_plots(result, folder)
    except OSError as exc:
        common.fail(f"cannot write plots into {folder}: {exc.strerror or exc}")


def evt_command(
    samples: Path = typer.Argument(
        ...,
        metavar="SAMPLES",
        show_default=False,
        help="File of values: CSV with a header row, JSON lines, or one number per line.",
    ),
    column: str | None = typer.Option(
        None,
        "--column",
        metavar="NAME",
        help="Column (CSV) or key (JSON lines) holding the values; needed when there are several.",
    ),
    minimize: bool = typer.Option(
        False, "--minimize", help="Smaller is better (latency, cost): estimate the lower endpoint."
    ),
    confidence: str = typer.Option(
        "0.95",
        "--confidence",
        metavar="LEVEL",
        help="Confidence level of the profile-likelihood interval, in (0, 1).",
    ),
    threshold: str = typer.Option(
        "auto",
        "--threshold",
        metavar="auto|VALUE",
        help="Threshold of the peaks-over-threshold fit: 'auto' (screened candidates, see "
        "the JSON 'threshold_choice') or a value in the sample's units.",
    ),
    max_fraction: str = typer.Option(
        "0.05",
        "--max-fraction",
        metavar="FRACTION",
        help="With --threshold auto: largest share of the sample beyond the threshold.",
    ),
    plots: Path | None = typer.Option(
        None,
        "--plots",
        metavar="DIR",
        help="Write the ECDF, mean-excess, QQ and profile-likelihood plots (PNG and SVG) into DIR.",
    ),
    gof_bootstrap: str = typer.Option(
        "200",
        "--gof-bootstrap",
        metavar="N",
        help="Parametric-bootstrap refits for the goodness-of-fit p-values (0: none).",
    ),
    seed: str = typer.Option("0", "--seed", metavar="SEED", help="Seed of the bootstrap (results are deterministic)."),
    json_output: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Estimate the best possible value of a sample (see `_HELP`)."""
    from tasksolve import evt

    conf, frac, boot, seed_value = _settings(confidence, max_fraction, gof_bootstrap, seed, threshold)
    try:
        values = evt.read_samples(samples, column)
        result = evt.analyze(
            values,
            minimize=minimize,
            confidence=conf,
            threshold=threshold,
            max_fraction=frac,
            gof_bootstrap=boot,
            seed=seed_value,
        )
    except evt.EVTError as exc:
        common.fail(str(exc))
    except Exception as exc:  # a bug, reported as one line rather than a traceback
        common.fail(f"evt analysis failed: {type(exc).__name__}: {exc}", common.EXIT_FAILURE)

    written = _write_plots(result, plots)
    if json_output:
        data = result.to_dict()
        data["source"] = {"file": str(samples), "column": column}
        if plots is not None:
            data["plots"] = [str(p) for p in written]
        common.emit_json(data)
        return
    common.console.print(result.summary(), markup=False, highlight=False, soft_wrap=True)
    if written:
        common.console.print(f"plots: {len(written)} files in {plots}", markup=False)


def register(app: typer.Typer) -> None:
    """Attach the `evt` command to the `tasksolve` application."""
    app.command("evt", help=_HELP)(evt_command)
