"""The main job as one object: settings resolved once, one strategy per problem kind, typed
results (`solver.job`, `solver.binding.report`)."""

from __future__ import annotations

import json

import pytest

import tasksolve
from tasksolve.solver.errors import BadProblemError
from tasksolve.solver.job import Job, JobSettings, strategy_for
from tasksolve.solver.job.binding import BindingStrategy
from tasksolve.solver.job.given import GivenPlan
from tasksolve.solver.job.pipeline import PipelineStrategy
from tasksolve.specs import load_spec
from tasksolve.specs.objective import Objective

SPEC = "t2-ipfwd-intadd-x2"
PIPELINE = "xeon-lata-dag"


def test_unset_options_take_the_spec_values_once():
    spec = load_spec(SPEC)
    s = JobSettings.resolve(spec)
    assert (s.time_limit, s.seed, s.top_k, s.oracle_kind) == (
        spec.search.time_limit,
        spec.search.seed,
        spec.search.top_k,
        spec.oracle.kind,
    )
    policies = ("compact", "compact-cores", "scatter", "distrib")  # what a person would otherwise pin
    assert s.methods == ("cpsat", "random", "balanced", *policies) and s.workers == (spec.search.workers or 1)
    given = JobSettings.resolve(spec, "random", seed=7, time_limit=2, oracle_kind="analytic", samples=None)
    assert (given.seed, given.time_limit, given.oracle_kind) == (7, 2.0, "analytic")
    # unset: the certifier's own rule (local optima stop once the verdict is decided; the spec's
    # certify.samples or the design's default is only a ceiling), so the settings pass None on
    assert given.samples is None and s.certify_settings().samples is None
    assert (given.confidence, given.n_init, given.max_samples) == (
        spec.certify.confidence,
        spec.certify.n_init,
        spec.certify.max_samples,
    )
    assert JobSettings.resolve(spec, design="random", samples=300).certify_settings().samples == 300
    assert given.methods == ("cpsat", "random")  # CP-SAT always runs: its plan is the answer
    assert JobSettings.resolve(spec, "all").methods == (
        *("cpsat", "blackbox", "tsbsched", "random", "balanced"),
        *("compact", "compact-cores", "scatter", "distrib", "os"),  # the pinning policies
    )
    assert JobSettings.resolve(spec, "scatter,cpsat").methods == ("cpsat", "scatter")
    assert JobSettings.resolve(spec, seed=0).seed == 0  # 0 is a value, not "unset"


def test_bad_options_are_refused_in_words():
    spec = load_spec(SPEC)
    with pytest.raises(BadProblemError, match="unknown job option.*sample_size"):
        JobSettings.resolve(spec, sample_size=10)
    with pytest.raises(BadProblemError, match="unknown method `cpsta`.*cpsat"):
        JobSettings.resolve(spec, "cpsta")
    with pytest.raises(BadProblemError, match="--load applies to pipeline specs"):
        JobSettings.resolve(spec, load=0.9)


def test_one_strategy_per_problem_kind():
    binding, pipeline = load_spec(SPEC), load_spec(PIPELINE)
    assert isinstance(strategy_for(binding, JobSettings.resolve(binding)), BindingStrategy)
    settings = JobSettings.resolve(pipeline, load=0.8)
    assert isinstance(strategy_for(pipeline, settings), PipelineStrategy) and settings.load == 0.8
    assert len(settings.methods) > 3  # the binding default means every pipeline method
    with pytest.raises(BadProblemError, match="--deterministic applies to binding specs"):
        JobSettings.resolve(pipeline, deterministic=True)
    with pytest.raises(BadProblemError, match="tasksolve run"):
        Job(pipeline, "unused", settings, strategy=GivenPlan(pipeline, settings)).run()


@pytest.mark.parametrize("objective", ["total_throughput", "latency"])
def test_the_solve_report_is_typed_and_natural(objective):
    spec = load_spec(SPEC).model_copy(update={"objective": objective})
    # deterministic: the plan (and its label, cpsat or local-search) must not depend on the load
    report = tasksolve.solve(
        spec, "random,balanced", oracle_kind="analytic", time_limit=3, solve_samples=300, deterministic=True
    )
    kind = Objective.of(objective)
    assert report.details.samples == 300 and report.details.cpsat.status in ("OPTIMAL", "FEASIBLE")
    rows = [r for r in report.comparison if r.simulated is not None]
    assert all(r.simulated > 0 and r.predicted > 0 for r in rows)  # natural orientation: no negative latency
    best = kind.best(r.simulated for r in rows)
    assert report.value == rows[0].simulated and not any(kind.better(r.simulated, report.value) for r in rows)
    data = report.to_dict()
    assert data["details"]["cpsat"]["bound_source"] == report.details.cpsat.bound_source
    assert all(row["loss"] >= 0 for row in data["comparison"] if "loss" in row)
    assert min(row["loss"] for row in data["comparison"] if "loss" in row) == kind.loss(best, best) == 0.0
    assert report.summary().splitlines()[0] == f"cpsat plan: {objective} {kind.format(report.value)} measured"


def test_the_output_directory_is_taken_before_solving(tmp_path):
    spec = load_spec(SPEC)
    out = tmp_path / "out"
    first = tasksolve.certify(spec, out, oracle_kind="analytic", samples=30, design="random", compare_samples=0)
    assert first.kind == "plan" and first.solve is None and set(first.files) == {"certificate.json", "samples.jsonl"}
    written = json.loads((out / "certificate.json").read_text())
    assert written["verdict"] == first.verdict == first.to_dict()["verdict"] and "solve" not in written
    with pytest.raises(Exception, match="resume=True"):
        tasksolve.run(spec, out, oracle_kind="analytic", samples=30, time_limit=2)
    assert not (out / "plan.yaml").exists()  # refused before the solve wrote anything


def test_the_pipeline_solve_is_typed_too():
    from tasksolve.specs import load_spec_text
    from tests.pipeline.helpers import spec_text

    text = spec_text({"a": 200, "b": 300, "c": 250}, [("a", "b", 64), ("b", "c", 64)], latency_max="2us")
    report = tasksolve.solve(load_spec_text(text), "lata,parallel", oracle_kind="analytic", time_limit=2)
    first, *others = report.summary().splitlines()
    assert first.startswith(f"{report.chosen} plan (") and len(others) >= len(report.results) - 1
    assert report.to_dict()["method"] == report.chosen and set(report.results) >= {"lata", "parallel"}


def test_the_comparisons_plans_are_known_with_their_half_widths():
    """A plan the comparison simulated is a known plan with its measurement's half-width, never
    an exact figure: on t2-constrained CP-SAT's plan simulates at 4.435 +- 0.019 Mpps beside the
    fluid LP's true bound of 4.431 Mpps, which an exact reading took for a contradiction."""
    spec = load_spec("t2-constrained")
    strategy = BindingStrategy(spec, JobSettings.resolve(spec, time_limit=5, workers=1, seed=0))
    strategy.solve(None)
    known = {k.plan: k for k in strategy.known_plans()}
    rows = [r for r in strategy.report.comparison if r.contexts is not None and r.simulated is not None]
    assert rows and all(known[f"{r.method} plan"].half_width == (r.half_width or 0.0) for r in rows)
    assert any(k.half_width > 0 for k in known.values())  # the simulation's figures are noisy
    answer = known[f"{strategy.report.method} answer"]
    assert answer.half_width == strategy.report.measured_half_width > 0
