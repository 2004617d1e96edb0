"""The main job as a library call: solve, compare the methods, certify, write the report.

`run` is what ``tasksolve run`` and the benchmarks call (docs/design.md, "Purpose"): it writes
into one output directory

* ``plan.yaml`` -- the chosen binding (CP-SAT's K best, selected on the oracle);
* ``samples.jsonl`` -- every sample measured for the certificate (resumable; random plans or
  local optima, see `solver.certify.designs`);
* ``certificate.json`` -- the certificate, with the solve report under ``"solve"``; the solve
  report's bound (`solver.certify.bounds.from_report`) and its measured plans go into the verdict;
* ``report.html`` -- one self-contained page (plan, comparison, certificate and plots);
* ``pinning.txt`` -- the plan as ``taskset`` lines (``tasksolve pin`` writes other formats).

A pipeline spec (``problem: pipeline``) goes to `solver.certify.pipeline_job.run_pipeline`:
the pipeline methods instead of the binding ones, pipeline plans as samples, the same files.

Every file is written atomically, and nothing is written before the step that produces it has
finished, so an interruption never leaves a half-written file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tasksolve import evt
from tasksolve.solver.binding.compare import METHODS, SolveReport, solve
from tasksolve.solver.certify.bounds import from_report
from tasksolve.solver.certify.designs import DEFAULT_SAMPLES
from tasksolve.solver.certify.outdir import holds_output_dir
from tasksolve.solver.certify.run import CertifyOutcome, certify
from tasksolve.solver.errors import SolverFailed
from tasksolve.specs import Spec
from tasksolve.specs.exporters.pinning import pinning_text
from tasksolve.specs.files import write_json_atomic, write_text_atomic

# What `tasksolve run` compares unless told otherwise: the methods that finish in about a minute
# on the 24-thread examples. TSBSched and BlackBox profile with the oracle first, which takes
# minutes on the simulation: ask for them with `methods`.
DEFAULT_METHODS = ("cpsat", "random", "balanced")
FILES = ("plan.yaml", "certificate.json", "samples.jsonl", "report.html")


@dataclass
class JobResult:
    """What `run` produced; `files` maps each file's name to its path, `seconds` each phase's
    wall time (``solve``, ``certify``, ``report``)."""

    report: SolveReport
    outcome: CertifyOutcome
    certificate: dict[str, Any]
    files: dict[str, Path] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


@holds_output_dir  # takes out_dir (lock, existing files, samples) before anything is written
def run(
    spec: Spec,
    out_dir: Path,
    *,
    methods: tuple[str, ...] | list[str] = DEFAULT_METHODS,
    time_limit: float | None = None,
    samples: int | None = None,
    target_gap: float | None = None,
    workers: int = 1,
    seed: int | None = None,
    oracle_kind: str | None = None,
    resume: bool = False,
    progress: bool = False,
    say: Callable[[str], None] | None = None,
    solve_samples: int | None = None,
    **certify_options: Any,
) -> JobResult:
    """Solve `spec`, certify the chosen plan and write the four files into `out_dir`.

    Defaults come from the spec's ``search``, ``oracle`` and ``certify`` sections. CP-SAT always
    runs (its plan is the answer); `methods` adds the others to the comparison. `say` receives
    one line per phase; `progress` shows the sampling progress bar.  A pipeline spec is solved by
    the pipeline methods (`methods` then names those of `solver.pipeline.compare`; the binding
    default means all of them) and certified with pipeline samples (`pipeline_job.run_pipeline`).
    """
    if spec.problem == "pipeline":
        from tasksolve.solver.certify.pipeline_job import run_pipeline

        return run_pipeline(
            spec,
            out_dir,
            methods="all" if tuple(methods) == DEFAULT_METHODS else list(methods),
            time_limit=time_limit,
            samples=samples,
            target_gap=target_gap,
            workers=workers,
            seed=seed,
            oracle_kind=oracle_kind,
            resume=resume,
            progress=progress,
            say=say,
            **certify_options,
        )
    out_dir = Path(out_dir)
    oracle_kind = oracle_kind or spec.oracle.kind
    time_limit = time_limit or spec.search.time_limit
    seed = spec.search.seed if seed is None else seed
    chosen = [m for m in METHODS if m == "cpsat" or m in methods]
    clock = time.perf_counter()
    seconds: dict[str, float] = {}
    report = solve(
        spec,
        chosen,
        oracle_kind=oracle_kind,
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        samples=solve_samples or min(2000, spec.certify.samples or DEFAULT_SAMPLES["random"]),
        progress=say,
    )
    seconds["solve"] = time.perf_counter() - clock
    if say:
        say("certifying the plan against the EVT-estimated optimum")
    clock = time.perf_counter()
    try:
        # the comparison already measured balanced plans: the certificate does not measure others
        certify_options.setdefault("balanced", 0)
        outcome = certify(
            spec,
            out_dir=out_dir,
            plan=report.plan,
            samples=samples,
            target_gap=target_gap,
            workers=workers,
            seed=seed,
            oracle_kind=oracle_kind,
            resume=resume,
            progress=progress,
            rigorous=from_report(report, oracle_kind),
            known=known_plans(report),
            **certify_options,
        )
    except evt.EVTError as exc:
        raise SolverFailed(f"the random sample cannot be analysed: {exc}") from None
    seconds["certify"] = time.perf_counter() - clock
    clock = time.perf_counter()
    certificate = outcome.certificate.to_dict()
    certificate["solve"] = report.to_dict()
    files = write_plan_files(spec, report.plan, out_dir)  # after certify: a refused --resume writes nothing
    write_json_atomic(files["certificate.json"], certificate)
    _write_report(files["report.html"], spec, report, certificate, outcome)
    seconds["report"] = time.perf_counter() - clock
    return JobResult(report, outcome, certificate, files, seconds)


def write_plan_files(spec: Spec, plan, out_dir: Path) -> dict[str, Path]:
    """The main job's output files by name, `plan.yaml` and `pinning.txt` (taskset lines)
    written, each atomically."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {name: out_dir / name for name in FILES}
    plan.save(files["plan.yaml"])
    files["pinning.txt"] = out_dir / "pinning.txt"
    write_text_atomic(files["pinning.txt"], pinning_text(spec, plan, "taskset"))
    return files


def known_plans(report: SolveReport) -> list[tuple[str, float]]:
    """Every plan of the comparison measured on the oracle (label, value in the samples' orientation)."""
    from tasksolve.solver.certify.service import objective_value

    out = []
    for row in report.comparison:
        if row.contexts is not None and row.simulated is not None:
            value = -row.simulated if report.objective == "latency" else row.simulated
            out.append((f"{row.method} plan", float(value)))
    if report.measured is not None:
        out.append((f"{report.method} answer", float(objective_value(report.measured, report.objective))))
    return out


def _write_report(
    path: Path, spec: Spec, report: SolveReport, certificate: dict[str, Any], outcome: CertifyOutcome
) -> None:
    from tasksolve.solver.report.html import write_report
    from tasksolve.solver.report.render import plan_text
    from tasksolve.specs.exporters.pinning import taskset_lines

    solved = report.to_dict()
    curves = {
        m: solved["details"][m]["selection_loss"]
        for m in ("tsbsched", "blackbox")
        if solved["details"].get(m, {}).get("selection_loss")
    }
    write_report(
        path,
        spec,
        report.plan,
        certificate,
        outcome.analysis,
        outcome.history,
        solved["comparison"],
        plan_text(spec, report.plan),
        taskset_lines(spec, report.plan),
        selection_curves=curves,
    )
