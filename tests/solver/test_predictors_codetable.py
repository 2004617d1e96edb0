"""The code table the batch predictor reads the profiling tables through: a dense array or a
hash table, both agreeing with a Python dict, and the batch predictor on the hash table (twelve
task types) equal to the per-plan formulas."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.solver.predictors.batch import BatchPredictor
from tasksolve.solver.predictors.codetable import DENSE_LIMIT, CodeTable
from tasksolve.solver.predictors.models import predict_blackbox, predict_tsbsched
from tasksolve.solver.predictors.tables import ProfileTables
from tasksolve.specs import load_spec


@settings(max_examples=60, deadline=None)
@given(
    space=st.sampled_from([50, DENSE_LIMIT // 2, DENSE_LIMIT, 2**62]),
    batches=st.lists(st.lists(st.integers(0, 2**62 - 1), max_size=300), min_size=1, max_size=6),
    probes=st.lists(st.integers(0, 2**62 - 1), max_size=200),
)
def test_code_table_reads_like_a_dict(space, batches, probes):
    """Insert batches of new codes (collisions and growth included), then every code inserted
    reads its own values and every other code reads as absent."""
    table = CodeTable(space, 2)
    assert table.dense == (space * 2 <= DENSE_LIMIT)
    truth: dict[int, tuple[float, float]] = {}
    for batch in batches:
        fresh = np.array(sorted({c % space for c in batch} - truth.keys()), dtype=np.int64)
        values = np.vstack([fresh * 0.5 + 1.0, -fresh.astype(float)])
        table.insert(fresh, values)
        truth.update({int(c): (float(a), float(b)) for c, a, b in zip(fresh, *values)})
    assert table.size == len(truth)
    codes = np.array(list(truth) + [p % space for p in probes], dtype=np.int64).reshape(1, -1)
    slots = table.slots(codes)
    for code, slot in zip(codes[0].tolist(), slots[0].tolist()):
        if code in truth:
            assert slot >= 0 and tuple(table.values[:, slot]) == truth[code]
        else:
            assert slot == -1
    if not table.dense:
        assert 2 * table.size <= len(table.keys)  # at most half full


def test_hash_table_keeps_colliding_codes_apart():
    """5000 codes inserted at once into a table of 1024 slots: it grows to stay half full, codes
    that probe past each other's home slots are all found, each in a slot of its own."""
    table = CodeTable(2**62, 1)
    codes = np.arange(0, 5000 * 1024, 1024, dtype=np.int64)
    table.insert(codes, codes[None, :].astype(float))
    slots = table.slots(codes)
    assert (slots >= 0).all() and len(set(slots.tolist())) == len(codes)
    np.testing.assert_array_equal(table.values[0, slots], codes.astype(float))


@pytest.mark.parametrize("space", [100, 2**62])
def test_a_nan_value_is_present(space):
    """An oracle without thread times stores NaN times: the code is still found."""
    table = CodeTable(space, 2)
    table.insert(np.array([7]), np.array([[np.nan], [np.nan]]))
    assert table.slots(np.array([7, 8])).tolist()[0] >= 0
    assert table.slots(np.array([7, 8])).tolist()[1] == -1


@pytest.fixture(scope="module")
def mix():
    return load_spec("t2-ipfwd-mix-x8")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000))
def test_batch_equals_the_per_plan_formulas_with_twelve_task_types(mix, seed):
    """t2-ipfwd-mix-x8: twelve task types, a code space beyond the dense limit (hash table)."""
    tables = ProfileTables(mix, lambda s: make_oracle(s, "analytic"), oracle_kind="analytic")
    batch = BatchPredictor(tables)
    assert not batch.table.dense
    plans = uniform_plans(mix, 12, seed)
    for method, reference in (("tsbsched", predict_tsbsched), ("blackbox", predict_blackbox)):
        got = batch.predict(method, plans)
        want = np.array([reference(tables, [int(c) for c in row]).per_instance for row in plans])
        np.testing.assert_allclose(got, want, rtol=1e-12)
