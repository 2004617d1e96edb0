"""The main job on a pipeline spec: solve, compare, certify, report (`solver.certify.job.run`
calls it for ``problem: pipeline``).

1. **Solve** with `solver.pipeline.job.solve_pipeline`: LATA, its five comparison systems and
   CP-SAT, every plan measured on the oracle (throughput saturated; latency at ``oracle.load`` of
   the plan's maximum rate, on which ``latency_max`` is checked); the chosen plan is CP-SAT's.
2. **Certify** the chosen plan with EVT like a binding (`solver.certify.run.certify`), the
   samples being pipeline plans (`solver.certify.pipeline_samples`: random valid plans or local
   optima of the pipeline closed form).  Known plans that can refute the estimate: every measured
   plan of the comparison and the best of `PROBES` local-search restarts measured on the oracle.
   CP-SAT's bound is on its pipeline model, which charges the binding closed form's contention
   but a replicated group's messages at its worst producer-consumer pair and group demands
   rounded up to a thousandth (`solver.pipeline.model`): a pessimistic model, so its bound on
   the period bounds no oracle; it is recorded for information (``applies: false``) and never
   certifies alone.
3. **Report**: plan.yaml, pinning.txt, certificate.json (the solve under ``"solve"``),
   samples.jsonl, report.html -- the same files as for bindings, each written atomically once
   its step has finished.

The certificate's objective is the throughput (LATA's: maximise it under the latency bound); a
pipeline spec asking for ``objective: latency`` is refused.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tasksolve import evt
from tasksolve.solver.certify.bounds import Rigorous
from tasksolve.solver.certify.job import write_plan_files
from tasksolve.solver.certify.outdir import holds_output_dir
from tasksolve.solver.certify.run import CertifyOutcome, certify
from tasksolve.solver.errors import SolverFailed
from tasksolve.solver.pipeline.problem import PipelineError
from tasksolve.specs import Spec
from tasksolve.specs.files import write_json_atomic

#: local-search restarts measured on the oracle as a known plan
PROBES = 10


@dataclass
class PipelineJobResult:
    """What `run_pipeline` produced (the same fields as `solver.certify.job.JobResult`)."""

    report: Any  # solver.pipeline.job.PipelineResult
    outcome: CertifyOutcome
    certificate: dict[str, Any]
    files: dict[str, Path] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


@holds_output_dir  # takes out_dir (lock, existing files, samples) before anything is written
def run_pipeline(
    spec: Spec,
    out_dir: Path,
    *,
    methods: list[str] | str = "all",
    time_limit: float | None = None,
    samples: int | None = None,
    target_gap: float | None = None,
    workers: int = 1,
    seed: int | None = None,
    oracle_kind: str | None = None,
    resume: bool = False,
    progress: bool = False,
    say: Callable[[str], None] | None = None,
    load: float | None = None,
    **certify_options: Any,
) -> PipelineJobResult:
    """Solve the pipeline problem of `spec`, certify the chosen plan, write the files (module
    docstring).  Options as `solver.certify.job.run`; `load` the offered load for latency."""
    from tasksolve.solver.pipeline.compare import spec_for_problem
    from tasksolve.solver.pipeline.job import solve_pipeline

    if spec.objective == "latency":
        raise PipelineError(
            "`objective: latency` on a pipeline spec: the pipeline methods maximise throughput under "
            "constraints.latency_max (LATA); use objective total_throughput and a latency bound"
        )
    out_dir = Path(out_dir)
    oracle_kind = oracle_kind or spec.oracle.kind
    seed = spec.search.seed if seed is None else seed
    clock = time.perf_counter()
    progress_steps = (lambda text, done, total: say(text)) if say else None
    job = solve_pipeline(
        spec,
        methods=methods,
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        oracle=oracle_kind,
        load=load,
        progress=progress_steps,
    )
    seconds = {"solve": time.perf_counter() - clock}
    if say:
        say("certifying the plan against the EVT-estimated optimum (pipeline samples)")
    clock = time.perf_counter()
    alone = spec_for_problem(spec, job.problem)
    known = known_plans(job)
    probed = probe(alone, job.problem, oracle_kind, seed)
    if probed is not None:
        known.append((f"best of {PROBES} local-search restarts", probed))
    try:
        certify_options.setdefault("balanced", 0)
        outcome = certify(
            alone,
            out_dir=out_dir,
            plan=job.plan,
            samples=samples,
            target_gap=target_gap,
            workers=workers,
            seed=seed,
            oracle_kind=oracle_kind,
            resume=resume,
            progress=progress,
            rigorous=rigorous(job),
            known=known,
            probes=0,
            pipeline=job.problem,
            **certify_options,
        )
    except evt.EVTError as exc:
        raise SolverFailed(f"the pipeline sample cannot be analysed: {exc}") from None
    seconds["certify"] = time.perf_counter() - clock
    clock = time.perf_counter()
    certificate = outcome.certificate.to_dict()
    certificate["solve"] = job.to_dict()
    files = write_plan_files(spec, job.plan, out_dir)  # after certify: a refused --resume writes nothing
    write_json_atomic(files["certificate.json"], certificate)
    _write_report(files["report.html"], spec, job, certificate, outcome)
    seconds["report"] = time.perf_counter() - clock
    return PipelineJobResult(job, outcome, certificate, files, seconds)


def known_plans(job) -> list[tuple[str, float]]:
    """Every plan of the comparison measured on the oracle that is in the samples' space -- within
    the latency bound on the closed form, as every sample is (label, throughput).  A plan over the
    bound (e.g. Parallel's) is faster and must not refute an estimate of the bounded optimum."""
    return [
        (f"{name} plan", float(m.throughput))
        for name, m in job.measured.items()
        if job.results[name].evaluation.feasible
    ]


def rigorous(job) -> Rigorous | None:
    """CP-SAT's bound on the pipeline closed form, for information (module docstring)."""
    result = job.results.get("cpsat")
    if result is None or result.status in (None, "NOT_RUN", "UNKNOWN", "MODEL_INVALID"):
        return None
    p = job.problem
    bound = None if result.bound is None else result.throughput_bound(p)
    objective = result.evaluation.throughput if result.evaluation.feasible else None
    return Rigorous(result.status, bound, "cpsat (pipeline closed form)", objective, None, [], applies=False)


def probe(spec, problem, oracle_kind: str, seed: int, restarts: int = PROBES) -> float | None:
    """The best throughput of `restarts` local optima (seeded random starts) on the oracle."""
    from tasksolve.simulate.oracle import make_oracle, plan_seed
    from tasksolve.solver.pipeline.local_search import climb
    from tasksolve.solver.pipeline.plans import to_plan
    from tasksolve.solver.pipeline.sampling import random_candidate

    oracle = make_oracle(spec, oracle_kind)
    best = None
    for i in range(restarts):
        try:
            start = random_candidate(problem, np.random.default_rng([seed, 0x70726F6265, i]))
            cand, _, _ = climb(problem, start)
            value = float(oracle.evaluate(to_plan(problem, cand, "probe"), seed=plan_seed(seed + 1, i)).throughput)
        except Exception:  # the probe is evidence, not a must
            continue
        best = value if best is None else max(best, value)
    return best


def comparison_rows(job) -> list[dict[str, Any]]:
    """The comparison in the report's form (`solver.report.html`: method, predicted, simulated,
    half_width, loss against the best measured plan within the latency bound); a plan over the
    bound on the closed form is marked so and has no loss."""
    rows = []
    for name, result in job.results.items():
        m = job.measured.get(name)
        label = (
            name + (" (chosen)" if name == job.chosen else "") + ("" if result.evaluation.feasible else " (over L0)")
        )
        rows.append(
            {
                "method": label,
                "predicted": result.evaluation.throughput,
                "simulated": None if m is None else m.throughput,
                "half_width": None if m is None else m.half_width,
                "feasible": result.evaluation.feasible,
            }
        )
    best = max((r["simulated"] for r in rows if r["simulated"] is not None and r["feasible"]), default=None)
    for r in rows:
        usable = best is not None and r["simulated"] is not None and r["feasible"]
        r["loss"] = 1.0 - r["simulated"] / best if usable else None
    return rows


def latency_table(job) -> str:
    """The latencies of every plan (HTML): the model's, the simulated saturated one and the one at
    the offered load, on which the bound is checked."""
    import html

    from tasksolve.solver.pipeline.job import measured_meets_bound
    from tasksolve.specs import display

    p = job.problem
    bound = display.seconds(p.seconds(p.latency_max)) if p.latency_max is not None else "none"
    rows = ""
    for name, result in job.results.items():
        m = job.measured.get(name)
        load = "-" if m is None or m.load is None else f"{m.load:.0%}"
        meets = measured_meets_bound(p, m)
        cells = [
            name,
            display.seconds(result.evaluation.latency_seconds),
            "-" if m is None else display.seconds(m.latency_mean),
            "-" if m is None or m.loaded_latency_mean is None else display.seconds(m.loaded_latency_mean),
            load,
            "-" if meets is None else ("yes" if meets else "no"),
        ]
        rows += "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>"
    return (
        f"<h3>Latency (bound {html.escape(bound)})</h3><p>Measured latency at the offered load (a share of each "
        "plan's maximum rate, found by bisection) is what the bound is checked on; with saturated sources every "
        "queue is full and the latency grows with the queues' capacity.</p><table><tr><th>method</th><th>model</th>"
        "<th>saturated</th><th>at load</th><th>load</th><th>within bound</th></tr>" + rows + "</table>"
    )


def _write_report(path: Path, spec: Spec, job, certificate: dict[str, Any], outcome: CertifyOutcome) -> None:
    from tasksolve.solver.report.html import write_report
    from tasksolve.solver.report.render import plan_text
    from tasksolve.specs.exporters.pinning import taskset_lines

    write_report(
        path,
        spec,
        job.plan,
        certificate,
        outcome.analysis,
        outcome.history,
        comparison_rows(job),
        plan_text(spec, job.plan),
        taskset_lines(spec, job.plan),
        methods_html=latency_table(job),
    )
