"""What one main job produced, as one typed object (`JobResult`).

Read it by attribute (``result.verdict``, ``result.positive``, ``result.certificate``,
``result.solve``, ``result.files``); `JobResult.summary` is the verdict's sentence first, then
the plan, the estimate and the solve, as ``tasksolve run`` prints them; `JobResult.to_dict` is
the JSON ``tasksolve run --json`` prints. ``certificate.json`` is `JobResult.certificate_dict`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class JobResult:
    """`spec` (its name), `kind` (``binding``, ``pipeline``, or ``plan``: a given plan certified
    without solving), `solve` (`solver.binding.report.SolveReport`,
    `solver.pipeline.job.PipelineResult` or None), `outcome` (`solver.certify.run.CertifyOutcome`:
    the certificate, the EVT analysis, the sampling service), `files` (each file's path by name)
    and `seconds` (each phase's wall time: ``solve``, ``certify``, ``report``); `adopted` says,
    where a plan met while certifying beat the solve's answer beyond noise and became the plan
    (`solver.job.job.Job.run`), which plan and what it replaced."""

    spec: str
    kind: str
    solve: Any
    outcome: Any
    files: dict[str, Path] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    adopted: str | None = None
    plan: Any = None  # the plan certified (`specs.Plan`; None where the certificate took the best sample)

    @property
    def certificate(self):
        """The certificate (`solver.certify.certificate.Certificate`)."""
        return self.outcome.certificate

    @property
    def verdict(self) -> str:
        return str(self.certificate.verdict)

    @property
    def positive(self) -> bool:
        """Whether the verdict is positive (`proven`, `certified`, `best_found`: the command
        line's exit code 0; docs/design.md, "Verdicts")."""
        return bool(self.certificate.positive)

    @property
    def failed_steps(self) -> list[str]:
        """Solver steps that failed (the plan is valid but its bound and gap are weaker)."""
        return list(getattr(self.solve, "failed_steps", None) or [])

    def certificate_dict(self) -> dict[str, Any]:
        """What certificate.json holds: the certificate, the solve's report under ``"solve"``."""
        data = self.certificate.to_dict()
        if self.adopted:
            data["adopted"] = self.adopted
        if self.solve is not None:
            data["solve"] = self.solve.to_dict()
        return data

    def summary(self) -> str:
        """The certificate's summary (its verdict's sentence first), the solve's, the files."""
        parts = [self.certificate.summary()] + ([self.adopted] if self.adopted else [])
        if self.solve is not None and hasattr(self.solve, "summary"):
            parts.append(self.solve.summary())
        if self.files:
            parts.append("files: " + ", ".join(str(path) for path in self.files.values()))
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: verdict, certificate (without the solve), solve, files, seconds (the
        job's phases), certify_seconds (the last certification's steps: bounds, prepare, sampling,
        verdict, baselines, other design)."""
        return {
            "spec": self.spec,
            "kind": self.kind,
            "verdict": self.verdict,
            "certificate": self.certificate.to_dict(),
            "solve": None if self.solve is None else self.solve.to_dict(),
            "files": {name: str(path) for name, path in self.files.items()},
            "seconds": dict(self.seconds),
            "certify_seconds": dict(self.outcome.seconds or {}),
            "adopted": self.adopted,
        }
