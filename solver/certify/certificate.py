"""The certificate: the plan, the estimated optimum (EVT, ASPLOS'12 section 3.3), the rigorous
bound when one exists (`solver.certify.bounds`), and the verdict (`solver.certify.verdict`).

Gaps are signed, ``(plan - reference) / |reference|`` (negative: the plan's figure is below the
reference), against the point estimate (``estimate``), the interval's far limit (``far_limit``:
the upper limit when maximising throughput, the lower one when minimising latency), the
rigorous bound (``bound``) and the proven optimum (``proven_optimum``); ``words`` says each in
words.  Every verdict and reason comes with one sentence (`verdict.VERDICTS`, ``reasons``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tasksolve.solver.certify.verdict import VERDICTS

DEFAULT_TARGET_GAP = 0.05


@dataclass
class Certificate:
    spec: str
    objective: str
    plan: dict[str, Any]
    plan_performance: dict[str, Any]
    samples: dict[str, Any]
    optimum: dict[str, Any]
    gap: dict[str, Any]
    target_gap: float
    verdict: str
    flags: list[str]
    seed: int
    versions: dict[str, str]
    basis: str = "EVT estimate"
    sentence: str = ""
    reasons: list[dict[str, str]] = field(default_factory=list)
    design: str = "random"
    bound: dict[str, Any] | None = None
    known_plans: list[dict[str, Any]] = field(default_factory=list)
    baselines: list[dict[str, Any]] = field(default_factory=list)
    evt: dict[str, Any] = field(default_factory=dict)
    sequential: list[dict[str, Any]] | None = None
    designs: list[dict[str, Any]] | None = None  # both designs' estimates (`solver.certify.compare`)

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["verdict_meaning"] = VERDICTS.get(self.verdict, "")
        return out

    def summary(self) -> str:
        from tasksolve.specs import display

        def show(value) -> str:
            if not isinstance(value, (int, float)) or value != value:
                return "none"
            return display.objective_value(value, self.objective)

        opt = self.optimum
        perf = self.plan_performance
        lines = [
            f"verdict: {self.verdict.replace('_', ' ')} ({self.basis}) -- {self.sentence}",
            f"plan: {display.with_half_width(perf['value'], perf.get('half_width'), self.objective)}",
            f"estimated optimum ({self.design} design, {self.samples['n']} samples, {self.samples['failed']} failed): "
            f"{show(opt['estimate'])}, {opt['confidence']:.0%} interval [{show(opt['lower'])}, {show(opt['upper'])}]",
        ]
        for entry in (self.designs or [])[1:]:
            lines.append(
                f"for comparison, {entry['design']} design ({entry['n']} samples, not used for the verdict): "
                + (
                    f"estimate {show(entry['estimate'])}, interval [{show(entry['lower'])}, {show(entry['upper'])}]"
                    + (" (best value hit twice or more: open)" if entry.get("top_atom") else "")
                    if entry.get("estimate") is not None
                    else f"no estimate ({entry.get('error')})"
                )
            )
        bound = self.bound
        if bound and bound.get("bound") is not None:
            proven = bound.get("proven_optimum")
            lines.append(
                f"bound ({bound.get('bound_source')}, CP-SAT {bound.get('status')}): {show(bound['bound'])}"
                + (f", proven optimum {show(proven)}" if proven is not None else "")
                + ("" if bound.get("applies") else " -- of the closed form only, not of this oracle")
            )
        lines.append("gaps: " + "; ".join(self.gap.get("words", [])) + f" (target {display.share(self.target_gap)})")
        for reason in self.reasons:
            lines.append(f"  - {reason['sentence']}")
        return "\n".join(lines)


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for package in ("tasksolve", "ortools", "simpy", "numpy", "scipy", "statsmodels"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = "unknown"
    return out
