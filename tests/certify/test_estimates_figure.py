"""The report's estimates chart (`solver.report.figures.estimates_figure`) on certificates whose
intervals are open or whose estimate is infinite or null (`no_finite_optimum`, `evt.atom`)."""

from __future__ import annotations

import math
from types import SimpleNamespace as NS

import pytest

from tasksolve.solver.report.html import estimates_figure


def certificate(optimum: dict, designs=None):
    return NS(
        objective="total_throughput",
        design="local-optima",
        samples=NS(n=optimum["n"]),
        optimum=NS(**{k: optimum.get(k) for k in ("estimate", "lower", "upper", "top_atom")}),
        bounds=[NS(label="bound of the closed form", value=2.65e6, applies=False, proven_optimum=None)],
        known_plans=[NS(plan="best sampled plan", value=1.79e6), NS(plan="itself", value=1.78e6)],
        plan_performance=NS(value=1.78e6),
        designs=designs,
    )


@pytest.mark.parametrize(
    "optimum",
    [
        {"estimate": math.inf, "lower": math.inf, "upper": math.inf, "n": 1000},  # no finite optimum
        {"estimate": None, "lower": None, "upper": None, "n": 1000},  # the JSON's nulls
        {"estimate": 1.79e6, "lower": 1.79e6, "upper": None, "n": 1000, "top_atom": True},  # an atom
        {"estimate": 1.80e6, "lower": 1.79e6, "upper": 1.83e6, "n": 1000},
    ],
)
def test_the_axis_spans_every_finite_figure_and_no_infinity(optimum):
    for designs in (None, [{"design": "local-optima", **optimum}]):
        check(estimates_figure(certificate(optimum, designs=designs)))


def check(fig):
    low, high = fig.axes[0].get_xlim()
    assert math.isfinite(low) and math.isfinite(high)
    assert low < 1.78 and high > 2.65  # the plan and the bound (Mpps) are on the axis
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels[-1] == "the plan" and any(label.startswith("bound") for label in labels)
    assert not any(label.startswith("EVT") for label in labels[:1]) or "samples" in labels[0]


def test_the_distribution_shows_its_final_jump_past_the_plan_and_the_estimate():
    """The sample's largest values sit at the plan's value: the step is drawn above the plan's
    and the estimate's lines, and the axis runs past all three."""
    import numpy as np

    from tasksolve.solver.report.figures import ecdf_figure

    values = np.concatenate([np.linspace(3.0e6, 3.9e6, 80), np.full(20, 3.966e6)])
    fig = ecdf_figure(values, 3.966e6, "total_throughput", "local optima", 3.97e6)
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    assert low < 3.0 and high > 3.97  # Mpps
    step = next(line for line in ax.lines if line.get_label().startswith("local optima"))
    marks = [line for line in ax.lines if line is not step]
    assert all(step.get_zorder() > mark.get_zorder() for mark in marks)
    assert step.get_xdata()[-1] > 3.97  # the top of the final jump reaches past the marks
