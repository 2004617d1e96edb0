"""bench/papers: the verdict rules the paper scripts state beforehand, on inputs whose answer is known."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    for folder in (ROOT / "bench", ROOT / "bench" / "papers"):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"_test_paper_{name}", ROOT / "bench" / "papers" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


asplos12 = _load("asplos12")
tsbsched = _load("tsbsched")


def _row(gain: float, gap: float, narrower: bool) -> dict:
    best = 10.0
    wide, narrow = {"upper": 12.0, "lower": 10.0}, {"upper": 10.5, "lower": 10.0}
    return {
        "benchmark": "b",
        "seed": 0,
        "gain_1000_5000": gain,
        "1000": {"best": best, **wide},
        "5000": {"best": best, "gap": gap, **(narrow if narrower else wide)},
    }


def test_asplos12_verdicts_follow_the_stated_bands():
    paper_like = [_row(0.1, 1.0, True)] * 4 + [_row(0.6, 2.4, False)]
    assert [v["holds"] for v in asplos12.verdicts(paper_like)] == [True, True, True]
    one_bad_each = [_row(0.1, 1.0, True)] * 4 + [_row(1.3, 5.1, False)]
    assert [v["holds"] for v in asplos12.verdicts(one_bad_each)] == [False, False, True]
    no_estimate = [_row(0.1, 1.0, True)] * 4 + [_row(0.1, None, True)]
    assert asplos12.verdicts(no_estimate)[1]["holds"] is False


def test_tsbsched_balanced_means_spread_over_cores_and_pipes():
    one_per_core = np.array([[0, 8, 16, 24, 32, 40]])
    two_on_a_core = np.array([[0, 4, 16, 24, 32, 40]])  # contexts 0 and 4: core 0, two pipes
    assert tsbsched.balanced(one_per_core).tolist() == [True]
    assert tsbsched.balanced(two_on_a_core).tolist() == [False]
    nine = np.array([[0, 4, 8, 12, 16, 20, 24, 28, 32], [0, 1, 8, 12, 16, 20, 24, 28, 32]])
    assert tsbsched.balanced(nine).tolist() == [True, False]  # 9 threads: 2 per core, 1 per pipe


def test_tsbsched_loss_is_a_percentage_of_the_best():
    assert tsbsched.loss(9.0, 10.0) == pytest.approx(10.0) and tsbsched.loss(10.0, 10.0) == 0.0


asplos12_truth = _load("asplos12_truth")
asplos12_sequential = _load("asplos12_sequential")


def _judged(lower: float, upper: float | None, best: float = 9.0, estimate: float | None = 9.5) -> dict:
    return {"best": best, "estimate": estimate, "lower": lower, "upper": upper}


def test_asplos12_an_interval_holds_misses_or_is_undecided_against_the_truth():
    proven = {"optimum": 10.0}
    assert asplos12_truth.judge(_judged(9.0, 11.0), proven)["holds"] == "yes"
    assert asplos12_truth.judge(_judged(9.5, None), proven)["holds"] == "yes"  # open above: holds, claims nothing
    assert asplos12_truth.judge(_judged(9.0, 9.9), proven)["holds"] == "no"
    assert asplos12_truth.judge(_judged(10.1, 12.0), proven)["holds"] == "no"
    bracket = {"optimum": 9.0, "known": [{"value": 10.0, "half_width": 0.1}], "fluid": 10.5}
    assert asplos12_truth.judge(_judged(9.0, 11.0), bracket)["holds"] == "yes"
    assert asplos12_truth.judge(_judged(9.0, 10.2), bracket)["holds"] == "undecided"  # holds part of [9.9, 10.5]
    assert asplos12_truth.judge(_judged(9.0, 9.8), bracket)["holds"] == "no"
    loss = asplos12_truth.judge(_judged(9.0, 11.0, best=9.0), bracket)["loss"]
    assert loss == pytest.approx([10.0, 100 * (1 - 9.0 / 10.5)])


def test_asplos12_allowance_is_the_binomial_quantile():
    from scipy.stats import binom

    for runs in (5, 25, 100):
        k = asplos12_truth.allowance(runs)
        assert binom.sf(k, runs, 0.05) < 0.05 <= binom.sf(k - 1, runs, 0.05)


def _truth_row(holds: str, loss: float, estimated: float | None) -> dict:
    return {"5000": {"truth": {"holds": holds, "loss": [loss, loss], "estimated_loss": estimated}}}


def test_asplos12_truth_rows_follow_the_stated_bands():
    crit = {k: k for k in ("cover", "best", "loss")}
    good = [_truth_row("yes", 1.0, 1.5)] * 22 + [_truth_row("no", 2.0, 1.5)] * 3
    assert [v["holds"] for v in asplos12_truth.truth_verdicts(good, [5000], crit, False)] == [True, True, True]
    bad = [_truth_row("yes", 1.0, 1.5)] * 21 + [_truth_row("no", 2.5, None)] * 4
    assert [v["holds"] for v in asplos12_truth.truth_verdicts(bad, [5000], crit, False)] == [False, False, True]
    far = [_truth_row("yes", 1.0, 2.1)] * 20 + [_truth_row("yes", 1.0, 1.5)] * 5
    assert asplos12_truth.truth_verdicts(far, [5000], crit, False)[2]["holds"] is False


def test_asplos12_table1_counts_the_papers_small_rows_exactly():
    rows = {r["tasks"]: r for r in asplos12_truth.table1()}
    assert rows[3]["ratio"] == 0 and rows[6]["ratio"] == 0


def test_asplos12_first_within_counts_samples_until_the_best_is_close():
    values = np.array([5.0, 8.0, 7.0, 9.6, 9.9])
    assert asplos12_sequential.first_within(values, 10.0, 10.0) == 4
    assert asplos12_sequential.first_within(values, 10.0, 2.5) == 5
    assert asplos12_sequential.first_within(values, 10.0, 0.5) is None


@pytest.mark.parametrize(
    ("rule", "shape", "targets", "expected"),
    [
        ("point", (1.0, 3.0), (10.0, 3.2, 1.0), [900, 1000, None]),
        ("far", (2.0, 2.0), (8.0, 5.0, 2.0), [200, 500, None]),
    ],
)
def test_asplos12_stops_read_off_one_pass_equal_the_algorithm_run_with_each_rule(
    monkeypatch, rule, shape, targets, expected
):
    from tasksolve import evt

    seq = asplos12_sequential
    monkeypatch.setattr(seq, "N_INIT", 200)
    monkeypatch.setattr(seq, "MAX_N", 1200)
    values = np.random.default_rng(3).beta(*shape, 1200)
    steps = seq.steps_of(values, seed=0)
    # stops at a later look, at the first, and never: each compared with the algorithm itself
    assert [(seq.stop_of(steps, rule, t) or {}).get("n") for t in targets] == expected
    for target in targets:
        it = iter(values)

        def sampler(k, it=it):
            return [next(it) for _ in range(k)]

        def stop(sample, res, target=target):
            return res is not None and res.gap_point <= target / 100

        run = evt.sequential(
            sampler,
            n_init=200,
            n_delta=seq.N_DELTA,
            max_n=1200,
            target_gap=target / 100,
            gof_bootstrap=0,
            seed=0,
            stop=stop if rule == "point" else None,
        )
        found = seq.stop_of(steps, rule, target)
        assert (found["n"] if found else None) == (run.steps[-1].n if run.met else None)
