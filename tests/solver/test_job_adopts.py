"""The main job's answer is the best plan it measured: a plan met while certifying that beats the
solve's answer beyond noise becomes the plan (`solver.job.job.Job.run`,
`solver.certify.certification.Certification.better_plans`), is certified in its place, and the
job says so -- in the result, the JSON, certificate.json, plan.yaml and the report."""

from __future__ import annotations

import json

from tasksolve.simulate import AnalyticOracle
from tasksolve.solver.job import Job
from tasksolve.solver.job.binding import BindingStrategy
from tasksolve.specs import Plan, load_plan, load_spec

SPEC = "t2-ipfwd-l1-x2"


class WorstAnswer(BindingStrategy):
    """The binding strategy with its answer swapped for the comparison's worst measured plan
    (the naive baseline's worst: 25% below the optimum on this spec)."""

    def solve(self, say):
        report = super().solve(say)
        worst = min((row for row in report.comparison if row.contexts), key=lambda row: row.simulated)
        report.plan = Plan.from_contexts(self.spec, list(worst.contexts))
        report.measured, report.method = AnalyticOracle(self.spec).evaluate(report.plan), worst.method
        return report


def test_a_plan_met_while_certifying_that_beats_the_answer_is_the_plan(tmp_path):
    spec = load_spec(SPEC)
    job = Job(spec, tmp_path / "out", oracle_kind="analytic", methods="cpsat,random,balanced", seed=1)
    job.strategy = WorstAnswer(spec, job.settings)
    result = job.run()
    assert result.adopted is not None and "met while certifying" in result.adopted
    closed = AnalyticOracle(spec)
    worst = closed.evaluate(job.strategy.report.plan).throughput
    adopted = closed.evaluate(result.plan).throughput
    assert adopted > worst * 1.05  # the adopted plan is better, by far more than any noise
    assert result.certificate.plan_performance.value == adopted
    assert load_plan(tmp_path / "out" / "plan.yaml", spec).contexts(spec) == result.plan.contexts(spec)
    assert result.to_dict()["adopted"] == result.adopted
    assert json.loads((tmp_path / "out" / "certificate.json").read_text())["adopted"] == result.adopted
    assert "met while certifying" in (tmp_path / "out" / "report.html").read_text()
    assert result.positive  # the closed form's optimum, proven by CP-SAT's bound


def test_an_answer_nothing_beats_is_kept(tmp_path):
    spec = load_spec(SPEC)
    result = Job(spec, tmp_path / "out", oracle_kind="analytic", methods="cpsat,random", seed=1).run()
    assert result.adopted is None and result.outcome.better == []
    assert result.plan.contexts(spec) == result.solve.plan.contexts(spec)
