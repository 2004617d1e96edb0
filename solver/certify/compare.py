"""Both sampling designs side by side: the other design's estimate beside the certificate's.

The certificate's verdict rests on one design (`solver.certify.designs.DEFAULT_DESIGN`); the
truth study (BENCHMARKS.md, "Certificates against the truth") shows how differently the two
designs estimate the same optimum, so the certificate also carries the other design's estimate
from a small sample of its own (`DEFAULT_COMPARE` plans, ``samples-<design>.jsonl`` beside
``samples.jsonl``, resumable the same way).  It is shown, never used for the verdict: at that size
it is below the verdict's minimum sample (`solver.certify.verdict.MIN_SAMPLES`).

Each design's entry (``certificate["designs"]``, drawn by `solver.report.html.estimates_figure`)
says what its sample supports: the best value as an atom (`evt.atom`: interval open on the side
of improvement) when it is hit twice or more, else the ASPLOS'12 estimate (`evt.analyze`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tasksolve import evt
from tasksolve.specs.objective import Objective

if TYPE_CHECKING:
    from tasksolve.solver.certify.certificate import Certificate
    from tasksolve.solver.certify.settings import CertifySettings
    from tasksolve.solver.pipeline.problem import PipelineProblem
    from tasksolve.specs import Spec

#: plans of the other design measured for the comparison (0: none).  200 keeps `tasksolve run
#: t2-ipfwd-intadd-x2` within a few seconds of its time without it (BENCHMARKS.md)
DEFAULT_COMPARE = 200


def resolve(requested: int | None, oracle_kind: str, primary_n: int) -> int:
    """The other design's sample size: `requested`, or by default `DEFAULT_COMPARE` plans but no
    more than the certificate's own sample, and none on the command oracle (each plan is a run of
    the user's program)."""
    if requested is not None:
        return requested
    return 0 if oracle_kind == "command" else min(DEFAULT_COMPARE, primary_n)


def other_design(design: str) -> str:
    return "random" if design == "local-optima" else "local-optima"


def design_entry(values: np.ndarray, design: str, *, minimize: bool, confidence: float, seed: int) -> dict[str, object]:
    """What one design's sample says of the optimum (module docstring); values as sampled."""
    entry: dict[str, object] = {"design": design, "n": int(values.size), "confidence": confidence}
    if values.size == 0:
        return {**entry, "estimate": None, "lower": None, "upper": None, "error": "no sample"}
    entry["best"] = float(values.min() if minimize else values.max())
    atom = evt.top_atom(values, minimize=minimize, confidence=confidence)
    if atom is not None:
        lower, upper = atom.interval
        return {**entry, "estimate": atom.best, "lower": lower, "upper": upper, "top_atom": atom.to_dict()}
    try:
        result = evt.analyze(values, minimize=minimize, confidence=confidence, seed=seed, gof_bootstrap=0)
    except evt.EVTError as exc:
        return {**entry, "estimate": None, "lower": None, "upper": None, "error": str(exc)}
    return {
        **entry,
        "estimate": result.estimate,
        "lower": result.lower,
        "upper": result.upper,
        "flags": list(result.flags),
    }


def primary_entry(certificate) -> dict[str, object]:
    """The certificate's own design as a `design_entry` (read from the typed certificate)."""
    opt = certificate.optimum
    entry: dict[str, object] = {
        "design": certificate.design,
        "n": certificate.samples.n,
        "best": certificate.samples.best,
    }
    entry.update({"estimate": opt.estimate, "lower": opt.lower, "upper": opt.upper, "confidence": opt.confidence})
    if opt.top_atom is not None:
        entry["top_atom"] = opt.top_atom.to_dict()
    else:
        entry["flags"] = list(certificate.flags)
    return entry


def compare_designs(
    spec: Spec,
    out_dir: Path,
    certificate: Certificate,
    samples: int,
    settings: CertifySettings,
    pipeline: PipelineProblem | None = None,
    deadline: float | None = None,
) -> list[dict[str, object]]:
    """[the certificate's design, the other design on `samples` plans of its own] (module
    docstring), measured as `settings` say (seed, workers, timeout, oracle, scheduler, resume,
    force), on `pipeline` plans when given, stopping at `deadline` (a `time.monotonic()` reading)."""
    design = other_design(certificate.design)
    s = settings
    service = s.service(spec, Path(out_dir) / f"samples-{design}.jsonl", samples, design, pipeline, deadline)
    service.open(resume=s.resume, force=s.force)
    service.ensure(samples)
    minimize = Objective.of(spec.objective).minimize
    confidence = certificate.optimum.confidence
    other = design_entry(service.values(samples), design, minimize=minimize, confidence=confidence, seed=s.seed)
    return [primary_entry(certificate), other]
