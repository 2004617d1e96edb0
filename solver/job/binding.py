"""The main job's binding strategy: the binding methods side by side, CP-SAT's plan certified.

1. **Solve** with `solver.binding.compare.solve`: CP-SAT's K best plans of the closed form
   measured on the oracle, the best measured one the answer, beside the other methods.
   On a noisy oracle (command) the finalists and the unpinned run are raced
   (`solver.binding.noisy`): the answer is the race's best pinned plan, ties within ``zone``.
2. **Certify** against random binding plans or local optima (`solver.certify.designs`); the
   bound is CP-SAT's (`solver.certify.bounds.from_report`: a proof on the closed form, for
   information on another oracle); every measured plan of the comparison is a known plan, and
   the certificate measures its own local-search probe (`solver.certify.designs.probe`).
3. **Report**: the comparison, the predictors' selection curves (TPDS Figure 8) and the answer's
   gain over the best pinning policy when policies ran (`solver.binding.policies`).
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from tasksolve.solver.binding.report import SolveReport
from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.job.strategy import Strategy
from tasksolve.specs import Plan
from tasksolve.specs.objective import Objective


class BindingStrategy(Strategy):
    kind = "binding"
    report: SolveReport

    def adopt(self, better: KnownPlan) -> str | None:
        """Certify `better` in the answer's place (once): the job's answer is the best plan it
        measured, not the solve's when the certification met a better one."""
        if self.adopted is not None or better.contexts is None:
            return None
        self.adopted = Plan.from_contexts(self.spec, list(better.contexts))
        objective = Objective.of(self.spec.objective)
        old = objective.format(self.report.value, self.report.measured_half_width)
        self.adoption = (
            f"the plan is the {better.plan} ({objective.format(better.value, better.half_width)}), met while "
            f"certifying: it beat the {self.report.method} answer ({old}) beyond noise"
        )
        return self.adoption

    def solve(self, say: Callable[[str], None] | None) -> SolveReport:
        from tasksolve.solver.binding.compare import solve

        s = self.settings
        self.report = solve(
            self.spec,
            list(s.methods),
            oracle_kind=s.oracle_kind,
            top_k=s.top_k,
            time_limit=s.solve_seconds(),
            workers=s.workers,
            seed=s.seed,
            samples=s.solve_sample_size(self.spec),
            deterministic=s.deterministic,
            zone=s.zone,
            progress=say,
        )
        return self.report

    def bound(self) -> Any:
        from tasksolve.solver.certify.bounds import from_report

        return from_report(self.report, self.settings.oracle_kind)

    def oracle_bounds(self) -> list[Any]:
        """The simulation's fluid bound (`strategy.simulation_bounds`); where HiGHS cannot solve
        its LP (a capacity of 1e-300 beside demands near 1 puts coefficients past what HiGHS
        takes), none, and the step is a failed one: the job goes on, its files are written, and
        the exit code says the bound is missing."""
        from tasksolve.solver.errors import SolverFailed
        from tasksolve.solver.job.strategy import simulation_bounds

        try:
            return simulation_bounds(self.spec, self.settings.oracle_kind)
        except SolverFailed as exc:
            self.report.failed_steps.append(f"the simulation's fluid bound ({exc})")
            return []

    def known_plans(self) -> list[KnownPlan]:
        """Every plan of the comparison measured on the oracle, and the answer (natural values),
        each with its measurement's half-width: a simulated figure is never taken as exact (a
        plan's figure a little above a true bound, within its half-width, is no contradiction)."""
        report = self.report
        out = [
            KnownPlan(f"{row.method} plan", float(row.simulated), _half_width(row.half_width), tuple(row.contexts))
            for row in report.comparison
            if row.contexts is not None and row.simulated is not None
        ]
        if report.value is not None:
            out.append(
                KnownPlan(f"{report.method} answer", float(report.value), _half_width(report.measured_half_width))
            )
        return out

    def report_sections(self) -> dict[str, Any]:
        objective, best = Objective.of(self.report.objective), self.report.best_measured()
        curves = {}
        for name, details in self.report.details.predictors.items():
            losses = [objective.loss(v, best) for v in details.selection_curve]
            if losses and all(loss is not None for loss in losses):
                curves[name] = losses
        sections = {"comparison": self.report.to_dict()["comparison"], "selection_curves": curves}
        paragraphs = [] if self.adopted is None else [f"<p><strong>{escape(self.adoption)}</strong></p>"]
        if self.report.noise is not None:  # whether pinning helps, the OS baseline, the host's noise floor
            paragraphs.append(f"<p><strong>{escape(self.report.noise.headline(objective))}</strong></p>")
        if self.report.policy_gain is not None:  # over the best pinning policy (solver.binding.policies)
            gain = f"the {self.report.method} plan: {self.report.policy_gain.sentence(objective)}"
            paragraphs.append(f"<p>{escape(gain)}</p>")
        if paragraphs:
            sections["methods_html"] = "".join(paragraphs)
        return sections


def _half_width(half_width: float | None) -> float:
    """A half-width as a known plan takes it: 0 where there is none; an unbounded one stays."""
    return 0.0 if half_width is None else float(half_width)
