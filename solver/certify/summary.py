"""The certificate in the terminal: the verdict's sentence first, the evidence after.

Reads the typed `solver.certify.certificate.Certificate` by attribute; the report
(`solver.report.html`) says the same things in the same order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from tasksolve.specs.oracles import noun

if TYPE_CHECKING:
    from tasksolve.solver.certify.certificate import Certificate


class Ends(Protocol):
    """An interval's ends (a certificate's `Optimum`, a design's entry): None where it is open."""

    @property
    def lower(self) -> float | None: ...

    @property
    def upper(self) -> float | None: ...


def show_value(value: float | None, objective: str) -> str:
    from tasksolve.specs.objective import Objective

    if not isinstance(value, (int, float)) or value != value:
        return "none"
    if value in (float("inf"), float("-inf")):
        return "open"
    return Objective.of(objective).format(value)


def interval_text(optimum: Ends, objective: str) -> str:
    """``[lower, upper]``, an open end written as such (``[10.94 Mpps, open)``): an end that is
    infinite, or null in the JSON (the interval has no finite limit on that side)."""
    lower = "open" if optimum.lower is None else show_value(optimum.lower, objective)
    upper = "open" if optimum.upper is None else show_value(optimum.upper, objective)
    left = "(" if lower in ("open", "none") else "["
    right = ")" if upper in ("open", "none") else "]"
    return f"{left}{lower}, {upper}{right}"


class _Interval:
    def __init__(self, lower, upper) -> None:
        self.lower, self.upper = lower, upper


def summary_text(cert: Certificate) -> str:
    """The answer (`answer_lines`), then the evidence (`evidence_lines`)."""
    return "\n".join(answer_lines(cert) + evidence_lines(cert))


def answer_lines(cert: Certificate) -> list[str]:
    """What a person reads first: the verdict's sentence, the verdict with its exit code, the plan's
    value with its half-width on its oracle."""
    from tasksolve.specs.objective import Objective

    perf = cert.plan_performance
    return [
        cert.sentence,
        f"verdict: {cert.verdict} (exit {cert.exit_code}; basis: {cert.basis})",
        f"plan: {Objective.of(cert.objective).format(perf.value, perf.half_width)} on the " + noun(perf.oracle),
    ]


def evidence_lines(cert: Certificate) -> list[str]:
    """The evidence behind the verdict: the sample, the estimated optimum and its interval, the
    other designs, the bounds, the gaps, the oracle's noise and the reasons."""
    from tasksolve.specs import display

    def show(value) -> str:
        return show_value(value, cert.objective)

    opt, samples = cert.optimum, cert.samples
    lines = [
        f"sample: {samples.n} {samples.draws} ({samples.failed} failed)"
        + (f", {display.count(samples.classes, 'placement class')}" if samples.classes else ""),
    ]
    if samples.covers:
        lines.append(f"the draw bound covers {samples.covers}")
    if opt.estimate is None:
        lines.append("estimated optimum: none (" + opt.nulls.get("estimate", "no estimate") + ")")
    else:
        lines.append(
            f"estimated optimum ({opt.source}): {show(opt.estimate)}, {opt.confidence:.0%} interval "
            f"{interval_text(opt, cert.objective)}"
            + (
                f"; one more draw beats the best with probability at most {opt.beat_bound:.2%}"
                if opt.beat_bound
                else ""
            )
        )
    for entry in (cert.designs or [])[1:]:
        lines.append(
            f"for comparison, {entry['design']} design ({entry['n']} samples, not used for the verdict): "
            + (
                f"estimate {show(entry['estimate'])}, interval "
                + interval_text(_Interval(entry.get("lower"), entry.get("upper")), cert.objective)
                + (" (best value hit twice or more: open)" if entry.get("top_atom") else "")
                if entry.get("estimate") is not None
                else f"no estimate ({entry.get('error')})"
            )
        )
    for bound in cert.bounds:
        where = ", ".join(part for part in (bound.source, bound.status) if part)  # no solver: no status
        lines.append(
            f"{bound.label} ({where}): {show(bound.value)}"
            + (f", proven optimum {show(bound.proven_optimum)}" if bound.proven_optimum is not None else "")
            + (f"; the plan's own bound {show(bound.plan_bound)}" if bound.plan_bound is not None else "")
        )
    for step in (cert.budget or {}).get("short") or []:  # the certify budget's steps that ran short
        lines.append(f"ran short of the certify budget ({cert.budget['seconds']:.0f} s): {step}")
    lines.append("gaps: " + "; ".join(cert.gap.words) + f" (target {display.share(cert.target_gap)})")
    if cert.noise:
        lines.append(noise_text(cert.noise, show))
    for reason in cert.reasons:
        lines.append(f"  - {reason.sentence}")
    return lines


def noise_text(noise: dict[str, object], show: Callable[[float | None], str]) -> str:
    """The stochastic oracle's line (`solver.certify.noisy`): the host's noise and the tail test."""
    floor = noise.get("noise_floor")
    parts = [
        f"host noise floor {floor:.1%} (CV of the fresh runs)" if floor is not None else "host noise floor unknown"
    ]
    tail = noise.get("tail")
    if tail:
        ratio = "unknown" if tail.get("share") is None else f"{tail['share']:.0%}"
        parts.append(
            f"noise share of the tail's variance {ratio} "
            + ("(EVT fitted)" if tail["admitted"] else f"(EVT not fitted: above {tail['max_share']:.0%})")
        )
    return "noise: " + "; ".join(parts)
