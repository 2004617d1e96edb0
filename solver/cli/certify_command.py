"""``tasksolve certify`` and ``tasksolve run``: parse, call the main job (`solver.job`), print."""

from __future__ import annotations

from pathlib import Path

import typer

from tasksolve.solver.cli import options
from tasksolve.solver.cli.common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_NEGATIVE,
    chosen_oracle,
    console,
    emit_json,
    err_console,
    fail,
    load_binding_spec_or_fail,
    load_spec_or_fail,
    spec_error_text,
)
from tasksolve.solver.cli.progress import Phases
from tasksolve.specs.errors import PATH_MOST, shorten


def _parse_gap(text: str | None) -> float | None:
    return options.parse_share(text, "--target-gap", lambda v: v > 0, "must be positive, e.g. 1% or 0.01")


def _load_plan(path: Path, spec):
    from tasksolve.specs import SpecError, load_plan

    try:
        return load_plan(path, spec)
    except SpecError as exc:
        fail(spec_error_text(exc))


def _run_job(job, out: Path):
    """`job.run()`; Ctrl-C becomes one message saying how to continue (while sampling: how many
    finished measurements the samples file keeps, `SamplingInterrupted`)."""
    try:
        return job.run()
    except KeyboardInterrupt as exc:
        fail(
            getattr(exc, "command_line", None)
            or f"interrupted: every finished measurement is in {out / 'samples.jsonl'}; "
            "continue with the same command and --resume",
            EXIT_INTERRUPTED,
        )


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
    allow_commands: bool = options.allow_commands_option(),
    resume: bool = options.resume_option(),
    force: bool = options.force_option(),
    scheduler: str | None = options.scheduler_option(),
    out: Path = options.out_dir_option(Path("tasksolve-out"), "samples.jsonl and certificate.json"),
    design: str = options.design_option(),
    time_limit: float | None = options.time_limit_option(),
    compare_samples: int | None = options.compare_samples_option(),
    deterministic: bool = options.deterministic_option(),
    as_json: bool = options.json_option(),
) -> None:
    """Certify a plan against the optimum estimated by Extreme Value Theory, and against CP-SAT's
    bound on the closed form (--oracle analytic).

    Exit code 0 when the verdict is positive (proven, certified, best_found), 1 when it is
    negative (not_certified, refuted, no_finite_optimum), 2 on bad input, 3 when the oracle fails
    or every sample does, 130 when interrupted (the finished samples are kept: continue with
    --resume).
    """
    from tasksolve.solver.job import Job, JobSettings
    from tasksolve.solver.job.given import GivenPlan

    spec = load_binding_spec_or_fail(spec_path)
    plan = _load_plan(plan_path, spec) if plan_path else None
    settings = JobSettings.resolve(
        spec,
        samples=samples,
        target_gap=_parse_gap(target_gap),
        confidence=confidence,
        n_init=n_init,
        n_delta=n_delta,
        max_samples=max_samples,
        workers=options.resolve_workers(workers, spec),
        seed=seed,
        oracle_kind=chosen_oracle(oracle, spec, allow_commands),
        resume=resume,
        force=force,
        progress=not as_json,
        scheduler=scheduler,
        design=options.check_design(design),
        time_limit=time_limit,
        compare_samples=compare_samples,
        deterministic=deterministic,
    )
    result = _run_job(Job(spec, out, settings, strategy=GivenPlan(spec, settings, plan)), out)
    if as_json:
        emit_json(result.certificate_dict())
    else:
        console.print(result.certificate.summary(), markup=False)
        console.print(
            f"wrote {shorten(str(result.files['certificate.json']), PATH_MOST)} and {shorten(str(result.files['samples.jsonl']), PATH_MOST)}",
            markup=False,
        )
    if not result.positive:
        raise typer.Exit(EXIT_NEGATIVE)


def run_command(
    spec_path: str = options.spec_argument(),
    out: Path = options.out_dir_option(
        Path("tasksolve-out"), "plan.yaml, certificate.json, samples.jsonl and report.html"
    ),
    methods: str | None = typer.Option(
        None,
        "--method",
        "--methods",
        "-m",
        show_default=False,
        help="Methods to compare: all, or a comma-separated list (cpsat always runs). Default: "
        "cpsat,random,balanced and the pinning policies compact,compact-cores,scatter,distrib on a binding spec "
        "(os, the unpinned run, where named; tsbsched and blackbox profile on the oracle first and "
        "take minutes), every pipeline method on a pipeline spec.",
    ),
    time_limit: float | None = options.time_limit_option(),
    samples: int | None = options.samples_option(),
    target_gap: str | None = options.target_gap_option(),
    workers: int | None = options.workers_option(),
    seed: int | None = options.seed_option(),
    oracle: str | None = options.oracle_option(),
    allow_commands: bool = options.allow_commands_option(),
    resume: bool = options.resume_option(),
    force: bool = options.force_option(),
    scheduler: str | None = options.scheduler_option(),
    design: str = options.design_option(),
    compare_samples: int | None = options.compare_samples_option(),
    load: str | None = options.load_option(),
    deterministic: bool = options.deterministic_option(),
    zone: float = typer.Option(
        0.02,
        "--zone",
        min=0.001,
        max=0.5,
        help="Binding specs on a noisy oracle (command): the race's indifference zone, relative "
        "(plans within it of the best are ties).",
    ),
    as_json: bool = options.json_option(),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="Print only the answer: the verdict's sentence, the verdict and the plan's value."
    ),
) -> None:
    """The main job: solve (CP-SAT + selection on the oracle), compare methods, certify, report.

    On a pipeline spec: LATA, its comparison systems and CP-SAT, measured (latency at --load of
    each plan's maximum rate), the chosen plan certified against random pipeline plans or local
    optima (--design).

    Writes OUT/plan.yaml, OUT/certificate.json, OUT/samples.jsonl and OUT/report.html (one
    self-contained page).  Exit code 0 when the verdict is positive (proven, certified,
    best_found), 1 when it is negative (not_certified, refuted, no_finite_optimum), 2 on bad
    input, 3 when an oracle or a solver step fails (whatever the verdict), 130 when interrupted
    (the finished samples are kept: continue with --resume).
    """
    from tasksolve.solver.job import Job, JobSettings

    spec = load_spec_or_fail(spec_path)
    settings = JobSettings.resolve(
        spec,
        methods,
        time_limit=time_limit,
        samples=samples,
        target_gap=_parse_gap(target_gap),
        workers=options.resolve_workers(workers, spec),
        seed=seed,
        oracle_kind=chosen_oracle(oracle, spec, allow_commands),
        resume=resume,
        force=force,
        progress=not as_json,
        scheduler=scheduler,
        design=options.check_design(design),
        compare_samples=compare_samples,
        load=options.parse_load(load),
        deterministic=deterministic,
        zone=zone if spec.problem == "binding" else None,
    )
    with Phases(enabled=not as_json) as say:
        result = _run_job(Job(spec, out, settings, say=say), out)
    if as_json:
        emit_json(result.to_dict())
    else:
        _print_run(spec, result, out, quiet)
    if result.failed_steps:
        err_console.print(f"error: solver step(s) failed: {', '.join(result.failed_steps)}", markup=False)
        raise typer.Exit(EXIT_FAILURE)
    if not result.positive:
        raise typer.Exit(EXIT_NEGATIVE)


def _print_run(spec, result, out: Path, quiet: bool) -> None:
    """The answer first -- the verdict's sentence, the verdict and its exit code, the plan's value,
    the files -- then, unless `quiet`, the comparison table and the plan tree as ``solve`` prints
    them, and the certificate's evidence."""
    from tasksolve.solver.certify.summary import answer_lines, evidence_lines

    cert = result.certificate
    lines = answer_lines(cert)
    gain = result.solve.policy_gain if result.kind == "binding" else None
    if gain is not None:  # what the plan gives over the pinning a person would otherwise use
        from tasksolve.specs.objective import Objective

        lines.append(f"the {result.solve.method} plan: {gain.sentence(Objective.of(cert.objective))}")
    if result.adopted:
        lines.append(result.adopted)
    console.print("\n".join(lines), markup=False)
    console.print(
        f"wrote {shorten(str(out), PATH_MOST)}/plan.yaml, certificate.json, samples.jsonl, report.html, pinning.txt",
        markup=False,
    )
    if quiet:
        return
    console.print()
    if result.kind == "pipeline":
        from tasksolve.solver.cli.pipeline_command import _print_job

        _print_job(result.solve, False)
    else:
        from tasksolve.solver.cli.solve_command import _print_report

        adopted = (result.plan, "met while certifying") if result.adopted else ()
        _print_report(spec, result.solve, None, *adopted)
    console.print()
    console.print("\n".join(evidence_lines(cert)), markup=False)


def register(app: typer.Typer) -> None:
    app.command("certify")(certify_command)
    app.command("run")(run_command)
