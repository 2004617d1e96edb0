"""Certify a plan: measure samples, decide the verdict, write the certificate (ASPLOS'12).

Sampling stops on the verdict's own rules (`solver.certify.verdict`): the sequential algorithm
(ASPLOS'12 Figure 13, `evt.sequential`) runs over the sampling service with a stopping rule that
builds the evidence at every step and stops once the verdict is *decided* (`decided`): positive,
settled by the solver's evidence that more samples cannot change, or unable to saturate (an atom
at the top that too few draws reach) -- never on a GPD fit the verdict would reject.  With a
target gap (``--target-gap``): N_init samples, then N_delta more, up to `max_samples`.  Without one, a fixed sample of ``--samples`` plans; on the default path (no
``--samples``, the local-optima design) the fixed size (the spec's ``certify.samples``, else 1000) is a ceiling and sampling stops
adaptively (`ADAPTIVE_INIT` restarts, then `ADAPTIVE_STEP` more) once the verdict is decided.
On the adaptive and sequential paths the certify phase has a time budget (`solver.certify.budget`):
sampling that has not decided the verdict by its deadline stops on a prefix of the stream, and
the certificate says so (`SamplesSummary.stopped`, a sentence after the verdict's).  A plan not
yet `proven` on the simulation gets `solver.certify.measured_bound`.  While the verdict is
undecided the finalists climb on the oracle itself (`solver.certify.finalists`), and the plan's
class gets more runs where its noise decides the verdict (`measure.precise`).

Every plan the run measures itself -- the plan, the probe's restarts, the balanced baselines --
goes through the same `solver.certify.measure.ClassOracle` as the samples (one measurement per
placement class, seeded by the class), so the plan and a sample of its class have one value.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tasksolve import evt
from tasksolve.simulate.oracle import make_oracle
from tasksolve.simulate.registry import DEFAULT_KIND
from tasksolve.solver.certify import assemble
from tasksolve.solver.certify.budget import Budget, budget_sentence
from tasksolve.solver.certify.certificate import (
    DEFAULT_TARGET_GAP,
    Certificate,
    PlanPerformance,
    SamplesSummary,
    versions,
)
from tasksolve.solver.certify.designs import DEFAULT_DESIGN, DEFAULT_SAMPLES, PROBES, probe
from tasksolve.solver.certify.finalists import add_climbs
from tasksolve.solver.certify.measure import precise
from tasksolve.solver.certify.measured_bound import add_measured_bound
from tasksolve.solver.certify.outdir import take_output_dir
from tasksolve.solver.certify.progress import Progress, refresh_estimate
from tasksolve.solver.certify.records import all_failed
from tasksolve.solver.certify.service import SamplingService
from tasksolve.solver.certify.stopping import decided
from tasksolve.solver.certify.verdict import decide
from tasksolve.specs import Plan, Spec
from tasksolve.specs.objective import Objective

#: the adaptive default path: first look after this many samples, then every `ADAPTIVE_STEP`
#: more (a negative verdict may be decided at the first look; a `best_found` needs 299 draws)
ADAPTIVE_INIT = 100
ADAPTIVE_STEP = 100


@dataclass
class CertifyOutcome:
    certificate: Certificate
    analysis: Any  # evt.EVTResult (None if the sample could not be analysed)
    history: Any  # evt.SequentialResult or None
    service: SamplingService
    seconds: dict[str, float] | None = None  # wall time per step: prepare (plan, probes), sampling, verdict, ...


def certify(
    spec: Spec,
    *,
    out_dir: Path,
    compare_samples: int | None = 0,
    budget: float | None = None,
    started: float | None = None,
    **options: Any,
) -> CertifyOutcome:
    """Measure, decide; `out_dir/samples.jsonl` keeps every measurement.

    The options are `_certify`'s; `compare_samples` plans of the other design give its estimate
    beside the certificate's (`certificate.designs`; None: `solver.certify.compare.resolve`).
    `budget` seconds (from `started`, a `time.monotonic()` reading; default now) bound the run
    when the sample's size is the certifier's to choose (`Budget`; a fixed sample has none).  The output
    directory is locked for the whole run (a second run into it fails at once, naming this one's PID)."""
    taken = take_output_dir(out_dir, resume=options.get("resume", False), force=options.get("force", False))
    try:
        fixed = sampling_mode(options.get("target_gap"), options.get("samples"), options.get("design")) == "fixed"
        plan_budget = Budget.of(None if fixed else budget, started)  # a fixed sample: no budget at all
        outcome = _certify(spec, out_dir=out_dir, budget=plan_budget, **options)
        options.setdefault("oracle_kind", DEFAULT_KIND)
        from tasksolve.solver.certify.compare import compare_designs, resolve

        compare_samples = resolve(compare_samples, options["oracle_kind"], outcome.certificate.samples.n)
        affordable = plan_budget.affordable(compare_samples)
        if affordable < min(compare_samples, COMPARE_MIN):  # too few to say anything: not drawn
            affordable = 0
        compare_samples = affordable
        if compare_samples:
            clock = time.perf_counter()
            within = {**options, "deadline": plan_budget.deadline}  # the budget's end stops its sample too
            outcome.certificate.designs = compare_designs(spec, out_dir, outcome.certificate, compare_samples, within)
            outcome.seconds["other design"] = time.perf_counter() - clock
        return outcome
    finally:
        taken.release()


def sampling_mode(target_gap: float | None, samples: int | None, design: str | None) -> str:
    """ "sequential" (a target gap), "adaptive" (the default path: local optima, no sample size
    given) or "fixed" (the caller's sample size)."""
    if target_gap is not None:
        return "sequential"
    return "adaptive" if samples is None and (design or DEFAULT_DESIGN) == "local-optima" else "fixed"


@dataclass
class _Run:
    """What one certification run fixed before sampling (the judge of every step)."""

    spec: Spec
    service: SamplingService
    oracle: Any  # the run's `ClassOracle` (binding) or the oracle itself (pipeline)
    plan: Plan | None
    measured: Any  # the plan's measurement (None: the plan is the best sample)
    known: list[tuple[str, float, float]]
    bounds: list[Any]
    minimize: bool
    target_gap: float
    confidence: float
    oracle_kind: str
    draws: str
    show: Callable[[float], str]
    noisy: Any = None  # a stochastic oracle's re-measurement (`solver.certify.noisy`), at the end
    budget: Budget = field(default_factory=Budget)

    @property
    def objective(self) -> Objective:
        return Objective.of(self.spec.objective)

    def plan_value(self, values: np.ndarray) -> tuple[float, float]:
        if self.measured is not None:
            hw = self.measured.natural_half_width(self.spec.objective)
            return self.measured.natural(self.spec.objective), float(hw or 0.0)
        best = self.service.best(minimize=self.minimize)
        return float(self.objective.best(values)), float(best.half_width or 0.0) if best else 0.0

    def judge(self, values: np.ndarray, analysis, why_not: str | None):
        """(evidence, decision, atom) for the sample `values` and its analysis."""
        atom = evt.top_atom(values, minimize=self.minimize, confidence=self.confidence) if values.size else None
        atom = self.noisy.atom if self.noisy is not None and self.noisy.atom is not None else atom
        plan_value, plan_hw = self.plan_value(values)
        best = float(self.objective.best(values))
        best_record = self.service.best(minimize=self.minimize)
        best_hw = float(best_record.half_width or 0.0) if best_record is not None else 0.0
        ev = assemble.evidence(
            analysis,
            why_not,
            atom,
            values,
            plan_value,
            plan_hw,
            [("best sampled plan", best, best_hw), *self.known],
            minimize=self.minimize,
            target_gap=self.target_gap,
            confidence=self.confidence,
            bounds=self.bounds,
            oracle_kind=self.oracle_kind,
            draws=self.draws,
            show=self.show,
            noisy=self.noisy,
        )
        return ev, decide(ev, show=self.show), atom


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
    rigorous: Any = None,
    bounds: list[Any] | None = None,
    known: list[tuple] | None = None,
    probes: int = PROBES,
    pipeline: Any = None,
    budget: Budget | None = None,
) -> CertifyOutcome:
    """`resume` continues the samples file of the same sample, `force` discards one
    (`SamplingService.open`); `scheduler` measures on a Dask cluster (`simulate.executor`).
    `design` is the sampling design (`solver.certify.service.DESIGNS`); `rigorous` the solver's
    bound on the closed form (`solver.certify.bounds.Rigorous`) and `bounds` more bound objects
    (`solver.certify.verdict`: each names the oracle it bounds); `known` more plans measured on
    the same oracle (label, value[, half-width]); `probes` local-search restarts are measured as
    one more known plan (`designs.probe`); `pipeline` (a `PipelineProblem`) samples pipeline plans
    (`solver.certify.pipeline_samples`): then `plan` is required and `probes` must be 0."""
    if pipeline is not None and (plan is None or probes):
        raise ValueError("certifying a pipeline needs the plan, and no binding probes")
    settings = spec.certify
    minimize = Objective.of(spec.objective).minimize  # evt and the verdict take the flag
    confidence = confidence if confidence is not None else settings.confidence
    mode = sampling_mode(target_gap, samples, design)
    n_fixed = samples or settings.samples or DEFAULT_SAMPLES.get(design, DEFAULT_SAMPLES["random"])
    n_init = n_init or settings.n_init
    n_delta = n_delta or settings.n_delta
    limit = (max_samples or settings.max_samples) if mode == "sequential" else n_fixed
    if mode == "sequential" and limit < n_init:
        raise ValueError(f"max samples ({limit}) is below n_init ({n_init})")
    service = _service(
        spec, Path(out_dir), seed, oracle_kind, workers, limit, timeout, oracle_factory, scheduler, design, pipeline
    )
    service.open(resume=resume, force=force)
    all_bounds = ([rigorous] if rigorous is not None else []) + list(bounds or [])
    clock, seconds = time.perf_counter(), {}
    run = _prepare(
        spec, service, plan, known, all_bounds, probes, minimize, confidence, oracle_kind, oracle_factory, budget
    )
    run.target_gap = target_gap if target_gap is not None else (settings.target_gap or DEFAULT_TARGET_GAP)
    seconds["prepare"] = time.perf_counter() - clock
    clock = time.perf_counter()
    history, n_used = _draw(run, mode, progress, n_init, n_delta, limit, n_fixed, seed)
    seconds["sampling"] = time.perf_counter() - clock
    clock = time.perf_counter()
    if not service.ok_records(n_used):  # nothing measured: exit 3 with the failures summarised
        raise all_failed(service.failures(n_used), service.path)
    values = service.values(n_used)
    analysis, why_not = _final_analysis(history, values, minimize, confidence, seed)
    run.noisy = assemble.noisy_evidence(run, n_used, analysis)  # None on a deterministic oracle
    add_measured_bound(run, lambda: run.judge(values, analysis, why_not)[1].verdict != "proven")
    add_climbs(run, n_used, lambda: _undecided(run, values, analysis, why_not))  # more known plans
    ev, decision, atom = precise(run, values, analysis, why_not)
    certificate = _certificate(run, service, ev, decision, atom, analysis, why_not, history, values, n_used, seed)
    seconds["verdict"] = time.perf_counter() - clock
    clock = time.perf_counter()
    certificate.baselines = assemble.baselines(spec, values, balanced, seed, run.oracle, spec.objective, design)
    seconds["baselines"] = time.perf_counter() - clock
    return CertifyOutcome(certificate, analysis, history, service, seconds)


def _final_analysis(history, values: np.ndarray, minimize: bool, confidence: float, seed: int):
    """The sequential run's last analysis where it covers every sample, else a fresh one."""
    last = history.result if history is not None else None
    if last is not None and last.n == values.size:
        return last, None
    return _analyze(values, minimize, confidence, seed)


def _draw(run: _Run, mode: str, progress: bool, n_init: int, n_delta: int, limit: int, n_fixed: int, seed: int):
    """Sample as `mode` says ("sequential", "adaptive" or "fixed"): (history or None, samples used)."""
    service = run.service
    bar = Progress(progress, n_init if mode == "sequential" else n_fixed, run.minimize, run.show)
    with bar:
        bar.set_completed(len(service.records))
        if mode == "sequential":
            return _sample(run, bar, n_init=n_init, n_delta=n_delta, limit=limit, seed=seed)
        if mode == "adaptive":
            first = min(ADAPTIVE_INIT, n_fixed)
            return _sample(run, bar, n_init=first, n_delta=ADAPTIVE_STEP, limit=n_fixed, seed=seed)
        service.ensure(n_fixed, on_progress=lambda d: bar.advance(d, service))
        return None, n_fixed


def _service(
    spec, out_dir: Path, seed, oracle_kind, workers, limit, timeout, oracle_factory, scheduler, design, pipeline
):
    out_dir.mkdir(parents=True, exist_ok=True)
    return SamplingService(
        spec,
        out_dir / "samples.jsonl",
        seed=seed,
        oracle_kind=oracle_kind,
        workers=workers,
        max_samples=limit,
        timeout=timeout,
        objective=spec.objective,
        oracle_factory=oracle_factory,
        scheduler=scheduler,
        design=design,
        pipeline=pipeline,
    )


def _prepare(
    spec, service, plan, known, bounds, probes, minimize, confidence, oracle_kind, oracle_factory, budget=None
) -> _Run:
    """The run's oracle (one measurement per class), the plan's measurement and the known plans."""
    oracle = oracle_factory(spec) if oracle_factory else make_oracle(spec, oracle_kind)
    if service.pipeline is None:
        from tasksolve.solver.certify.measure import ClassOracle

        oracle = ClassOracle(spec, oracle, service.seed)
    clock = time.perf_counter()
    measured = oracle.evaluate(plan, seed=service.seed) if plan is not None else None
    budget = budget or Budget()
    budget.measure_s = time.perf_counter() - clock if plan is not None else None
    found: list[tuple[str, float, float]] = [
        (k[0], float(k[1]), float(k[2]) if len(k) > 2 and k[2] else 0.0) for k in (known or [])
    ]
    screen = oracle_kind != "analytic"
    deadline = budget.probe_deadline
    probed = (
        probe(spec, oracle, spec.objective, service.seed, probes, screen=screen, deadline=deadline) if probes else None
    )
    if probed is not None:
        hw = 0.0
        if hasattr(oracle, "evaluate_contexts"):  # its measurement's half-width, from the class table
            m = oracle.evaluate_contexts(probed[1])
            hw = float(m.natural_half_width(spec.objective) or 0.0)
        found.append((f"best of {probes} local-search restarts", probed[0], hw))
    for bound in bounds:
        if bound.oracle == oracle_kind and bound.objective is not None:
            found.append(("CP-SAT plan", float(bound.objective), 0.0))
    draws, _ = assemble.draws_and_cover(service.design, oracle_kind, service.pipeline is not None)
    return _Run(
        spec,
        service,
        oracle,
        plan,
        measured,
        found,
        bounds,
        minimize,
        DEFAULT_TARGET_GAP,
        confidence,
        oracle_kind,
        draws,
        Objective.of(spec.objective).format,
        budget=budget,
    )


def _sample(run: _Run, bar: Progress, *, n_init: int, n_delta: int, limit: int, seed: int):
    """ASPLOS'12 Figure 13 over the sampling service, stopping when the verdict is decided:
    (history, samples used)."""
    service, cursor = run.service, {"next": 0}
    deadline = run.budget.sampling_deadline

    def sampler(k: int) -> np.ndarray:
        values: list[float] = []
        while len(values) < k:
            start = cursor["next"]
            if start >= limit:
                raise evt.EVTError("the sampling limit was reached before enough plans were measured")
            want = min(limit, start + (k - len(values)))
            bar.set_total(max(want, n_init))
            advance = lambda d: bar.advance(d, service)  # noqa: E731
            service.ensure(min(want, BUDGET_MIN_SAMPLES), on_progress=advance)  # never stop before these
            done = service.ensure(want, on_progress=advance, deadline=deadline)
            if not service.ok_records(done):
                raise all_failed(service.failures(done), service.path)
            values += [service.records[i].value for i in range(start, done) if service.records[i].status == "ok"]
            cursor["next"] = done
            if done < want:  # the budget ended: evt.sequential analyses what there is and stops
                run.budget.spent = True
                break
        refresh_estimate(bar, service, run.minimize, run.confidence, run.show)
        return np.array(values[:k])

    def stop(sample: np.ndarray, result) -> bool:
        why = None if result is not None else "the sample cannot be analysed at this size"
        _, decision, atom = run.judge(sample, result, why)
        return decided(decision, atom.beat_bound if atom is not None else None, atom)

    history = evt.sequential(
        sampler,
        n_init=n_init,
        n_delta=n_delta,
        target_gap=run.target_gap,
        confidence=run.confidence,
        max_n=limit,
        minimize=run.minimize,
        seed=seed,
        gof_bootstrap=GOF_BOOTSTRAP,
        stop=stop,
        exhaustible=deadline is not None,
    )
    if history.met:  # decided at the last look: the budget did not cut the verdict short
        run.budget.spent = False
    return history, cursor["next"]


#: the other design's sample is left out when the budget affords fewer plans than this
COMPARE_MIN = 30

#: sampling never stops on the budget before this many samples (a sample to judge at all)
BUDGET_MIN_SAMPLES = 5

#: the goodness-of-fit bootstrap of every analysis (the same at every step and at the end, so the
#: step that stopped sampling and the certificate judge the same fit)
GOF_BOOTSTRAP = 200


def _certificate(run: _Run, service, ev, decision, atom, analysis, why_not, history, values, n_used, seed):
    spec, minimize = run.spec, run.minimize
    plan = run.plan
    if plan is None:
        best = service.best(n_used, minimize=minimize)
        plan = Plan.from_contexts(spec, best.contexts, method="best random")
        measured = run.oracle.evaluate(plan, seed=seed)
    else:
        measured = run.measured
    draws, covers = assemble.draws_and_cover(service.design, run.oracle_kind, service.pipeline is not None)
    records = [service.records[i] for i in sorted(service.records) if i < n_used]
    classes = None
    if hasattr(run.oracle, "key") and service.pipeline is None:
        classes = len({run.oracle.key(r.contexts) for r in records if r.status == "ok"})
    stopped = _stopped(run, history)
    sentence = decision.sentence
    if stopped == "budget":
        sentence = sentence.rstrip(" .") + ". " + budget_sentence(run.budget.seconds, int(values.size), draws)
    return Certificate(
        spec=spec.name,
        objective=spec.objective,
        verdict=decision.verdict,
        sentence=sentence,
        basis=decision.basis,
        reasons=assemble.reasons(decision),
        plan=plan.to_dict(),
        plan_performance=PlanPerformance(
            value=ev.plan_value,
            half_width=measured.natural_half_width(spec.objective),
            throughput=measured.throughput,
            latency_mean=measured.latency_mean,
            oracle=measured.oracle,
            repeats=run.oracle.repeats(plan.contexts(spec)) if hasattr(run.oracle, "repeats") else 1,
        ),
        samples=SamplesSummary(
            n=int(values.size),
            failed=len(service.failures(n_used)),
            requested=int(n_used),
            file=str(service.path),
            best=float(run.objective.best(values)),
            oracle=run.oracle_kind,
            sequential=history is not None,
            design=service.design,
            draws=draws,
            covers=covers,
            classes=classes,
            stopped=stopped,
            budget_s=run.budget.seconds,
        ),
        optimum=assemble.optimum(ev, atom, values, run.confidence, why_not),
        gap=assemble.gaps(decision),
        target_gap=run.target_gap,
        flags=list(ev.flags),
        seed=seed,
        versions=versions(),
        design=service.design,
        bounds=assemble.bound_summaries(run.bounds, run.oracle_kind),
        known_plans=assemble.known_list([("best sampled plan", ev.known[0][1], ev.known[0][2]), *run.known])
        + assemble.known_list([("certified plan itself", ev.plan_value, ev.plan_half_width)]),
        evt=analysis.to_dict() if analysis is not None else {"error": why_not},
        sequential=[step.to_dict() for step in history.steps] if history else None,
        noise=None if run.noisy is None else run.noisy.to_dict(),
    )


def _undecided(run: _Run, values: np.ndarray, analysis, why_not) -> bool:
    _, decision, atom = run.judge(values, analysis, why_not)
    return not decided(decision, atom.beat_bound if atom is not None else None, atom)


def _stopped(run: _Run, history) -> str:
    """Why sampling ended (`SamplesSummary.stopped`)."""
    if history is None:
        return "fixed"
    if history.met:
        return "decided"
    return "budget" if run.budget.spent else "ceiling"


def _analyze(values: np.ndarray, minimize: bool, confidence: float, seed: int) -> tuple[Any, str | None]:
    """`evt.analyze`, or (None, why) when the sample has no tail to model (e.g. every local
    optimum has the same value): the verdict then rests on the bound or the saturation."""
    try:
        return evt.analyze(
            values, minimize=minimize, confidence=confidence, seed=seed, gof_bootstrap=GOF_BOOTSTRAP
        ), None
    except evt.EVTError as exc:
        return None, str(exc)
