"""The oracle interface: protocol, batches, seeds, workers, failures."""

from __future__ import annotations

import pytest

from tasksolve.simulate import AnalyticOracle, Oracle, OracleError, SimulationOracle, make_oracle, plan_seed
from tasksolve.solver.binding.samplers import to_plans, uniform_plans
from tasksolve.specs import load_spec

SPEC = load_spec("t2-ipfwd-intmul-x2").model_copy(
    update={
        "oracle": load_spec("t2-ipfwd-intmul-x2").oracle.model_copy(
            update={
                "service": load_spec("t2-ipfwd-intmul-x2").oracle.service.model_copy(
                    update={"distribution": "exponential"}
                ),
                "precision": 0.05,
            }
        )
    }
)


def test_both_oracles_fit_the_protocol_and_make_oracle_picks_them():
    for kind, cls in (("des", SimulationOracle), ("analytic", AnalyticOracle)):
        oracle = make_oracle(SPEC, kind)
        assert isinstance(oracle, cls) and isinstance(oracle, Oracle) and oracle.name == kind
    assert isinstance(make_oracle(SPEC), SimulationOracle)  # the spec's oracle.kind
    with pytest.raises(OracleError, match="command"):  # registered, but this spec gives no command
        make_oracle(SPEC, "command")


def test_evaluate_many_does_not_depend_on_the_number_of_workers():
    rows = uniform_plans(SPEC, 5, seed=9)
    oracle = SimulationOracle(SPEC)
    one = oracle.evaluate_many(list(rows), seed=4, workers=1)
    two = oracle.evaluate_many(to_plans(SPEC, rows), seed=4, workers=2)
    assert [m.to_dict() for m in one] == [m.to_dict() for m in two]
    # plan i uses plan_seed(base, i): the batch is reproducible one plan at a time
    assert oracle.evaluate(rows[3], seed=plan_seed(4, 3)).to_dict() == one[3].to_dict()
    assert len({m.throughput for m in one}) == 5


def test_plan_seeds_differ_between_plans_and_bases():
    seeds = {plan_seed(base, i) for base in range(5) for i in range(50)}
    assert len(seeds) == 250


def test_analytic_oracle_matches_its_batch_model():
    oracle = AnalyticOracle(SPEC)
    rows = uniform_plans(SPEC, 10, seed=2)
    batch = oracle.batch().evaluate(rows)
    assert [m.throughput for m in oracle.evaluate_many(rows)] == pytest.approx(list(batch.total), rel=1e-12)


def test_a_failing_plan_raises_an_oracle_error_from_the_workers():
    oracle = SimulationOracle(SPEC)
    bad = [0, 0, 1, 2, 3, 4]  # two threads on one context
    with pytest.raises(OracleError, match="same hardware context"):
        oracle.evaluate_many([uniform_plans(SPEC, 1, seed=0)[0], bad], workers=2)
