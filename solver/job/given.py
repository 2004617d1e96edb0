"""Certifying a plan given by the caller (``tasksolve certify``): no solve, no plan files.

The plan is the caller's (None: the certificate takes the best random plan it measured). The
bound is CP-SAT's on the closed form when the oracle is the closed form itself (then it is a proof
on the oracle, `solver.certify.bounds.closed_form_bound`); with another oracle there is none.
Binding specs only: a pipeline plan is certified by ``tasksolve run``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tasksolve.solver.errors import BadProblemError
from tasksolve.solver.job.settings import JobSettings
from tasksolve.solver.job.strategy import Strategy
from tasksolve.specs import Plan, Spec


class GivenPlan(Strategy):
    kind = "plan"
    plan_files = ()
    balanced = None

    def __init__(self, spec: Spec, settings: JobSettings, plan: Plan | None = None) -> None:
        super().__init__(spec, settings)
        self.given = plan

    def check(self) -> None:
        if self.spec.problem != "binding":
            raise BadProblemError(
                f"`problem: {self.spec.problem}`: certify a pipeline plan with `tasksolve run` "
                "(it solves and certifies against pipeline samples)"
            )

    def solve(self, say: Callable[[str], None] | None) -> None:
        return None

    @property
    def plan(self) -> Plan | None:
        return self.given

    def oracle_bounds(self) -> list[Any]:
        from tasksolve.solver.job.strategy import simulation_bounds

        return simulation_bounds(self.spec, self.settings.oracle_kind)

    def bound(self) -> Any:
        if self.settings.oracle_kind != "analytic":
            return None
        from tasksolve.solver.certify.bounds import closed_form_bound

        s = self.settings
        return closed_form_bound(
            self.spec, time_limit=s.time_limit, workers=s.workers, seed=s.seed, deterministic=s.deterministic
        )
