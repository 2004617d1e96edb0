"""The answer of `solve` is the best measured plan of the comparison, labelled with the method that
produced it (`solver.binding.compare`, "The answer"): CP-SAT's plan unless another measured plan
beats it beyond both half-widths, and never labelled ``cpsat`` when CP-SAT did not produce it."""

from __future__ import annotations

import dataclasses

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding import compare
from tasksolve.solver.binding import model as model_module
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import load_spec


def _comparison(spec):
    return compare._Comparison(spec, "analytic", 0, 1, lambda _: None, lambda _: None)


def _with(measurement, value: float, half: float):
    return dataclasses.replace(measurement, throughput=value, half_width=half)


def test_a_plan_beyond_the_noise_of_cpsat_s_is_the_answer_and_a_tie_is_not():
    """CP-SAT's plan measured 10.0 +- 0.1; a balanced plan at 10.15 +- 0.1 is within both
    half-widths (10.15 - 10.0 = 0.15 < 0.2): a tie, CP-SAT's rank keeps it; at 10.25 it is beyond
    (0.25 > 0.2): the balanced plan is the answer, labelled balanced."""
    spec = load_spec("t2-ipfwd-intadd-x2")
    run = _comparison(spec)
    model_plan = [0, 1, 2, 8, 9, 10]
    other_plan = [0, 8, 16, 24, 32, 40]
    base = run.oracle.evaluate(compare.Plan.from_contexts(spec, model_plan))
    run.measured[tuple(model_plan)] = _with(base, 10.0e6, 0.1e6)
    run.labels[tuple(model_plan)] = "cpsat"
    model = ("cpsat", model_plan, run.measured[tuple(model_plan)])
    run.measured[tuple(other_plan)] = _with(base, 10.15e6, 0.1e6)
    run.labels[tuple(other_plan)] = "balanced"
    assert run.answer(model)[0] == "cpsat"
    run.measured[tuple(other_plan)] = _with(base, 10.25e6, 0.1e6)
    method, contexts, measurement = run.answer(model)
    assert (method, contexts, measurement.throughput) == ("balanced", other_plan, 10.25e6)


def test_without_cpsat_the_best_measured_plan_is_the_answer():
    spec = load_spec("t2-ipfwd-intadd-x2")
    run = _comparison(spec)
    plans = [[0, 1, 2, 8, 9, 10], [0, 8, 16, 24, 32, 40], [0, 1, 2, 3, 4, 5]]
    for plan, label in zip(plans, ["random", "balanced", "tsbsched"]):
        run.measure([plan], label)
    values = BatchModel(spec).evaluate(plans).total
    method, contexts, _ = run.answer(None)
    assert contexts == plans[int(values.argmax())]
    assert method == ["random", "balanced", "tsbsched"][int(values.argmax())]


def test_a_plan_cpsat_did_not_produce_is_not_labelled_cpsat(monkeypatch):
    """The CP-SAT model refused as too large: the plan handed on comes from the local search, and
    the answer and its row say so; the answer is never below any plan measured in the comparison."""
    spec = load_spec("t2-ipfwd-intadd-x2")
    literals = sum(len(row) for row in BindingProblem(spec).allowed)
    monkeypatch.setattr(model_module, "MAX_LITERALS", literals - 1)
    report = compare.solve(
        spec,
        ["cpsat", "random", "balanced"],
        oracle_kind="analytic",
        time_limit=10,
        workers=1,
        samples=200,
        deterministic=True,
    )
    assert report.method == "local-search"
    assert report.comparison[0].method.startswith("local-search top")
    assert "found by the local search" in report.comparison[0].note
    best = max(r.simulated for r in report.comparison if r.contexts is not None)
    assert report.measured.throughput >= best * (1 - 1e-12)


def test_cpsat_without_a_plan_gets_no_row_and_the_baselines_answer(monkeypatch):
    """The CP-SAT model refused as too large and no local search: CP-SAT produced no plan, so it has
    no row, no bound and no credit; the best plan the baselines measured is the answer (before, the
    whole solve failed with "CP-SAT found no plan")."""
    import functools

    spec = load_spec("t2-ipfwd-intadd-x2")
    literals = sum(len(row) for row in BindingProblem(spec).allowed)
    monkeypatch.setattr(model_module, "MAX_LITERALS", literals - 1)
    monkeypatch.setattr(compare, "solve_binding", functools.partial(compare.solve_binding, local_search=False))
    report = compare.solve(
        spec, ["cpsat", "random", "balanced"], oracle_kind="analytic", time_limit=10, workers=1, samples=200,
        deterministic=True,
    )  # fmt: skip
    assert report.status == "MODEL_TOO_LARGE"
    assert report.bound is None and report.model_objective is None
    assert not any(r.method.startswith(("cpsat", "local-search")) for r in report.comparison)
    assert report.method in ("random", "balanced")
    best = max(r.simulated for r in report.comparison if r.contexts is not None)
    assert report.measured.throughput == best
    assert report.details.cpsat.found_by is None and report.details.cpsat.notes


def test_the_closed_form_of_no_plans_is_empty():
    """A sample that every constraint filtered out evaluates to empty figures (before: a ValueError
    from `np.concatenate` inside `uniform_plans`)."""
    import numpy as np

    spec = load_spec("t2-ipfwd-intadd-x2")
    result = BatchModel(spec).evaluate(np.zeros((0, len(spec.threads)), dtype=int))
    assert result.total.shape == (0,) and result.per_instance.shape == (0, len(spec.instances))
    assert result.values("latency").shape == (0,)


def test_no_plan_from_any_method_on_an_impossible_spec_says_infeasible():
    """Six threads, at most one per socket on three sockets, and a capacity of 1e-300 (CP-SAT's
    model refused as too large): the random sample finds no plan and CP-SAT none; the answer is
    the placement check's reason, not "CP-SAT found no plan"."""
    import pytest

    from tasksolve.solver.errors import Infeasible
    from tasksolve.specs.loader import load_spec_text

    spec = load_spec_text(
        """
tasksolve: 1
name: capped
topology:
  name: three
  clock: 1GHz
  levels: [{name: socket, count: 3}, {name: core, count: 4}, {name: pipe, count: 1}]
  resources: [{name: r0, level: socket, capacity: 1e-300}]
applications:
  app0:
    tasks: {t0: {cycles: 50}, t1: {cycles: 50}, t2: {cycles: 50, demand: {r0: 0.0004}}}
    edges: [{from: t0, to: t1, bytes: 0}, {from: t0, to: t2, bytes: 0}]
workload: [{app: app0, instances: 2}]
constraints: {max_threads: {socket: 1}}
""",
        "<capped>",
        feasibility=False,
    )
    with pytest.raises(Infeasible, match="leaves room for 3 of the 6 threads"):
        compare.solve(
            spec, ["cpsat", "random", "balanced"], oracle_kind="analytic", time_limit=3, workers=1, samples=100,
            deterministic=True,
        )  # fmt: skip
