"""Certify a plan: measure random plans, estimate the optimum with EVT, compare (ASPLOS'12).

Without a target gap, `certify` fits EVT to a fixed number of random plans; with one, it runs the
sequential algorithm (ASPLOS'12 Figure 13, `evt.sequential`) over the sampling service: N_init
plans, then N_delta more at a time, until the best observed plan is within the target gap of the
estimated optimum at the stated confidence, or `max_samples`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tasksolve import evt
from tasksolve.simulate.oracle import make_oracle
from tasksolve.simulate.registry import DEFAULT_KIND
from tasksolve.solver.binding.samplers import balanced_plans
from tasksolve.solver.certify.bounds import Rigorous
from tasksolve.solver.certify.certificate import DEFAULT_TARGET_GAP, Certificate, versions
from tasksolve.solver.certify.designs import DEFAULT_DESIGN, DEFAULT_SAMPLES, PROBES, probe
from tasksolve.solver.certify.outdir import take_output_dir
from tasksolve.solver.certify.records import all_failed
from tasksolve.solver.certify.service import SamplingService, objective_value
from tasksolve.solver.certify.verdict import Evidence, decide
from tasksolve.specs import Plan, Spec


@dataclass
class CertifyOutcome:
    certificate: Certificate
    analysis: Any  # evt.EVTResult (None if the sample could not be analysed)
    history: Any  # evt.SequentialResult or None
    service: SamplingService


class _Progress:
    """A rich progress bar with the best value so far and the current estimate."""

    def __init__(self, enabled: bool, total: int, minimize: bool, unit: Callable[[float], str]) -> None:
        self.enabled = enabled
        self.minimize = minimize
        self.unit = unit
        self.best: float | None = None
        self.estimate: str = "-"
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("[bold]sampling"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                transient=False,
                console=Console(stderr=True),  # progress on stderr only: stdout holds results
            )
            self.task = self.bar.add_task("", total=total)

    def __enter__(self):
        if self.enabled:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.bar.__exit__(*exc)

    def advance(self, k: int, service: SamplingService) -> None:
        if not self.enabled:
            return
        best = service.best(minimize=self.minimize)
        text = f"best {self.unit(best.value)}" if best else ""
        self.bar.update(self.task, advance=k, description=f"{text}  estimate {self.estimate}")

    def set_total(self, total: int) -> None:
        if self.enabled:
            self.bar.update(self.task, total=total)

    def set_completed(self, done: int) -> None:
        if self.enabled:
            self.bar.update(self.task, completed=done)


def format_value(objective: str) -> Callable[[float], str]:
    if objective == "latency":
        return lambda v: f"{v * 1e6:.3f} us"
    return lambda v: f"{v / 1e6:.4f} Mpps"


def certify(spec: Spec, *, out_dir: Path, compare_samples: int | None = 0, **options: Any) -> CertifyOutcome:
    """Measure, estimate, compare; `out_dir/samples.jsonl` keeps every measurement.

    The options are `_certify`'s; `compare_samples` plans of the other design give its estimate
    beside the certificate's (`certificate.designs`; None: `solver.certify.compare.resolve`).  The output
    directory is locked for the whole run (a second run into it fails at once, naming this one's PID)."""
    taken = take_output_dir(out_dir, resume=options.get("resume", False), force=options.get("force", False))
    try:
        outcome = _certify(spec, out_dir=out_dir, **options)
        options.setdefault("oracle_kind", DEFAULT_KIND)
        from tasksolve.solver.certify.compare import compare_designs, resolve

        compare_samples = resolve(compare_samples, options["oracle_kind"], outcome.certificate.samples["n"])
        if compare_samples:
            outcome.certificate.designs = compare_designs(spec, out_dir, outcome.certificate, compare_samples, options)
        return outcome
    finally:
        taken.release()


def _certify(
    spec: Spec,
    *,
    out_dir: Path,
    plan: Plan | None = None,
    samples: int | None = None,
    target_gap: float | None = None,
    confidence: float | None = None,
    n_init: int | None = None,
    n_delta: int | None = None,
    max_samples: int | None = None,
    workers: int = 1,
    seed: int = 0,
    oracle_kind: str = DEFAULT_KIND,
    resume: bool = False,
    progress: bool = False,
    balanced: int = 10,
    timeout: float | None = None,
    oracle_factory: Callable[[Spec], Any] | None = None,
    scheduler: Any = None,
    force: bool = False,
    design: str = DEFAULT_DESIGN,
    rigorous: Rigorous | None = None,
    known: list[tuple[str, float]] | None = None,
    probes: int = PROBES,
    pipeline: Any = None,
) -> CertifyOutcome:
    """`resume` continues the samples file of the same sample, `force` discards one
    (`SamplingService.open`); `scheduler` measures on a Dask cluster (`simulate.executor`).
    `design` is the sampling design (`solver.certify.service.DESIGNS`); `rigorous` the solver's
    bound (`solver.certify.bounds`); `known` more plans measured on the same oracle
    (label, value): any of them better than the interval's far limit refutes the estimate;
    `probes` local-search restarts are measured as one more known plan (`designs.probe`);
    `pipeline` (a `PipelineProblem`) samples pipeline plans (`solver.certify.pipeline_samples`):
    then `plan` is required and `probes` must be 0 (the caller measures its own)."""
    if pipeline is not None and (plan is None or probes):
        raise ValueError("certifying a pipeline needs the plan, and no binding probes")
    settings = spec.certify
    objective = spec.objective
    minimize = objective == "latency"
    confidence = confidence if confidence is not None else settings.confidence
    sequential_mode = target_gap is not None
    n_fixed = samples or settings.samples or DEFAULT_SAMPLES.get(design, DEFAULT_SAMPLES["random"])
    n_init = n_init or settings.n_init
    n_delta = n_delta or settings.n_delta
    limit = (max_samples or settings.max_samples) if sequential_mode else n_fixed
    if sequential_mode and limit < n_init:
        raise ValueError(f"max samples ({limit}) is below n_init ({n_init})")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    service = SamplingService(
        spec,
        out_dir / "samples.jsonl",
        seed=seed,
        oracle_kind=oracle_kind,
        workers=workers,
        max_samples=limit,
        timeout=timeout,
        objective=objective,
        oracle_factory=oracle_factory,
        scheduler=scheduler,
        design=design,
        pipeline=pipeline,
    )
    service.open(resume=resume, force=force)

    unit = format_value(objective)
    bar = _Progress(progress, n_init if sequential_mode else n_fixed, minimize, unit)
    with bar:
        bar.set_completed(len(service.records))
        if sequential_mode:
            analysis, why_not, history, n_used = _sequential(
                service,
                bar,
                n_init=n_init,
                n_delta=n_delta,
                target_gap=target_gap,
                confidence=confidence,
                limit=limit,
                minimize=minimize,
                seed=seed,
                unit=unit,
            )
        else:
            service.ensure(n_fixed, on_progress=lambda d: bar.advance(d, service))
            n_used, history = n_fixed, None
            analysis, why_not = _analyze(service.values(n_fixed), minimize, confidence, seed)
    if not service.ok_records(n_used):  # nothing measured: exit 3 with the failures summarised
        raise all_failed(service.failures(n_used), service.path)

    oracle = oracle_factory(spec) if oracle_factory else make_oracle(spec, oracle_kind)
    if plan is None:
        best = service.best(n_used, minimize=minimize)
        plan = Plan.from_contexts(spec, best.contexts, method="best random")
    measured = oracle.evaluate(plan, seed=seed)
    plan_value = objective_value(measured, objective)
    values = service.values(n_used)
    chosen_gap = target_gap if target_gap is not None else (settings.target_gap or DEFAULT_TARGET_GAP)
    known_plans = _known_plans(
        spec,
        oracle,
        values,
        plan_value,
        minimize=minimize,
        seed=seed,
        probes=probes,
        screen=oracle_kind != "analytic",
        known=known,
        rigorous=rigorous,
    )
    atom = evt.top_atom(values, minimize=minimize, confidence=confidence) if values.size else None
    evidence = _evidence(
        analysis,
        why_not,
        atom,
        values,
        plan_value,
        known_plans,
        minimize=minimize,
        target_gap=chosen_gap,
        confidence=confidence,
        rigorous=rigorous,
        oracle_kind=oracle_kind,
        show=unit,
    )
    decision = decide(evidence, show=unit)
    certificate = Certificate(
        spec=spec.name,
        objective=objective,
        plan=plan.to_dict(),
        plan_performance={
            "value": plan_value,
            "half_width": measured.half_width if not minimize else measured.latency_half_width,
            "throughput": measured.throughput,
            "latency_mean": measured.latency_mean,
            "oracle": measured.oracle,
        },
        samples={
            "n": int(values.size),
            "failed": len(service.failures(n_used)),
            "requested": int(n_used),
            "file": str(service.path),
            "best": float(values.max() if not minimize else values.min()),
            "oracle": oracle_kind,
            "sequential": sequential_mode,
            "design": design,
        },
        optimum={
            "estimate": evidence.estimate,
            "lower": evidence.lower,
            "upper": evidence.upper,
            "confidence": confidence,
            "top_atom": atom.to_dict() if atom else None,
            "beat_bound": evt.beat_bound(int(values.size), confidence) if values.size else None,
        },
        gap={**decision.gaps, "words": decision.words},
        target_gap=chosen_gap,
        verdict=decision.verdict,
        basis=decision.basis,
        sentence=decision.sentence,
        reasons=decision.reasons,
        design=design,
        bound=rigorous.to_dict() if rigorous else None,
        known_plans=[{"plan": label, "value": value} for label, value in known_plans],
        flags=list(evidence.flags),
        seed=seed,
        versions=versions(),
        baselines=_baselines(spec, values, minimize, balanced, seed, oracle, objective, design),
        evt=analysis.to_dict() if analysis is not None else {"error": why_not},
        sequential=[step.__dict__ if hasattr(step, "__dict__") else step for step in history.steps]
        if history
        else None,
    )
    return CertifyOutcome(certificate, analysis, history, service)


def _sequential(
    service: SamplingService,
    bar: _Progress,
    *,
    n_init: int,
    n_delta: int,
    target_gap: float,
    confidence: float,
    limit: int,
    minimize: bool,
    seed: int,
    unit,
):
    """ASPLOS'12 Figure 13 over the sampling service: (analysis, why not, history, samples used)."""
    cursor = {"next": 0}

    def sampler(k: int) -> np.ndarray:
        values: list[float] = []
        while len(values) < k:
            start = cursor["next"]
            if start >= limit:
                raise evt.EVTError("the sampling limit was reached before enough plans were measured")
            want = min(limit, start + (k - len(values)))
            bar.set_total(max(want, n_init))
            service.ensure(want, on_progress=lambda d: bar.advance(d, service))
            if not service.ok_records(want):
                raise all_failed(service.failures(want), service.path)
            values += [service.records[i].value for i in range(start, want) if service.records[i].status == "ok"]
            cursor["next"] = want
        _refresh_estimate(bar, service, minimize, confidence, unit)
        return np.array(values[:k])

    history = evt.sequential(
        sampler,
        n_init=n_init,
        n_delta=n_delta,
        target_gap=target_gap,
        confidence=confidence,
        max_n=limit,
        minimize=minimize,
        seed=seed,
    )
    analysis = history.result
    why_not = None if analysis is not None else "no step of the sequential algorithm could be analysed"
    return analysis, why_not, history, cursor["next"]


def _known_plans(
    spec: Spec,
    oracle,
    values: np.ndarray,
    plan_value: float,
    *,
    minimize: bool,
    seed: int,
    probes: int,
    screen: bool,
    known,
    rigorous: Rigorous | None,
) -> list[tuple[str, float]]:
    """Every plan measured on the same oracle that can refute the estimate (label, value): the best
    sample, the caller's, the local-search probe, CP-SAT's plan, and the certified plan itself."""
    objective = spec.objective
    best_sampled = float(values.max() if not minimize else values.min())
    known_plans = [("best sampled plan", best_sampled)] + list(known or [])
    probed = probe(spec, oracle, objective, seed, probes, screen=screen) if probes else None
    if probed is not None:
        known_plans.append((f"best of {probes} local-search restarts", probed[0]))
    if rigorous is not None and rigorous.applies and rigorous.objective is not None:
        known_plans.append(("CP-SAT plan", rigorous.objective))
    known_plans.append(("certified plan itself", plan_value))
    return known_plans


def _evidence(
    analysis,
    why_not: str | None,
    atom,
    values: np.ndarray,
    plan_value: float,
    known_plans,
    *,
    minimize: bool,
    target_gap: float,
    confidence: float,
    rigorous: Rigorous | None,
    oracle_kind: str,
    show: Callable[[float], str] = str,
) -> Evidence:
    """What the verdict rules (`solver.certify.verdict`) decide from.  When the best value is an
    atom (`evt.atom`), the GPD's interval is replaced by what the sample supports: the best value,
    and an interval open on the side of improvement."""
    nan = math.nan
    estimate, lower, upper = (
        (nan, nan, nan) if analysis is None else (analysis.estimate, analysis.lower, analysis.upper)
    )
    if atom is not None:
        estimate, (lower, upper) = atom.best, atom.interval
    applies = rigorous is not None and rigorous.applies
    return Evidence(
        plan_value=plan_value,
        minimize=minimize,
        target_gap=target_gap,
        n=int(values.size),
        estimate=estimate,
        lower=lower,
        upper=upper,
        confidence=confidence,
        flags=("unanalysable",) if analysis is None else tuple(analysis.flags),
        known=known_plans,
        unanalysable=why_not,
        top_atom=atom.sentence(show) if atom is not None else None,
        bound=rigorous.bound if applies else None,
        bound_source=rigorous.bound_source if applies else None,
        proven_optimum=rigorous.proven_optimum if applies else None,
        failed_steps=list(rigorous.failed_steps) if rigorous else [],
        oracle=oracle_kind,
    )


def _analyze(values: np.ndarray, minimize: bool, confidence: float, seed: int) -> tuple[Any, str | None]:
    """`evt.analyze`, or (None, why) when the sample has no tail to model (e.g. every local
    optimum has the same value): the verdict then rests on the rigorous bound alone."""
    try:
        return evt.analyze(values, minimize=minimize, confidence=confidence, seed=seed), None
    except evt.EVTError as exc:
        return None, str(exc)


def _refresh_estimate(bar: _Progress, service: SamplingService, minimize: bool, confidence: float, unit) -> None:
    values = service.values()
    if not bar.enabled or values.size < 100:
        return
    try:
        result = evt.analyze(values, minimize=minimize, confidence=confidence, gof_bootstrap=0)
        bar.estimate = unit(result.estimate) if math.isfinite(result.estimate) else "none"
    except evt.EVTError:
        bar.estimate = "-"


def _baselines(
    spec: Spec,
    values: np.ndarray,
    minimize: bool,
    balanced: int,
    seed: int,
    oracle,
    objective: str,
    design: str = "random",
) -> list[dict[str, Any]]:
    worst = values.max() if minimize else values.min()
    name = "random" if design == "random" else "local optima"
    rows = [
        {"method": f"{name} (average)", "value": float(values.mean())},
        {"method": f"{name} (worst)", "value": float(worst)},
    ]
    if balanced:
        plans = balanced_plans(spec, balanced, seed)
        if len(plans):
            measured = [oracle.evaluate(Plan.from_contexts(spec, [int(c) for c in row]), seed=seed) for row in plans]
            vals = np.array([objective_value(m, objective) for m in measured])
            rows.append({"method": f"balanced (average of {len(vals)})", "value": float(vals.mean())})
            rows.append(
                {"method": f"balanced (worst of {len(vals)})", "value": float(vals.max() if minimize else vals.min())}
            )
    return rows
