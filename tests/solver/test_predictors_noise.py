"""Profiling with measurement noise (`ProfileTables.noise`, `noisy_copy`)."""

from __future__ import annotations

import numpy as np
import pytest

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.binding.samplers import distinct_placements
from tasksolve.solver.predictors.batch import BatchPredictor
from tasksolve.solver.predictors.tables import ProfileTables
from tasksolve.specs import load_spec


def analytic(spec):
    return make_oracle(spec, "analytic")


@pytest.fixture(scope="module")
def profiled():
    spec = load_spec("t2-ipfwd-l2-x2")
    tables = ProfileTables(spec, analytic, oracle_kind="analytic")
    plans, _ = distinct_placements(spec)
    exact = BatchPredictor(tables).values("tsbsched", plans)
    return tables, plans, exact


def entries(tables):
    out = {}
    for app, table in tables.base.items():
        for form, e in table.items():
            out[("base", app, form)] = e
    for target, table in tables.slowdown.items():
        for key, e in table.items():
            out[("slowdown", target, key)] = e
    return out


def ratios(noisy, exact):
    a, b = entries(noisy), entries(exact)
    assert a.keys() == b.keys()
    out = []
    for key, e in b.items():
        out.append(a[key].throughput / e.throughput)
        out += [a[key].thread_times[t] / v for t, v in e.thread_times.items() if v > 0]
    return np.array(out)


def test_zero_noise_copy_predicts_the_same(profiled):
    tables, plans, exact = profiled
    copy = tables.noisy_copy(0.0, seed=1)
    assert copy.experiments == tables.experiments
    assert np.array_equal(BatchPredictor(copy).values("tsbsched", plans), exact)


def test_noise_has_the_stated_spread_and_is_reproducible(profiled):
    tables, plans, exact = profiled
    r = ratios(tables.noisy_copy(0.03, seed=4), tables)
    assert len(r) > 1000
    assert abs(r.mean() - 1) < 0.005 and 0.025 < r.std() < 0.035
    again = ratios(tables.noisy_copy(0.03, seed=4), tables)
    other = ratios(tables.noisy_copy(0.03, seed=5), tables)
    assert np.array_equal(r, again) and not np.allclose(r, other)
    noisy = BatchPredictor(tables.noisy_copy(0.03, seed=4)).values("tsbsched", plans)
    assert not np.allclose(noisy, exact)
    assert np.corrcoef(noisy, exact)[0, 1] > 0.8  # errors of a few percent, not a new ranking


def test_an_experiment_draws_the_same_error_measured_now_or_copied(profiled):
    tables, plans, _ = profiled
    direct = ProfileTables(tables.spec, analytic, oracle_kind="analytic", noise=0.03, noise_seed=9)
    BatchPredictor(direct).values("blackbox", plans[:50])
    copied = entries(tables.noisy_copy(0.03, seed=9))
    for key, e in entries(direct).items():
        assert e == copied[key]


def test_full_table_size_counts_the_base_table_it_would_measure(profiled):
    tables, _, _ = profiled
    size = tables.full_table_size()
    listed = sum(1 for _ in tables.tree.representatives(3))
    assert size["base"] == listed == len(tables.base["ipfwd"])
