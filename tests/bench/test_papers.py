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
