"""`specs.objective.Objective`: one direction, one unit, one formatter for every objective."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tasksolve.simulate.analytic import BatchModel
from tasksolve.simulate.oracle import make_oracle
from tasksolve.specs import Plan, load_spec
from tasksolve.specs.objective import OBJECTIVES, Objective

finite = st.floats(min_value=1e-12, max_value=1e12, allow_nan=False)


@pytest.mark.parametrize("name", OBJECTIVES)
def test_the_table(name):
    objective = Objective.of(name)
    assert objective.name == name and Objective.of(objective) is objective
    assert (objective.sense, objective.unit) == (("min", "s") if name == "latency" else ("max", "packets/s"))
    assert objective.minimize == (name == "latency")


def test_an_unknown_objective_is_named():
    with pytest.raises(ValueError, match="unknown objective `speed`"):
        Objective.of("speed")


@pytest.mark.parametrize("name", OBJECTIVES)
@given(a=finite, b=finite)
def test_score_better_best_and_loss_agree(name, a, b):
    objective = Objective.of(name)
    assert objective.score(objective.score(a)) == a  # its own inverse
    assert objective.better(a, b) == (objective.score(a) > objective.score(b))
    best = objective.best([a, b])
    assert not objective.better(a, best) and not objective.better(b, best)
    assert objective.loss(best, best) == 0.0
    worse = a if best == b else b
    assert objective.loss(worse, best) >= 0.0
    # the two sides round differently: equal to a few ulps of the operands, relative to best
    assert math.isclose(objective.loss(worse, best), abs(worse - best) / best, rel_tol=1e-9, abs_tol=1e-12)


def test_scores_work_on_arrays():
    values = np.array([1.0, 3.0, 2.0])
    assert list(Objective.of("latency").score(values)) == [-1.0, -3.0, -2.0]
    assert Objective.of("latency").best(values) == 1.0 and Objective.of("total_throughput").best(values) == 3.0


def test_the_one_formatter():
    assert Objective.of("total_throughput").format(10937500.0) == "10.94 Mpps"
    assert Objective.of("total_throughput").format(10937500.0, 31000.0) == "10.94 Mpps ± 31 kpps"
    assert Objective.of("latency").format(2.13e-6) == "2.130 us"
    assert Objective.of("latency").format(None) == "-"
    assert Objective.of("latency").axis() == (1e6, "latency (us)")


@pytest.mark.parametrize("name", OBJECTIVES)
def test_measurements_and_the_batch_model_score_the_natural_figure(name):
    spec = load_spec("t2-ipfwd-intadd-x2").model_copy(update={"objective": name})
    objective = Objective.of(name)
    contexts = list(range(len(spec.threads)))
    measured = make_oracle(spec, "analytic").evaluate(Plan.from_contexts(spec, contexts))
    natural = measured.natural(name)
    assert natural > 0 and measured.value(name) == objective.score(natural)
    batch = BatchModel(spec).evaluate(np.array([contexts])).values(name)[0]
    assert math.isclose(float(objective.score(batch)), natural, rel_tol=1e-9)
