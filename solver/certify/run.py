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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tasksolve import evt
from tasksolve.solver.certify.budget import Budget
from tasksolve.solver.certify.certificate import Certificate
from tasksolve.solver.certify.certification import Certification, Sample
from tasksolve.solver.certify.finalists import climbs
from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.certify.measure import precise
from tasksolve.solver.certify.measured_bound import for_certification as measured_bound_for
from tasksolve.solver.certify.outdir import take_output_dir
from tasksolve.solver.certify.progress import Progress, refresh_estimate
from tasksolve.solver.certify.records import all_failed
from tasksolve.solver.certify.service import SamplingService
from tasksolve.solver.certify.settings import CertifySettings
from tasksolve.solver.errors import SolverFailed
from tasksolve.specs import Plan, Spec

if TYPE_CHECKING:
    from tasksolve.evt.result import EVTResult
    from tasksolve.evt.sequential import SequentialResult
    from tasksolve.solver.certify.bounds import Bound
    from tasksolve.solver.pipeline.problem import PipelineProblem

#: the adaptive default path: first look after this many samples, then every `ADAPTIVE_STEP`
#: more (a negative verdict may be decided at the first look; a `best_found` needs 299 draws)
ADAPTIVE_INIT = 100
ADAPTIVE_STEP = 100

#: the other design's sample is left out when the budget affords fewer plans than this
COMPARE_MIN = 30

#: sampling never stops on the budget before this many samples (a sample to judge at all)
BUDGET_MIN_SAMPLES = 5

#: the goodness-of-fit bootstrap of every analysis (the same at every step and at the end, so the
#: step that stopped sampling and the certificate judge the same fit)
GOF_BOOTSTRAP = 200


@dataclass
class CertifyOutcome:
    certificate: Certificate
    analysis: EVTResult | None  # None if the sample could not be analysed
    history: SequentialResult | None  # the sequential algorithm's steps (None: a fixed sample)
    service: SamplingService
    seconds: dict[str, float] | None = None  # wall time per step: prepare (plan, probes), sampling, verdict, ...
    better: list[KnownPlan] = field(default_factory=list)  # known plans that beat the plan beyond noise


def certify(
    spec: Spec,
    out_dir: Path,
    settings: CertifySettings | None = None,
    *,
    plan: Plan | None = None,
    bounds: Sequence[Bound] = (),
    known: Sequence[KnownPlan] = (),
    pipeline: PipelineProblem | None = None,
    started: float | None = None,
) -> CertifyOutcome:
    """Measure, decide; `out_dir/samples.jsonl` keeps every measurement.

    `settings` (`CertifySettings`; None: the defaults) say how to sample; `bounds` are bounds on
    the optimum, each naming the oracle it bounds (`solver.certify.bounds.Bound`; the first that
    applies is the proof's); `known` more plans measured on the same oracle; `pipeline` (a
    `PipelineProblem`) samples pipeline plans (`solver.certify.pipeline_samples`): then `plan` is
    required and ``settings.probes`` must be 0.  ``settings.budget_s`` seconds from `started` (a
    `time.monotonic()` reading; default now) bound the run when the sample's size is the
    certifier's to choose (`Budget`; a fixed sample has none).  The output directory is locked
    for the whole run (a second run into it fails at once, naming this one's PID)."""
    settings = (settings or CertifySettings()).resolved(spec)
    if pipeline is not None and (plan is None or settings.probes):
        raise ValueError("certifying a pipeline needs the plan, and no binding probes")
    if settings.mode == "sequential" and settings.max_samples < settings.n_init:
        raise ValueError(f"max samples ({settings.max_samples}) is below n_init ({settings.n_init})")
    taken = take_output_dir(out_dir, resume=settings.resume, force=settings.force)
    try:
        budget = Budget.of(None if settings.mode == "fixed" else settings.budget_s, started)
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        service = settings.service(
            spec, Path(out_dir) / "samples.jsonl", settings.limit(spec), settings.design, pipeline
        )
        service.open(resume=settings.resume, force=settings.force)
        clock = time.perf_counter()
        cert = Certification.prepare(spec, settings, service, plan, known, bounds, budget)
        seconds = {"prepare": time.perf_counter() - clock}
        outcome = _run(cert, seconds)
        _compare(cert, outcome, Path(out_dir))
        return outcome
    finally:
        taken.release()


def _run(cert: Certification, seconds: dict[str, float]) -> CertifyOutcome:
    """Sample, then the steps after sampling, each adding what it found, then the certificate."""
    service, settings = cert.service, cert.settings
    clock = time.perf_counter()
    settled = cert.budget.deadline is not None and cert.settled()
    optional = cert.budget.deadline is not None and (settled or not settings.floor)  # the samples are no must
    service.cut = cert.budget.deadline if optional else None
    try:
        history, n_used = _draw(cert, optional)
    finally:
        service.cut = None
    seconds["sampling"] = time.perf_counter() - clock
    clock = time.perf_counter()
    if optional and not service.ok_records(n_used):
        why = "the run was settled without one" if settled else "an earlier certification of the job spent its limit"
        cert.budget.note(f"samples: no {cert.draws[:-1]} finished within the budget ({why})")
    elif not service.ok_records(n_used):  # nothing measured: exit 3 with the failures summarised
        raise all_failed(service.failures(n_used), service.path)
    sample = _final_sample(cert, history, service.values(n_used))
    from tasksolve.solver.certify.noisy import for_certification as noisy_for

    cert.noisy = noisy_for(cert, n_used, sample.analysis)  # None on a deterministic oracle
    try:
        found = measured_bound_for(cert, sample)
    except SolverFailed as exc:  # coefficients past HiGHS's range (a capacity of 1e-300)
        found = None
        cert.budget.note(f"measured bound: not computed ({exc})")
    if found is not None:
        cert.bounds.append(found)
    binding = cert.classes is not None  # the finalists' climbs move threads of binding plans
    if binding and cert.noisy is None and cert.plan is not None and not settled and not cert.judge(sample).decided:
        best = service.best(n_used, minimize=cert.minimize)
        finalists = [("the plan", cert.plan.contexts(cert.spec))] + (
            [("the best sample", best.contexts)] if best else []
        )
        cert.known += climbs(cert.spec, cert.classes, finalists, cert.oracle_kind, settings.seed, cert.budget)
    judged = cert.judge(sample)
    if cert.classes is not None and cert.measured is not None and cert.plan is not None:
        contexts = cert.plan.contexts(cert.spec)
        cert.measured, judged = precise(
            cert.classes, contexts, cert.measured, cert.spec.objective, lambda m: cert.judge(sample, m)
        )
    _plan_bounds(cert)
    certificate = cert.certificate(judged, sample, history, n_used)
    better = cert.better_plans(judged)
    seconds["verdict"] = time.perf_counter() - clock
    clock = time.perf_counter()
    certificate.baselines = _baselines(cert, sample.values)
    seconds["baselines"] = time.perf_counter() - clock
    return CertifyOutcome(certificate, sample.analysis, history, service, seconds, better)


def _plan_bounds(cert: Certification) -> None:
    """The plan's own fluid bound beside the bound over every plan (`bounds.add_plan_bound`), after
    the verdict and only where the budget affords it: it informs, it decides nothing."""
    from dataclasses import replace

    from tasksolve.solver.certify.bounds import SimulationBound, add_plan_bound

    for i, bound in enumerate(cert.bounds):
        if isinstance(bound, SimulationBound) and cert.plan is not None and bound.plan_value is None:
            cert.bounds[i] = found = add_plan_bound(replace(bound), cert.spec, cert.plan, cert.budget.left())
            if found.plan_note:
                cert.budget.note("the plan's own fluid bound: " + found.plan_note)


def _baselines(cert: Certification, values: np.ndarray):
    from tasksolve.solver.certify.assemble import baselines

    if not values.size:  # no sample (the budget ended first on a verdict the bound decided)
        return []
    s = cert.settings
    return baselines(cert.spec, values, s.balanced, s.seed, cert.measurer, cert.spec.objective, s.design)


def _compare(cert: Certification, outcome: CertifyOutcome, out_dir: Path) -> None:
    """The other design's estimate beside the certificate's (`solver.certify.compare`), as many
    plans as the budget affords."""
    from tasksolve.solver.certify.compare import compare_designs, resolve

    settings, budget = cert.settings, cert.budget
    wanted = resolve(settings.compare_samples, settings.oracle_kind, outcome.certificate.samples.n)
    affordable = budget.affordable(wanted)
    if affordable < min(wanted, COMPARE_MIN):  # too few to say anything: not drawn
        affordable = 0
    if affordable:
        clock = time.perf_counter()
        pipeline = cert.service.pipeline
        found = compare_designs(
            cert.spec, out_dir, outcome.certificate, affordable, settings, pipeline, budget.deadline
        )
        outcome.certificate.designs = found
        outcome.seconds["other design"] = time.perf_counter() - clock


def _final_sample(cert: Certification, history, values: np.ndarray) -> Sample:
    """The sequential run's last analysis where it covers every sample, else a fresh one."""
    last = history.result if history is not None else None
    if last is not None and last.n == values.size:
        return Sample(values, last, None)
    return Sample(values, *_analyze(values, cert.minimize, cert.confidence, cert.settings.seed))


def _draw(cert: Certification, optional: bool = False) -> tuple[SequentialResult | None, int]:
    """Sample as the settings' mode says ("sequential", "adaptive" or "fixed"): (history or
    None, samples used); `optional`: no minimum sample (the verdict is settled already, or the
    settings have no ``floor``)."""
    service, s = cert.service, cert.settings
    n_fixed = s.fixed_size(cert.spec)
    # the bar's total is the first batch and grows with each batch the design asks for: it never
    # shrinks (it showed 0/1000, then 0/100, on the adaptive path)
    first = {"sequential": s.n_init, "adaptive": min(ADAPTIVE_INIT, n_fixed)}.get(s.mode, n_fixed)
    bar = Progress(s.progress, first, cert.minimize, cert.show)
    with bar:
        bar.set_completed(len(service.records))
        if s.mode == "sequential":
            return _sample(cert, bar, n_init=s.n_init, n_delta=s.n_delta, limit=s.max_samples, optional=optional)
        if s.mode == "adaptive":
            n_init = min(ADAPTIVE_INIT, n_fixed)
            return _sample(cert, bar, n_init=n_init, n_delta=ADAPTIVE_STEP, limit=n_fixed, optional=optional)
        service.ensure(n_fixed, on_progress=lambda d: bar.advance(d, service))
        return None, n_fixed


def _sample(cert: Certification, bar: Progress, *, n_init: int, n_delta: int, limit: int, optional: bool = False):
    """ASPLOS'12 Figure 13 over the sampling service, stopping when the verdict is decided:
    (history, samples used).  `BUDGET_MIN_SAMPLES` are drawn whatever the budget unless the
    sample is `optional` (`_draw`)."""
    service, cursor = cert.service, {"next": 0}
    deadline = cert.budget.sampling_deadline

    def sampler(k: int) -> np.ndarray:
        values: list[float] = []
        while len(values) < k:
            start = cursor["next"]
            if start >= limit:
                raise evt.EVTError("the sampling limit was reached before enough plans were measured")
            want = min(limit, start + (k - len(values)))
            bar.set_total(max(want, n_init))
            advance = lambda d: bar.advance(d, service)  # noqa: E731
            if not optional:  # never stop before these: a sample to judge at all
                service.ensure(min(want, BUDGET_MIN_SAMPLES), on_progress=advance)
                if cert.budget.over(cert.budget.deadline):
                    cert.budget.note(f"samples: the first {BUDGET_MIN_SAMPLES}, drawn whatever the budget, ran past it")
            done = service.ensure(want, on_progress=advance, deadline=deadline)
            if not service.ok_records(done) and not (optional and done < want):  # optional: none may fit
                raise all_failed(service.failures(done), service.path)
            values += [service.records[i].value for i in range(start, done) if service.records[i].status == "ok"]
            cursor["next"] = done
            if done < want:  # the budget ended: evt.sequential analyses what there is and stops
                cert.budget.spent = True
                break
        refresh_estimate(bar, service, cert.minimize, cert.confidence, cert.show)
        return np.array(values[:k])

    def stop(values: np.ndarray, result) -> bool:
        why = None if result is not None else "the sample cannot be analysed at this size"
        return cert.judge(Sample(values, result, why)).decided

    history = evt.sequential(
        sampler,
        n_init=n_init,
        n_delta=n_delta,
        target_gap=cert.target_gap,
        confidence=cert.confidence,
        max_n=limit,
        minimize=cert.minimize,
        seed=cert.settings.seed,
        gof_bootstrap=GOF_BOOTSTRAP,
        stop=stop,
        exhaustible=deadline is not None,
    )
    if history.met:  # decided at the last look: the budget did not cut the verdict short
        cert.budget.spent = False
    return history, cursor["next"]


def _analyze(values: np.ndarray, minimize: bool, confidence: float, seed: int) -> tuple[EVTResult | None, str | None]:
    """`evt.analyze`, or (None, why) when the sample has no tail to model (e.g. every local
    optimum has the same value): the verdict then rests on the bound or the saturation."""
    try:
        return evt.analyze(
            values, minimize=minimize, confidence=confidence, seed=seed, gof_bootstrap=GOF_BOOTSTRAP
        ), None
    except evt.EVTError as exc:
        return None, str(exc)
