"""One certification: what it fixed before sampling, the judge of every step, and the certificate.

`Certification.prepare` fixes the oracle (for binding plans one measurement per placement class,
`solver.certify.measure.ClassOracle`), the plan's measurement, the known plans (the caller's, the
probe's restarts, CP-SAT's plan where its bound applies) and the bounds.  `Certification.judge`
builds the verdict's evidence from a `Sample` and decides (`solver.certify.verdict.decide`);
`decided` says when sampling more cannot change the verdict (ASPLOS'12 Figure 13's stopping rule,
on the verdict's own rules).  The steps after sampling (`solver.certify.run`) read a
`Certification` and return what they found -- a bound (`measured_bound.for_certification`),
known plans (`finalists.climbs`), a re-measurement (`noisy.for_certification`), the plan's
pooled measurement (`measure.precise`) -- and only `run` adds it here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tasksolve import evt
from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.certify import assemble
from tasksolve.solver.certify.budget import Budget, budget_sentence
from tasksolve.solver.certify.certificate import Certificate, PlanPerformance, SamplesSummary, versions
from tasksolve.solver.certify.designs import probe
from tasksolve.solver.certify.judgement import Judgement, Sample
from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.certify.latency_check import LatencyCheck, measure_latency
from tasksolve.solver.certify.latency_check import apply as apply_latency
from tasksolve.solver.certify.measure import ClassOracle
from tasksolve.solver.certify.measured_bound import widening
from tasksolve.solver.certify.settings import CertifySettings
from tasksolve.solver.certify.verdict import beats, decide
from tasksolve.specs import Plan, Spec
from tasksolve.specs.objective import Objective

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tasksolve.evt.sequential import SequentialResult
    from tasksolve.simulate.measurement import Measurement
    from tasksolve.simulate.oracle import Oracle
    from tasksolve.solver.certify.bounds import Bound
    from tasksolve.solver.certify.noisy import NoisyEvidence
    from tasksolve.solver.certify.service import SamplingService


#: `Certification.judge`'s default: judge the plan's own measurement
_OWN = object()


@dataclass
class Certification:
    """One certification run (module docstring).  ``oracle`` measures plans; ``classes`` is the
    same oracle measured once per placement class (binding plans; None for pipeline plans, which
    are measured by ``oracle`` itself); ``measured`` is the plan's measurement (None: no plan was
    given, the best sample stands for it); ``known`` the plans measured beside it and ``bounds``
    every bound, each on the oracle it names; ``noisy`` a stochastic oracle's re-measurement."""

    spec: Spec
    settings: CertifySettings
    service: SamplingService
    oracle: Oracle
    classes: ClassOracle | None
    plan: Plan | None
    measured: Measurement | None
    known: list[KnownPlan]
    bounds: list[Bound]
    target_gap: float
    budget: Budget = field(default_factory=Budget)
    noisy: NoisyEvidence | None = None
    latency: LatencyCheck | None = None  # `latency_max` on the plan's oracle (`latency_check`)

    @classmethod
    def prepare(
        cls,
        spec: Spec,
        settings: CertifySettings,
        service: SamplingService,
        plan: Plan | None,
        known: Sequence[KnownPlan] = (),
        bounds: Sequence[Bound] = (),
        budget: Budget | None = None,
    ) -> Certification:
        """The oracle, the plan's measurement and the known plans (module docstring); `settings`
        resolved (`CertifySettings.resolved`)."""
        from tasksolve.solver.certify.certificate import DEFAULT_TARGET_GAP

        settings = settings.resolved(spec)
        oracle = settings.oracle_factory(spec) if settings.oracle_factory else make_oracle(spec, settings.oracle_kind)
        classes = ClassOracle(spec, oracle, service.seed) if service.pipeline is None else None
        measurer = classes or oracle
        clock = time.perf_counter()
        measured = measurer.evaluate(plan, seed=service.seed) if plan is not None else None
        budget = budget or Budget()
        budget.measure_s = time.perf_counter() - clock if plan is not None else None
        found = list(known)
        for bound in bounds:
            if bound.oracle == settings.oracle_kind and bound.objective is not None:
                found.append(KnownPlan("CP-SAT plan", float(bound.objective)))
        gap = settings.target_gap if settings.target_gap is not None else spec.certify.target_gap or DEFAULT_TARGET_GAP
        latency = measure_latency(spec, plan, measured, settings.oracle_kind)
        cert = cls(
            spec, settings, service, oracle, classes, plan, measured, found, list(bounds), gap, budget, latency=latency
        )
        if settings.probes:
            cert._probe()
        return cert

    def _probe(self) -> None:
        """The probe's restarts as a known plan (`designs.probe`), until the budget's probe
        deadline; none forced, and one still climbing at the budget's end dropped, when the
        verdict is `settled` without them."""
        spec, settings, budget = self.spec, self.settings, self.budget
        settled = budget.deadline is not None and self.settled()
        screen, deadline = settings.oracle_kind != "analytic", budget.probe_deadline
        cut = budget.deadline if settled else None
        probed = probe(spec, self.measurer, spec.objective, self.service.seed, settings.probes, screen, deadline, cut)
        if not settled and budget.over(budget.deadline):
            budget.note("probe: its first restart, run whatever the budget, ran past it")
        if probed is None:
            if settled:
                budget.note(
                    "probe: no local-search restart finished within the budget (the run was settled without it)"
                )
            return
        classes = self.classes
        hw = 0.0 if classes is None else classes.evaluate_contexts(probed[1]).natural_half_width(spec.objective)
        hw = float(hw or 0.0) * widening(settings.probes, settings.confidence or 0.95)  # the best of n
        label = f"best of {settings.probes} local-search restarts"
        self.known.append(KnownPlan(label, probed[0], hw, tuple(int(c) for c in probed[1])))

    def settled(self) -> bool:
        """Whether the verdict is decided before any sample (`Judgement.decided` on no sample):
        a rigorous bound proves the plan, or a known plan settles it -- or, where the caller
        `adopts` (``settings.adopts``), a known binding plan beats it beyond noise (the caller
        certifies that one instead).  Then the probe and the samples only add to the certificate
        and get no minimum under a budget."""
        if self.plan is None:
            return False
        judged = self.judge(Sample(np.empty(0), None, "no sample yet"))
        if judged.decided:
            return True
        return bool(self.settings.adopts and any(k.contexts is not None for k in self.better_plans(judged)))

    # ------------------------------------------------------------------------------ read-only
    @property
    def space(self) -> str:
        """The plans the sample and the bounds range over where not every plan: a pipeline spec of
        several instances repeats one instance's plan on each one's block (`solver.pipeline.blocks`)."""
        problem = self.service.pipeline  # a `PipelineProblem`, or None for binding plans
        if problem is None or problem.instances < 2:
            return ""
        return f"plans repeating one instance's plan on each of its {problem.instances} blocks"

    @property
    def objective(self) -> Objective:
        return Objective.of(self.spec.objective)

    @property
    def minimize(self) -> bool:
        return self.objective.minimize

    @property
    def confidence(self) -> float:
        return float(self.settings.confidence)  # resolved in `prepare`

    @property
    def oracle_kind(self) -> str:
        return self.settings.oracle_kind

    @property
    def measurer(self) -> Oracle | ClassOracle:
        """What measures one more plan: the class table for binding plans, else the oracle."""
        return self.classes if self.classes is not None else self.oracle

    @property
    def show(self) -> Callable[[float], str]:
        return self.objective.format

    @property
    def draws(self) -> str:
        return assemble.draws_and_cover(self.service.design, self.oracle_kind, self.service.pipeline is not None)[0]

    def plan_value(self, values: np.ndarray, measured: Measurement | None) -> tuple[float, float]:
        """The plan's value and half-width: `measured`'s, else the best sample's."""
        if measured is not None:
            hw = measured.natural_half_width(self.spec.objective)
            return measured.natural(self.spec.objective), float(hw or 0.0)
        best = self.service.best(minimize=self.minimize)
        return float(self.objective.best(values)), float(best.half_width or 0.0) if best else 0.0

    def judge(self, sample: Sample, measured: Measurement | None | object = _OWN) -> Judgement:
        """The verdict on `sample`, for the plan's own measurement or `measured` in its place."""
        values = sample.values
        atom = evt.top_atom(values, minimize=self.minimize, confidence=self.confidence) if values.size else None
        atom = self.noisy.atom if self.noisy is not None and self.noisy.atom is not None else atom
        plan_value, plan_hw = self.plan_value(values, self.measured if measured is _OWN else measured)
        best_record = self.service.best(minimize=self.minimize)
        # the best of n noisy measurements is biased up (the winner's curse): its half-width holds
        # for it only as a limit simultaneous over all n (`measured_bound.widening`, Bonferroni)
        best_hw = float(best_record.half_width or 0.0) if best_record is not None else 0.0
        best_hw *= widening(max(1, values.size), self.confidence) if best_hw > 0 else 1.0
        judging = assemble.Judging(
            self.minimize,
            self.target_gap,
            self.confidence,
            self.bounds,
            self.oracle_kind,
            self.draws,
            self.show,
            self.noisy,
            self.space,
        )
        contexts = None  # a pipeline sample's record is not a binding
        if best_record is not None and self.service.pipeline is None:
            contexts = tuple(int(c) for c in best_record.contexts)
        best = (
            [KnownPlan("best sampled plan", float(self.objective.best(values)), best_hw, contexts)]
            if values.size
            else []
        )
        ev = assemble.evidence(sample, atom, KnownPlan("plan", plan_value, plan_hw), [*best, *self.known], judging)
        return Judgement(ev, apply_latency(decide(ev, show=self.show), self.latency), atom)

    def better_plans(self, judged: Judgement) -> list[KnownPlan]:
        """The known plans that beat the certified plan beyond both half-widths
        (`solver.certify.verdict.beats`), the best first: what the main job may adopt in its
        place (a binding plan with its contexts; a pipeline plan its strategy kept,
        `solver.job.strategy.Strategy.adopt`).  None on a noisy oracle (there only the
        re-measured yardstick is compared, `solver.certify.noisy`)."""
        if self.noisy is not None or self.plan is None:
            return []
        ev, binding = judged.evidence, self.service.pipeline is None
        own = tuple(self.plan.contexts(self.spec)) if binding else None
        better = [
            k
            for k in ev.known
            if (not binding or (k.contexts is not None and k.contexts != own))
            and beats(k.value, k.half_width, ev.plan_value, ev.plan_half_width, ev.minimize)
        ]
        return sorted(better, key=lambda k: k.value, reverse=not ev.minimize)

    # ------------------------------------------------------------------------------ the certificate
    def certificate(
        self, judged: Judgement, sample: Sample, history: SequentialResult | None, n_used: int
    ) -> Certificate:
        """The typed certificate of the verdict `judged` on `sample` (the first `n_used` draws)."""
        spec, service, ev, decision = self.spec, self.service, judged.evidence, judged.decision
        plan, measured = self.plan, self.measured
        if plan is None or measured is None:
            best = service.best(n_used, minimize=self.minimize)
            plan = Plan.from_contexts(spec, best.contexts, method="best random")
            measured = self.measurer.evaluate(plan, seed=self.settings.seed)
        draws, covers = assemble.draws_and_cover(service.design, self.oracle_kind, service.pipeline is not None)
        classes = None
        if self.classes is not None:
            records = [service.records[i] for i in sorted(service.records) if i < n_used]
            classes = len({self.classes.key(r.contexts) for r in records if r.status == "ok"})
        stopped = self.stopped(history, judged)
        sentence = decision.sentence
        if stopped == "budget":
            size = int(sample.values.size)
            sentence = sentence.rstrip(" .") + ". " + budget_sentence(self.budget.seconds, size, draws)
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
                repeats=1 if self.classes is None else self.classes.repeats(plan.contexts(spec)),
            ),
            samples=SamplesSummary(
                n=int(sample.values.size),
                failed=len(service.failures(n_used)),
                requested=int(n_used),
                file=str(service.path),
                best=float(self.objective.best(sample.values)) if sample.values.size else None,
                oracle=self.oracle_kind,
                sequential=history is not None,
                design=service.design,
                draws=draws,
                covers=covers,
                classes=classes,
                stopped=stopped,
                budget_s=self.budget.seconds,
            ),
            optimum=assemble.optimum(ev, judged.atom, sample.values, self.confidence, sample.why_not),
            gap=assemble.gaps(decision),
            target_gap=self.target_gap,
            flags=list(ev.flags),
            seed=self.settings.seed,
            versions=versions(),
            design=service.design,
            bounds=assemble.bound_summaries(self.bounds, self.oracle_kind),
            known_plans=assemble.known_list(
                [
                    *([ev.known[0]._replace(plan="best sampled plan")] if sample.values.size else []),
                    *self.known,
                    KnownPlan("certified plan itself", ev.plan_value, ev.plan_half_width),
                ]
            ),  # fmt: skip
            evt=sample.analysis.to_dict() if sample.analysis is not None else {"error": sample.why_not},
            sequential=[step.to_dict() for step in history.steps] if history else None,
            noise=None if self.noisy is None else self.noisy.to_dict(),
            latency=None if self.latency is None else self.latency.to_dict(),
            budget=self.budget.to_dict(),
        )

    def stopped(self, history: SequentialResult | None, judged: Judgement | None = None) -> str:
        """Why sampling ended (`SamplesSummary.stopped`): a verdict `judged` decided is
        "decided" even where the budget cut the sample (it was settled before sampling)."""
        if history is None:
            return "fixed"
        if history.met or (judged is not None and judged.decided):
            return "decided"
        return "budget" if self.budget.spent else "ceiling"
