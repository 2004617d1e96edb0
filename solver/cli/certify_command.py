"""``tasksolve certify`` and ``tasksolve run`` (the main job)."""

from __future__ import annotations

from pathlib import Path

import typer

from solver.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_NEGATIVE,
    console,
    emit_json,
    err_console,
    check_oracle_kind,
    choices_or_fail,
    fail,
    load_binding_spec_or_fail,
    spec_error_text,
)

DEFAULT_WORKERS = 0  # 0: every core


def _workers(value: int) -> int:
    import os

    return value if value > 0 else (os.cpu_count() or 1)


def _parse_gap(text: str | None) -> float | None:
    if text is None:
        return None
    from specs.units import UnitError, parse_fraction

    try:
        value = parse_fraction(text)
    except UnitError as exc:
        fail(f"--target-gap: {exc}")
    if value <= 0:
        fail("--target-gap must be positive, e.g. 1% or 0.01")
    return value


def _load_plan(path: Path, spec):
    from specs import SpecError, load_plan

    try:
        return load_plan(path, spec)
    except SpecError as exc:
        fail(spec_error_text(exc))


def _check_start(out: Path, resume: bool, force: bool) -> None:
    """Before a long solve: refuse what the certification would refuse after it."""
    from solver.certify.service import SamplingError, check_start

    try:
        check_start(out / "samples.jsonl", resume, force)
    except SamplingError as exc:
        fail(str(exc))


def _run_certify(spec, out: Path, *, plan=None, samples=None, target_gap=None, confidence=None, n_init=None,
                 n_delta=None, max_samples=None, workers=0, seed=0, oracle="des", resume=False, quiet=False,
                 scheduler=None, force=False):
    import evt
    from simulate.errors import OracleError
    from simulate.executor import ExecutorError
    from solver.certify.run import certify
    from solver.samplers import SamplerError

    try:
        return certify(spec, out_dir=out, plan=plan, samples=samples, target_gap=target_gap, confidence=confidence,
                       n_init=n_init, n_delta=n_delta, max_samples=max_samples, workers=_workers(workers),
                       seed=seed, oracle_kind=oracle, resume=resume, progress=not quiet, scheduler=scheduler,
                       force=force)
    except KeyboardInterrupt:
        fail(f"interrupted: every finished measurement is in {out / 'samples.jsonl'}; "
             "continue with the same command and --resume", EXIT_INTERRUPTED)
    except evt.EVTError as exc:
        fail(f"the random sample cannot be analysed: {exc}", EXIT_FAILURE)
    except SamplerError as exc:
        fail(f"cannot draw random plans: {exc}")
    except ExecutorError as exc:
        fail(f"the measurements failed: {exc}", EXIT_FAILURE)
    except OracleError as exc:
        fail(f"the {oracle} oracle failed: {exc}", EXIT_FAILURE)
    except ValueError as exc:
        fail(str(exc))


def certify_command(
    spec_path: str = typer.Argument(..., metavar="SPEC", help="A spec file or built-in example name."),
    plan_path: Path | None = typer.Option(None, "--plan", help="The plan to certify (default: the best random plan)."),
    samples: int | None = typer.Option(None, "--samples", min=20, help="Fixed sample size (default: the spec's certify.samples)."),
    target_gap: str | None = typer.Option(None, "--target-gap", help="Run the sequential algorithm until within this gap (1% or 0.01)."),
    confidence: float | None = typer.Option(None, "--confidence", min=0.5, max=0.999, help="Confidence of the optimum's interval."),
    n_init: int | None = typer.Option(None, "--n-init", min=20, help="Sequential: first sample size."),
    n_delta: int | None = typer.Option(None, "--n-delta", min=1, help="Sequential: plans added per step."),
    max_samples: int | None = typer.Option(None, "--max-samples", min=20, help="Sequential: stop after this many plans."),
    workers: int = typer.Option(DEFAULT_WORKERS, "--workers", min=0, help="Worker processes (0: every core). The sample does not depend on it."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the random plans and of the simulation. Default: search.seed."),
    oracle: str | None = typer.Option(None, "--oracle", help="des (simulation) or analytic (closed form). Default: oracle.kind."),
    resume: bool = typer.Option(False, "--resume", help="Continue from OUT/samples.jsonl instead of starting afresh."),
    force: bool = typer.Option(False, "--force", help="Discard the samples already in OUT/samples.jsonl."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Measure on a Dask cluster: its scheduler's address (tcp://host:8786)."),
    out: Path = typer.Option(Path("tasksolve-out"), "--out", "-o", help="Directory for samples.jsonl and certificate.json."),
    as_json: bool = typer.Option(False, "--json", help="Print the certificate as JSON on stdout."),
) -> None:
    """Certify a plan against the optimum estimated by Extreme Value Theory from random plans.

    Exit code 0 when the verdict is `certified` or `exceeds_estimate`, 1 otherwise.
    """
    from solver.cli.common import write_json_atomic

    spec = load_binding_spec_or_fail(spec_path)
    oracle = check_oracle_kind(oracle or spec.oracle.kind)
    seed = spec.search.seed if seed is None else seed
    plan = _load_plan(plan_path, spec) if plan_path else None
    outcome = _run_certify(spec, out, plan=plan, samples=samples, target_gap=_parse_gap(target_gap),
                           confidence=confidence, n_init=n_init, n_delta=n_delta, max_samples=max_samples,
                           workers=workers, seed=seed, oracle=oracle, resume=resume, quiet=as_json,
                           scheduler=scheduler, force=force)
    certificate = outcome.certificate.to_dict()
    write_json_atomic(out / "certificate.json", certificate)
    if as_json:
        emit_json(certificate)
    else:
        console.print(outcome.certificate.summary(), markup=False)
        console.print(f"wrote {out / 'certificate.json'} and {outcome.service.path}", markup=False)
    if outcome.certificate.verdict not in ("certified", "exceeds_estimate"):
        raise typer.Exit(EXIT_NEGATIVE)


def run_command(
    spec_path: str = typer.Argument(..., metavar="SPEC", help="A spec file or built-in example name."),
    out: Path = typer.Option(Path("tasksolve-out"), "--out", "-o", help="Directory for plan.yaml, certificate.json, samples.jsonl, report.html."),
    methods: str = typer.Option("all", "--methods", help="Methods to compare: all, or a comma-separated list (cpsat always runs)."),
    time_limit: float | None = typer.Option(None, "--time-limit", min=0.1, help="CP-SAT time limit in seconds. Default: search.time_limit."),
    samples: int | None = typer.Option(None, "--samples", min=20, help="Random plans for the certificate (default: the spec's certify.samples)."),
    target_gap: str | None = typer.Option(None, "--target-gap", help="Sample sequentially until the best random plan is within this gap."),
    workers: int = typer.Option(DEFAULT_WORKERS, "--workers", min=0, help="Worker processes and CP-SAT workers (0: every core)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of everything random. Default: search.seed."),
    oracle: str | None = typer.Option(None, "--oracle", help="des (simulation) or analytic (closed form). Default: oracle.kind."),
    resume: bool = typer.Option(False, "--resume", help="Reuse the samples already in OUT/samples.jsonl."),
    force: bool = typer.Option(False, "--force", help="Discard the samples already in OUT/samples.jsonl."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Measure the random plans on a Dask cluster: its scheduler's address."),
    as_json: bool = typer.Option(False, "--json", help="Print the solve report and the certificate as JSON."),
) -> None:
    """The main job: solve (CP-SAT + selection on the oracle), compare methods, certify, report.

    Writes OUT/plan.yaml, OUT/certificate.json, OUT/samples.jsonl and OUT/report.html (one
    self-contained page).  Exit code 0 when the plan is certified (or beats the estimate), 1 when
    not, 2 on bad input, 3 when an oracle or the solver fails.
    """
    from solver.cli.common import write_json_atomic
    from solver.certify.report import write_report
    from solver.render import plan_text, taskset_lines
    from solver.solve import METHODS, Infeasible, solve

    spec = load_binding_spec_or_fail(spec_path)
    oracle = check_oracle_kind(oracle or spec.oracle.kind)
    time_limit = time_limit or spec.search.time_limit
    seed = spec.search.seed if seed is None else seed
    chosen = [m for m in METHODS if m == "cpsat" or m in choices_or_fail(methods, METHODS)]
    n_workers = _workers(workers)
    _check_start(out, resume, force)

    def progress(message: str) -> None:
        if not as_json:
            err_console.print(f"[dim]{message}[/]")

    try:
        report = solve(spec, chosen, oracle_kind=oracle, time_limit=time_limit, workers=n_workers, seed=seed,
                       samples=min(2000, spec.certify.samples), progress=progress)
    except Infeasible as exc:
        fail(f"{spec_path}: {exc}", EXIT_BAD_INPUT)
    out.mkdir(parents=True, exist_ok=True)
    report.plan.save(out / "plan.yaml")
    progress("certifying the plan against the EVT-estimated optimum")
    outcome = _run_certify(spec, out, plan=report.plan, samples=samples, target_gap=_parse_gap(target_gap),
                           workers=workers, seed=seed, oracle=oracle, resume=resume, quiet=as_json,
                           scheduler=scheduler, force=force)
    certificate = outcome.certificate.to_dict()
    certificate["solve"] = report.to_dict()
    write_json_atomic(out / "certificate.json", certificate)
    comparison = report.to_dict()["comparison"]
    write_report(out / "report.html", spec, report.plan, certificate, outcome.analysis, outcome.history,
                 comparison, plan_text(spec, report.plan), taskset_lines(spec, report.plan))
    if as_json:
        emit_json({"solve": report.to_dict(), "certificate": outcome.certificate.to_dict(),
                   "files": {name: str(out / name) for name in ("plan.yaml", "certificate.json", "samples.jsonl", "report.html")}})
    else:
        from solver.cli.solve_command import _print_report

        _print_report(spec, report, out / "plan.yaml")
        console.print(outcome.certificate.summary(), markup=False)
        console.print(f"wrote {out}/plan.yaml, certificate.json, samples.jsonl, report.html", markup=False)
    if outcome.certificate.verdict not in ("certified", "exceeds_estimate"):
        raise typer.Exit(EXIT_NEGATIVE)


def register(app: typer.Typer) -> None:
    app.command("certify")(certify_command)
    app.command("run")(run_command)
