"""Output analysis: MSER truncation, batch means, the t table."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import t as student

from tasksolve.simulate.output import _T975, analyse, batch_stats, mser_truncation, t_quantile


def test_t_table_matches_scipy():
    for dof in range(1, len(_T975) + 1):
        assert t_quantile(dof) == pytest.approx(student.ppf(0.975, dof), abs=1e-6)
    assert t_quantile(100) == pytest.approx(student.ppf(0.975, 100))


def test_mser_cuts_a_transient_and_nothing_from_a_stationary_series():
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 0.1, 400)
    transient = np.concatenate([np.linspace(5, 1, 60), np.ones(340)]) + noise
    d = mser_truncation(transient, 200)
    assert 40 <= d <= 80
    assert mser_truncation(1 + noise, 200) <= 20
    assert mser_truncation(np.ones(50), 25) == 0


def test_mser_counts_a_spread_below_the_resolution_as_none():
    """A deterministic run's queues approach their steady fill geometrically (a hybrid desktop
    plan's mean latency: 6e-4 below its limit at window 30, 0.886 times closer each window after
    a ramp).  Plain MSER chases that drift to the end of the first half (218 windows: the run
    never settles); at a resolution of 1e-6 it cuts where the drift has shrunk to a few 1e-6
    (about window 70) whatever the run's length.  Noise far above the resolution is cut as before."""
    for n in (140, 175, 218):
        w = np.arange(n)
        latency = np.where(w < 30, 0.05 + 0.95 * w / 30, 1 - 6e-4 * 0.886 ** (w - 30))
        assert mser_truncation(latency, n // 2) >= min(n // 2 - 1, 80)
        assert 55 <= mser_truncation(latency, n // 2, resolution=1e-6) <= 72
    rng = np.random.default_rng(0)
    noisy = latency + rng.normal(0, 0.01, len(latency))
    assert mser_truncation(noisy, 109, resolution=1e-6) == mser_truncation(noisy, 109)


def test_batch_means_interval_covers_the_mean_at_its_nominal_rate():
    """AR(1) windows (correlated, as simulation output is): 95% intervals from 30 batches of 100
    windows must cover the true mean in about 95% of 400 replications (binomial: 0.92..0.98)."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(1)
    series = lfilter([1.0], [1.0, -0.5], rng.normal(size=(400, 3000)), axis=1)  # x_i = 0.5 x_{i-1} + e_i
    covered = 0
    for x in series:
        mean, hw, _ = batch_stats(x, 30)
        covered += abs(mean) <= hw
    assert 0.92 <= covered / 400 <= 0.98


def test_interpolated_counts_measure_a_periodic_stream_exactly():
    # one instance departing every 7 cycles, windows of 10 cycles: the interpolated throughput
    # is 1/7 in every window, with a half-width of 0 (no +-1 quantisation)
    departures = [np.arange(1, 2000) * 7.0]
    latencies = [np.full(1999, 30.0)]
    a = analyse(10.0, 1000, departures, latencies, warmup_packets=100)
    assert a.ok and a.total == pytest.approx(1 / 7) and a.total_hw == pytest.approx(0, abs=1e-12)
    assert a.latency_mean == 30 and a.latency_p99 == 30


def test_a_run_still_warming_up_is_not_reported():
    # latency rising all the way: the truncation lands at the end of the first half
    dep = np.arange(1, 2000) * 5.0
    a = analyse(10.0, 900, [dep], [np.linspace(10, 1000, len(dep))], warmup_packets=10**6)
    assert not a.ok
