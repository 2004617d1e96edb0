"""The report's estimates chart (`solver.report.html.estimates_figure`) on certificates whose
intervals are open or whose estimate is infinite (`no_finite_optimum`, `evt.atom`)."""

from __future__ import annotations

import math

import pytest

from tasksolve.solver.report.html import estimates_figure


def certificate(optimum: dict, designs=None) -> dict:
    cert = {
        "objective": "total_throughput",
        "design": "local-optima",
        "optimum": optimum,
        "bound": {"bound": 2.65e6, "applies": False, "proven_optimum": None},
        "known_plans": [{"plan": "best sampled plan", "value": 1.79e6}, {"plan": "itself", "value": 1.78e6}],
        "plan_performance": {"value": 1.78e6},
    }
    if designs is not None:
        cert["designs"] = designs
    return cert


@pytest.mark.parametrize(
    "optimum",
    [
        {"estimate": "inf", "lower": "inf", "upper": "inf", "n": 1000},  # no finite optimum
        {"estimate": 1.79e6, "lower": 1.79e6, "upper": "inf", "n": 1000, "top_atom": True},  # an atom
        {"estimate": 1.80e6, "lower": 1.79e6, "upper": 1.83e6, "n": 1000},
    ],
)
def test_the_axis_spans_every_finite_figure_and_no_infinity(optimum):
    fig = estimates_figure(certificate(optimum, designs=[{"design": "local-optima", **optimum}]))
    low, high = fig.axes[0].get_xlim()
    assert math.isfinite(low) and math.isfinite(high)
    assert low < 1.78 and high > 2.65  # the plan and the bound (Mpps) are on the axis
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels[-1] == "the plan" and any(label.startswith("bound") for label in labels)
