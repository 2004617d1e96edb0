"""The rigorous side of a certificate: CP-SAT's (or the configuration LP's) bound on the closed form.

EVT estimates the optimum; only a solver proves anything about it, and only for the model it
solved: the closed form (`simulate.analytic`, docs/design.md "Oracles").  A bound therefore
applies when plans are measured with the ``analytic`` oracle; for the simulation no rigorous
bound exists, the closed form's bound is recorded for information and the EVT estimate stands in.

`Rigorous` is what `solver.certify.verdict.Evidence` takes (bound, proven optimum, failed
steps); it is built from a `solve_binding` run (`closed_form_bound`, used by ``certify``) or from
the solve report of the main job (`from_report`, used by ``run``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: a relative gap this small between CP-SAT's objective and bound is a proof of optimality
#: (CP-SAT's own tolerance on the scaled integer model, see `solver.binding.cpsat`)
PROVEN_GAP = 1e-6


@dataclass
class Rigorous:
    status: str  # CP-SAT's status: OPTIMAL, FEASIBLE, ...
    bound: float | None  # on the closed form's optimum (upper for throughput)
    bound_source: str | None  # "cpsat" or "configuration LP"
    objective: float | None  # the closed-form value of the solver's best plan
    contexts: list[int] | None  # that plan
    failed_steps: list[str] = field(default_factory=list)
    applies: bool = True  # False on the simulation: the bound is the model's, not the oracle's

    @property
    def proven_optimum(self) -> float | None:
        if self.objective is None or self.bound is None:
            return None
        if self.status == "OPTIMAL" or abs(self.bound - self.objective) <= PROVEN_GAP * abs(self.objective):
            return self.objective
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "bound": self.bound,
            "bound_source": self.bound_source,
            "objective": self.objective,
            "proven_optimum": self.proven_optimum,
            "failed_steps": self.failed_steps,
            "applies": self.applies,
            "note": (
                "a bound of the closed form, measured with the closed form: rigorous"
                if self.applies
                else "a bound of the closed form only: no rigorous bound exists for the simulation, "
                "the EVT estimate stands in"
            ),
        }


def closed_form_bound(
    spec, *, time_limit: float, workers: int = 1, seed: int = 0, oracle_kind: str = "analytic"
) -> Rigorous:
    """Solve the closed form with `solve_binding` (local search, CP-SAT, configuration LP)."""
    from tasksolve.solver.binding.cpsat import solve_binding
    from tasksolve.solver.binding.problem import BindingProblem

    result = solve_binding(
        BindingProblem(spec), objective=spec.objective, time_limit=time_limit, workers=workers, seed=seed
    )
    best = result.best
    failed = [step.step for step in result.failed_steps]
    if best is None:
        return Rigorous(result.status, None, None, None, None, failed, oracle_kind == "analytic")
    return Rigorous(
        result.status,
        _value(best.bound, spec),
        best.bound_source,
        _value(best.objective, spec),
        list(best.contexts),
        failed,
        oracle_kind == "analytic",
    )


def from_report(report, oracle_kind: str) -> Rigorous | None:
    """The rigorous part of the main job's `SolveReport` (None when CP-SAT did not run)."""
    if report.status in (None, "NOT_RUN") or report.bound is None:
        return None
    cpsat = report.details.get("cpsat", {})
    latency = report.objective == "latency"
    objective = None if report.model_objective is None else _oriented(report.model_objective, latency)
    return Rigorous(
        report.status,
        _oriented(report.bound, latency),
        cpsat.get("bound_source", "cpsat"),
        objective,
        None,
        list(report.failed_steps),
        oracle_kind == "analytic",
    )


def _oriented(raw: float, latency: bool) -> float:
    return abs(raw) if latency else raw


def _value(raw: float, spec) -> float:
    """CP-SAT's figure in the samples' orientation (packets/s, or a latency in seconds)."""
    return _oriented(raw, spec.objective == "latency")
