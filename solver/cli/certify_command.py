"""``tasksolve certify`` and ``tasksolve run`` (the main job)."""

from __future__ import annotations

from pathlib import Path

import typer

from tasksolve.simulate.registry import DEFAULT_KIND
from tasksolve.solver.certify.job import DEFAULT_METHODS
from tasksolve.solver.cli import options
from tasksolve.solver.cli.common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_NEGATIVE,
    check_oracle_kind,
    choices_or_fail,
    console,
    emit_json,
    err_console,
    fail,
    load_binding_spec_or_fail,
    load_spec_or_fail,
    spec_error_text,
)
from tasksolve.solver.cli.progress import Phases


def _parse_gap(text: str | None) -> float | None:
    return options.parse_share(text, "--target-gap", lambda v: v > 0, "must be positive, e.g. 1% or 0.01")


def _load_plan(path: Path, spec):
    from tasksolve.specs import SpecError, load_plan

    try:
        return load_plan(path, spec)
    except SpecError as exc:
        fail(spec_error_text(exc))


def _run_certify(
    spec,
    out: Path,
    *,
    plan=None,
    samples=None,
    target_gap=None,
    confidence=None,
    n_init=None,
    n_delta=None,
    max_samples=None,
    workers=None,
    seed=0,
    oracle=DEFAULT_KIND,
    resume=False,
    quiet=False,
    force=False,
    scheduler=None,
    design="local-optima",
    time_limit=None,
    compare_samples=None,
):
    from tasksolve import evt
    from tasksolve.simulate.errors import OracleError
    from tasksolve.simulate.executor import ExecutorError
    from tasksolve.solver.binding.samplers import SamplerError
    from tasksolve.solver.certify.bounds import closed_form_bound
    from tasksolve.solver.certify.run import certify

    workers = options.resolve_workers(workers, spec)
    try:
        rigorous = None
        if oracle == "analytic":  # the closed form: CP-SAT's bound is a proof (solver.certify.bounds)
            rigorous = closed_form_bound(
                spec, time_limit=time_limit or spec.search.time_limit, workers=workers, seed=seed
            )
        return certify(
            spec,
            out_dir=out,
            plan=plan,
            samples=samples,
            target_gap=target_gap,
            confidence=confidence,
            n_init=n_init,
            n_delta=n_delta,
            max_samples=max_samples,
            workers=workers,
            seed=seed,
            oracle_kind=oracle,
            resume=resume,
            progress=not quiet,
            force=force,
            scheduler=scheduler,
            design=design,
            rigorous=rigorous,
            compare_samples=compare_samples,
        )
    except KeyboardInterrupt:
        fail(
            f"interrupted: every finished measurement is in {out / 'samples.jsonl'}; "
            "continue with the same command and --resume",
            EXIT_INTERRUPTED,
        )
    except evt.EVTError as exc:
        fail(f"the random sample cannot be analysed: {exc}", EXIT_FAILURE)
    except SamplerError as exc:
        fail(f"cannot draw random plans: {exc}")
    except ExecutorError as exc:
        fail(f"the measurements failed: {exc}", EXIT_FAILURE)
    except OracleError as exc:
        fail(f"the {oracle} oracle failed: {exc}", EXIT_FAILURE)


def certify_command(
    spec_path: str = options.spec_argument(),
    plan_path: Path | None = options.plan_option("The plan to certify (default: the best random plan)."),
    samples: int | None = options.samples_option(),
    target_gap: str | None = options.target_gap_option(),
    confidence: float | None = typer.Option(
        None, "--confidence", min=0.5, max=0.999, help="Confidence of the optimum's interval."
    ),
    n_init: int | None = typer.Option(None, "--n-init", min=20, help="Sequential: first sample size."),
    n_delta: int | None = typer.Option(None, "--n-delta", min=1, help="Sequential: plans added per step."),
    max_samples: int | None = typer.Option(
        None, "--max-samples", min=20, help="Sequential: stop after this many plans."
    ),
    workers: int | None = options.workers_option(),
    seed: int | None = options.seed_option(),
    oracle: str | None = options.oracle_option(),
    resume: bool = options.resume_option(),
    force: bool = options.force_option(),
    scheduler: str | None = options.scheduler_option(),
    out: Path = options.out_dir_option(Path("tasksolve-out"), "samples.jsonl and certificate.json"),
    design: str = options.design_option(),
    time_limit: float | None = options.time_limit_option(),
    compare_samples: int | None = options.compare_samples_option(),
    as_json: bool = options.json_option(),
) -> None:
    """Certify a plan against the optimum estimated by Extreme Value Theory, and against CP-SAT's
    bound on the closed form (--oracle analytic).

    Exit code 0 only when the verdict is `certified`, 1 otherwise (not certified, estimate
    refuted, no finite optimum).
    """
    from tasksolve.solver.cli.common import write_json_atomic

    spec = load_binding_spec_or_fail(spec_path)
    oracle = check_oracle_kind(oracle or spec.oracle.kind)
    seed = spec.search.seed if seed is None else seed
    plan = _load_plan(plan_path, spec) if plan_path else None
    outcome = _run_certify(
        spec,
        out,
        plan=plan,
        samples=samples,
        target_gap=_parse_gap(target_gap),
        confidence=confidence,
        n_init=n_init,
        n_delta=n_delta,
        max_samples=max_samples,
        workers=workers,
        seed=seed,
        oracle=oracle,
        resume=resume,
        quiet=as_json,
        force=force,
        scheduler=scheduler,
        design=options.check_design(design),
        time_limit=time_limit,
        compare_samples=compare_samples,
    )
    certificate = outcome.certificate.to_dict()
    write_json_atomic(out / "certificate.json", certificate)
    if as_json:
        emit_json(certificate)
    else:
        console.print(outcome.certificate.summary(), markup=False)
        console.print(f"wrote {out / 'certificate.json'} and {outcome.service.path}", markup=False)
    if not outcome.certificate.positive:
        raise typer.Exit(EXIT_NEGATIVE)


def run_command(
    spec_path: str = options.spec_argument(),
    out: Path = options.out_dir_option(
        Path("tasksolve-out"), "plan.yaml, certificate.json, samples.jsonl and report.html"
    ),
    methods: str = typer.Option(
        ",".join(DEFAULT_METHODS),
        "--method",
        "--methods",
        "-m",
        help="Methods to compare: all, or a comma-separated list (cpsat always runs). "
        "tsbsched and blackbox profile on the oracle first and take minutes.",
    ),
    time_limit: float | None = options.time_limit_option(),
    samples: int | None = options.samples_option(),
    target_gap: str | None = options.target_gap_option(),
    workers: int | None = options.workers_option(),
    seed: int | None = options.seed_option(),
    oracle: str | None = options.oracle_option(),
    resume: bool = options.resume_option(),
    force: bool = options.force_option(),
    scheduler: str | None = options.scheduler_option(),
    design: str = options.design_option(),
    compare_samples: int | None = options.compare_samples_option(),
    load: str | None = options.load_option(),
    as_json: bool = options.json_option(),
) -> None:
    """The main job: solve (CP-SAT + selection on the oracle), compare methods, certify, report.

    On a pipeline spec: LATA, its comparison systems and CP-SAT, measured (latency at --load of
    each plan's maximum rate), the chosen plan certified against random pipeline plans or local
    optima (--design).

    Writes OUT/plan.yaml, OUT/certificate.json, OUT/samples.jsonl and OUT/report.html (one
    self-contained page).  Exit code 0 only when the plan is certified, 1 when not (or when the
    estimate is refuted), 2 on bad input, 3 when an oracle or a solver step fails.
    """
    from tasksolve.solver.binding.compare import METHODS
    from tasksolve.solver.certify.job import run

    spec = load_spec_or_fail(spec_path)
    oracle = check_oracle_kind(oracle or spec.oracle.kind)
    pipeline = spec.problem == "pipeline"
    extra = {"load": options.parse_load(load)} if pipeline else {}
    if load is not None and not pipeline:
        fail("--load applies to pipeline specs (latency at an offered load)")

    try:
        with Phases(enabled=not as_json) as say:
            result = run(
                spec,
                out,
                methods=_pipeline_methods(methods) if pipeline else choices_or_fail(methods, METHODS),
                time_limit=time_limit,
                samples=samples,
                target_gap=_parse_gap(target_gap),
                workers=options.resolve_workers(workers, spec),
                seed=seed,
                oracle_kind=oracle,
                resume=resume,
                progress=not as_json,
                say=say,
                force=force,
                scheduler=scheduler,
                design=options.check_design(design),
                compare_samples=compare_samples,
                **extra,
            )
    except KeyboardInterrupt:
        fail(
            f"interrupted: every finished measurement is in {out / 'samples.jsonl'}; "
            "continue with the same command and --resume",
            EXIT_INTERRUPTED,
        )
    if as_json:
        emit_json(
            {
                "solve": result.report.to_dict(),
                "certificate": result.outcome.certificate.to_dict(),
                "files": {name: str(path) for name, path in result.files.items()},
            }
        )
    else:
        if pipeline:
            from tasksolve.solver.cli.pipeline_command import _print_job

            _print_job(result.report, False)
        else:
            from tasksolve.solver.cli.solve_command import _print_report

            _print_report(spec, result.report, result.files["plan.yaml"])
        console.print(result.outcome.certificate.summary(), markup=False)
        console.print(f"wrote {out}/plan.yaml, certificate.json, samples.jsonl, report.html, pinning.txt", markup=False)
    if getattr(result.report, "failed_steps", None):
        err_console.print(f"error: solver step(s) failed: {', '.join(result.report.failed_steps)}", markup=False)
        raise typer.Exit(EXIT_FAILURE)
    if not result.outcome.certificate.positive:
        raise typer.Exit(EXIT_NEGATIVE)


def _pipeline_methods(text: str) -> list[str]:
    """--method on a pipeline spec: the binding default means every pipeline method."""
    from tasksolve.solver.pipeline.job import parse_methods

    return parse_methods("all" if text == ",".join(DEFAULT_METHODS) else text)


def register(app: typer.Typer) -> None:
    app.command("certify")(certify_command)
    app.command("run")(run_command)
