"""TSBSched and BlackBox: the profiling tables and the prediction formulas of the papers."""

from __future__ import annotations

import pytest

from simulate.oracle import make_oracle
from solver.predictors.models import predict_blackbox, predict_tsbsched
from solver.predictors.tables import Experiment, ProfileTables
from specs import load_spec


@pytest.fixture(scope="module")
def spec():
    return load_spec("t2-ipfwd-intadd-x2")


def analytic(spec):
    return make_oracle(spec, "analytic")


def test_base_time_table_has_11_placements_for_a_3_thread_instance(spec):
    tables = ProfileTables(spec, analytic)
    plan = [0, 1, 2, 8, 9, 10]
    tables.base_entry("ipfwd", tables.instance_form(plan, [0, 1, 2]))
    assert len(tables.base["ipfwd"]) == 11
    assert tables.experiments == 11
    assert tables.full_table_size()["base"] == 11


def test_slowdown_table_size(spec):
    tables = ProfileTables(spec, analytic)
    # T2: a target strand shares its pipe with 3 strands and its core with 4 more; 3 task types
    assert tables.sharing_levels == [1, 0]
    assert (tables.slots(1), tables.slots(0)) == (3, 4)
    assert tables.full_table_size()["slowdown"] == 3 * 20 * 35


def _worked_example(spec):
    """Two instances; instance 1's threads share core 0 with instance 0's (Figures 4/5 style)."""
    tables = ProfileTables(spec, analytic)
    plan = [0, 4, 1, 2, 8, 5]   # R0 P0 T0 on core 0, R1 on core 0 pipe 0, P1 on core 1, T1 on core 0 pipe 1
    forms = [tables.instance_form(plan, [0, 1, 2]), tables.instance_form(plan, [3, 4, 5])]
    tables.base["ipfwd"] = {forms[0]: Experiment(100.0, {"R": 2.0, "P": 5.0, "T": 1.0}),
                            forms[1]: Experiment(120.0, {"R": 2.0, "P": 4.0, "T": 1.0})}
    instance_of = [0, 0, 0, 1, 1, 1]
    types = [(t.app, t.task) for t in spec.threads]
    keys = [tables.stress_key(plan, t, instance_of, types) for t in range(6)]
    empty = ((), ())
    alone = {"R": 2.0, "P": 5.0, "T": 1.0}
    entries = {
        ("R", keys[0]): Experiment(40.0, {"R": 3.0}),   # slowdown 50/40 = 1.25, +1.0
        ("P", keys[1]): Experiment(45.0, {"P": 5.5}),   # 1.111, +0.5
        ("T", keys[2]): Experiment(50.0, {"T": 1.0}),   # 1.0, +0
        ("R", keys[3]): Experiment(25.0, {"R": 4.0}),   # 2.0, +2.0
        ("P", keys[4]): Experiment(50.0, {"P": 5.0}),   # P1 alone on core 1
        ("T", keys[5]): Experiment(48.0, {"T": 1.5}),   # 1.0417, +0.5
    }
    for (task, key), entry in entries.items():
        table = tables.slowdown.setdefault(("ipfwd", task), {})
        table[key] = entry
        table[empty] = Experiment(50.0, dict(alone))
    return tables, plan, keys


def test_stress_keys_name_the_other_instances_threads(spec):
    tables, plan, keys = _worked_example(spec)
    # R0 (strand 0, pipe 0) shares its pipe with R1 (strand 1) and T0 (own instance, not counted)
    assert keys[0] == ((("ipfwd", "R"),), (("ipfwd", "T"),))
    assert keys[4] == ((), ())   # P1 alone on core 1


def test_blackbox_formula(spec):
    tables, plan, _ = _worked_example(spec)
    prediction = predict_blackbox(tables, plan)
    assert prediction.per_instance[0] == pytest.approx(100.0 / 1.25)
    assert prediction.per_instance[1] == pytest.approx(120.0 / 2.0)
    assert prediction.total == pytest.approx(80.0 + 60.0)
    assert tables.experiments == 0   # everything came from the filled tables


def test_tsbsched_formula(spec):
    tables, plan, _ = _worked_example(spec)
    prediction = predict_tsbsched(tables, plan)
    assert prediction.per_instance[0] == pytest.approx(1 / max(2.0 + 1.0, 5.0 + 0.5, 1.0))
    assert prediction.per_instance[1] == pytest.approx(1 / max(2.0 + 2.0, 4.0 + 0.0, 1.0 + 0.5))


def test_predictions_with_the_closed_form_rank_plans_like_it(spec):
    """With the closed form as oracle, BlackBox's pick is among the closed form's good plans."""
    import numpy as np

    from simulate.analytic import BatchModel
    from solver.predictors.selection import run_predictor
    from solver.binding.samplers import uniform_plans

    sample = uniform_plans(spec, 300, 0)
    result = run_predictor(spec, "blackbox", analytic, sample, top_n=5)
    values = BatchModel(spec).throughput(sample)
    assert result.best_measured.throughput >= np.quantile(values, 0.9)
    assert result.experiments <= result.table_size["total"]
