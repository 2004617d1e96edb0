"""The sequential algorithm of ASPLOS'12 Figure 13 (evt.sequential)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tasksolve import evt


def weibull_sampler(seed: int):
    """Reverse-Weibull values with known optimum 1 (xi = -1/3)."""
    rng = np.random.default_rng(seed)
    return lambda k: 1.0 - 0.3 * rng.weibull(3.0, k)


def test_stops_at_the_first_n_where_the_criterion_holds() -> None:
    """Acceptance: re-analysing every prefix independently, the criterion fails at every
    earlier step and holds at the stop."""
    target = 0.06
    res = evt.sequential(weibull_sampler(0), n_init=500, n_delta=250, target_gap=target, max_n=8000)
    assert res.met and res.steps[-1].met
    ns = [s.n for s in res.steps]
    assert ns == list(range(500, 500 + 250 * len(ns), 250))
    assert res.n == ns[-1]
    for step in res.steps:
        again = evt.analyze(res.sample[: step.n], gof_bootstrap=0)
        assert again.gap_worst == pytest.approx(step.gap_worst)
        assert step.met == (again.gap_worst <= target)
    assert not any(s.met for s in res.steps[:-1])
    # the claim is about the interval's far limit, never the point estimate alone
    last = res.steps[-1]
    assert last.gap_worst == pytest.approx((last.upper - last.best) / last.upper)
    assert last.gap_point <= last.gap_worst <= target
    # with this seed the true optimum (1) is inside the final interval, so the true gap is
    # within the claimed one
    assert last.lower <= 1.0 <= last.upper and 1.0 - last.best <= target


def test_max_n_without_meeting_the_target() -> None:
    res = evt.sequential(weibull_sampler(1), n_init=400, n_delta=300, target_gap=1e-6, max_n=1300)
    assert not res.met and res.n == 1300
    assert [s.n for s in res.steps] == [400, 700, 1000, 1300]  # the last draw is cut to fit
    assert "not met" in res.summary()


def test_never_claims_an_unmeasured_gap() -> None:
    """A heavy tail has no finite optimum: every gap is infinite and nothing is claimed."""
    rng = np.random.default_rng(2)
    res = evt.sequential(
        lambda k: stats.pareto(1.5).rvs(k, random_state=rng), n_init=500, n_delta=500, target_gap=0.5, max_n=2000
    )
    assert not res.met
    assert all(s.gap_worst == math.inf and not s.met for s in res.steps)


def test_unanalysable_steps_are_recorded_not_fatal() -> None:
    calls = []

    def sampler(k: int) -> np.ndarray:
        calls.append(k)
        if len(calls) == 1:
            return np.ones(k)  # constant so far: no estimate possible
        return np.random.default_rng(len(calls)).random(k)

    res = evt.sequential(sampler, n_init=100, n_delta=400, target_gap=0.5, max_n=900)
    assert res.steps[0].error is not None and "constant" in res.steps[0].error
    assert res.steps[0].estimate is None and not res.steps[0].met
    assert len(res.steps) >= 2 and res.steps[1].error is None


def test_minimisation() -> None:
    rng = np.random.default_rng(3)
    res = evt.sequential(
        lambda k: 2.0 + 0.3 * rng.weibull(3.0, k), n_init=1000, n_delta=500, target_gap=0.05, max_n=6000, minimize=True
    )
    last = res.steps[-1]
    assert last.best == res.sample.min()
    if res.met:
        assert last.gap_worst == pytest.approx((last.best - last.lower) / abs(last.lower))


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"n_init": 0}, "n_init"),
        ({"max_n": 10, "n_init": 20}, "max_n"),
        ({"target_gap": 0.0}, "target_gap"),
        ({"confidence": 1.5}, "confidence"),
    ],
)
def test_bad_parameters(kwargs: dict, message: str) -> None:
    with pytest.raises(evt.EVTError, match=message):
        evt.sequential(weibull_sampler(0), **kwargs)


def test_bad_sampler() -> None:
    with pytest.raises(evt.EVTError, match="returned 3"):
        evt.sequential(lambda k: np.ones(3), n_init=50)
    with pytest.raises(evt.EVTError, match="NaN"):
        evt.sequential(lambda k: np.full(k, np.nan), n_init=50)


def test_report() -> None:
    res = evt.sequential(weibull_sampler(4), n_init=300, n_delta=300, target_gap=0.2, max_n=900)
    d = res.to_dict()
    assert d["met"] == res.met and len(d["steps"]) == len(res.steps)
    assert {"n", "best", "estimate", "lower", "upper", "gap_point", "gap_worst", "met"} <= set(d["steps"][0])
    assert "sequential" in res.summary()


def test_the_callers_rule_decides_when_to_stop() -> None:
    """With `stop`, the caller's rule replaces the gap criterion: called after every analysis (None
    when the sample cannot be analysed), and sampling stops the first time it says so."""
    seen: list[tuple[int, bool]] = []

    def stop(sample, result):
        seen.append((sample.size, result is None))
        return sample.size >= 1500

    res = evt.sequential(weibull_sampler(1), n_init=500, n_delta=500, target_gap=0.5, max_n=5000, stop=stop)
    assert [n for n, _ in seen] == [500, 1000, 1500] and res.met and res.n == 1500
    assert [s.met for s in res.steps] == [False, False, True]  # the 50% gap criterion alone met at 500

    constant = evt.sequential(lambda k: np.ones(k), n_init=100, n_delta=100, max_n=300, stop=lambda s, r: r is None)
    assert constant.met and constant.n == 100 and constant.steps[0].error  # unanalysable, and the rule accepts it
    never = evt.sequential(weibull_sampler(2), n_init=500, n_delta=500, max_n=1500, stop=lambda s, r: False)
    assert not never.met and never.n == 1500


def test_an_exhaustible_source_ends_sampling_with_what_it_gave() -> None:
    """With `exhaustible`, a sampler that returns fewer values than asked has ended: the algorithm
    analyses the shorter sample, asks the caller's rule once more, and says why it stopped; without
    the flag a short answer stays an error."""
    rng = np.random.default_rng(3)
    budget = {"left": 1300}

    def sampler(k: int) -> np.ndarray:
        give = min(k, budget["left"])
        budget["left"] -= give
        return 1.0 - rng.weibull(3.0, give) * 0.1

    asked: list[int] = []
    res = evt.sequential(
        sampler, n_init=500, n_delta=500, max_n=5000, stop=lambda s, r: asked.append(s.size) or False, exhaustible=True
    )
    assert asked == [500, 1000, 1300] and res.n == 1300 and not res.met and res.stopped == "exhausted"
    assert res.to_dict()["stopped"] == "exhausted" and "exhausted" in res.summary()
    empty = evt.sequential(lambda k: np.empty(0), n_init=100, exhaustible=True)
    assert empty.n == 0 and empty.steps == [] and empty.stopped == "exhausted" and empty.result is None
    full = evt.sequential(weibull_sampler(2), n_init=500, n_delta=500, max_n=1000, stop=lambda s, r: False)
    assert full.stopped == "max_n"
    met = evt.sequential(weibull_sampler(2), n_init=500, n_delta=500, max_n=1000, stop=lambda s, r: True)
    assert met.stopped == "met"
    with pytest.raises(evt.EVTError):
        evt.sequential(lambda k: np.ones(3), n_init=50, exhaustible=False)
