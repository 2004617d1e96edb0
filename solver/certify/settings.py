"""How one certification samples and judges: `CertifySettings`, frozen, resolved once.

The main job builds them from its own settings (`solver.job.settings.JobSettings.certify_settings`);
a library caller builds them directly, and `resolved` fills what is left unset from the spec's
``certify`` section.  The sampling mode follows from them (`mode`): a target gap gives the
sequential algorithm (ASPLOS'12 Figure 13), no sample size on the local-optima design the
adaptive default path, a sample size a fixed sample (`solver.certify.run`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tasksolve.simulate.registry import DEFAULT_KIND
from tasksolve.solver.certify.designs import DEFAULT_DESIGN, DEFAULT_SAMPLES, PROBES

if TYPE_CHECKING:
    from pathlib import Path

    from tasksolve.simulate.oracle import Oracle
    from tasksolve.solver.certify.service import SamplingService
    from tasksolve.solver.pipeline.problem import PipelineProblem
    from tasksolve.specs import Spec


@dataclass(frozen=True)
class CertifySettings:
    """Every option of `solver.certify.run.certify`.

    ``samples``: a fixed sample size (None: the design's default, adaptive on local optima);
    ``target_gap``: the sequential algorithm's target (None: no sequential sampling; the verdict's
    target is then the spec's or `certificate.DEFAULT_TARGET_GAP`); ``confidence``, ``n_init``,
    ``n_delta``, ``max_samples``: None takes the spec's.  ``workers`` processes (or a Dask
    ``scheduler``, `simulate.executor`) measure the samples, each within ``timeout`` seconds;
    ``resume`` continues the samples file of the same sample, ``force`` discards one;
    ``progress`` draws a bar on stderr.  ``balanced`` balanced plans are measured as baselines,
    ``probes`` local-search restarts as a known plan (`designs.probe`; 0 for pipeline plans).
    ``compare_samples`` plans of the other design give its estimate beside the certificate's
    (None: `compare.resolve`).  ``budget_s`` seconds bound a run whose sample size is the
    certifier's to choose (`budget.Budget`; None or 0: no budget).  ``adopts``: the caller
    certifies a known binding plan that beats this one beyond noise in its place (the main job,
    `solver.job.strategy.Strategy.adopt`), so under a budget such a plan settles the run before
    sampling (`Certification.settled`).  ``floor``: under a budget the first
    `run.BUDGET_MIN_SAMPLES` samples are drawn whatever it (False: none forced -- the main job's
    certification of an adopted plan, whose limit the first certification spent).  ``oracle_factory`` replaces the registry's oracle (tests:
    an oracle that fails on purpose)."""

    samples: int | None = None
    target_gap: float | None = None
    confidence: float | None = None
    n_init: int | None = None
    n_delta: int | None = None
    max_samples: int | None = None
    workers: int = 1
    seed: int = 0
    oracle_kind: str = DEFAULT_KIND
    design: str = DEFAULT_DESIGN
    resume: bool = False
    force: bool = False
    progress: bool = False
    balanced: int = 10
    probes: int = PROBES
    timeout: float | None = None
    oracle_factory: Callable[[Spec], Oracle] | None = None
    scheduler: object = None
    compare_samples: int | None = 0
    budget_s: float | None = None
    adopts: bool = False
    floor: bool = True

    def resolved(self, spec: Spec) -> CertifySettings:
        """The settings with every None the spec fixes taken from its ``certify`` section."""
        given = spec.certify
        return replace(
            self,
            confidence=self.confidence if self.confidence is not None else given.confidence,
            n_init=self.n_init or given.n_init,
            n_delta=self.n_delta or given.n_delta,
            max_samples=self.max_samples or given.max_samples,
        )

    @property
    def mode(self) -> str:
        """ "sequential" (a target gap), "adaptive" (the default path: local optima, no sample size
        given) or "fixed" (the caller's sample size)."""
        if self.target_gap is not None:
            return "sequential"
        return "adaptive" if self.samples is None and self.design == "local-optima" else "fixed"

    def fixed_size(self, spec: Spec) -> int:
        """The fixed sample's size, and the adaptive path's ceiling: ``samples``, else the spec's
        ``certify.samples``, else the design's default."""
        return self.samples or spec.certify.samples or DEFAULT_SAMPLES.get(self.design, DEFAULT_SAMPLES["random"])

    def limit(self, spec: Spec) -> int:
        """The most plans drawn: ``max_samples`` when sequential, else `fixed_size`."""
        return int(self.max_samples or spec.certify.max_samples) if self.mode == "sequential" else self.fixed_size(spec)

    def service(
        self,
        spec: Spec,
        path: Path,
        max_samples: int,
        design: str,
        pipeline: PipelineProblem | None = None,
        deadline: float | None = None,
    ) -> SamplingService:
        """The sampling service these settings describe (seed, oracle, workers, timeout,
        scheduler), drawing `design` into `path`, at most `max_samples`, stopping at `deadline`."""
        from tasksolve.solver.certify.service import SamplingService

        return SamplingService(
            spec,
            path,
            seed=self.seed,
            oracle_kind=self.oracle_kind,
            workers=self.workers,
            max_samples=max_samples,
            timeout=self.timeout,
            objective=spec.objective,
            oracle_factory=self.oracle_factory,
            scheduler=self.scheduler,
            design=design,
            pipeline=pipeline,
            deadline=deadline,
        )
