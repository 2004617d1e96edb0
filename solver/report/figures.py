"""The report's plots, each labelled for the sample it shows and drawn in the spec's unit.

One unit per quantity: throughput in Mpps, latency in microseconds, on every axis (the EVT plots
of `evt.plots` draw raw values; `in_unit` rescales their axes).  A plot that would be empty or
degenerate is not drawn: `figures` returns the reason instead, and the page says it.
"""

from __future__ import annotations

import base64
import io
from typing import Any

from tasksolve.specs.files import finite_or_none


def png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def unit(objective: str) -> tuple[float, str]:
    """(scale from the samples' unit, the quantity and unit) for an axis."""
    from tasksolve.specs.objective import Objective

    return Objective.of(objective).axis()


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def in_unit(fig, objective: str, axes: str = "x", label: str | None = None, ylabel: str | None = None):
    """Rescale the tick labels of `axes` ("x", "y" or "xy") of every axis of `fig` to the unit;
    `label` / `ylabel` (``{unit}`` is replaced by the quantity and unit) name the axes."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    scale, name = unit(objective)
    formatter = FuncFormatter(lambda v, _: f"{v * scale:.4g}")
    for ax in fig.axes:
        for which in axes:
            axis = ax.xaxis if which == "x" else ax.yaxis
            axis.set_major_formatter(formatter)
            axis.set_major_locator(MaxNLocator(nbins=6))
        if label is not None and "x" in axes:
            ax.set_xlabel(label.format(unit=name))
        if ylabel is not None and "y" in axes:
            ax.set_ylabel(ylabel.format(unit=name))
    return fig


def comparison_figure(rows: list[dict[str, Any]], objective: str):
    plt = _pyplot()
    shown = [r for r in rows if r.get("simulated") is not None]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(shown) + 1.2))
    scale, name = unit(objective)
    values = [r["simulated"] * scale for r in shown]
    errors = [(r.get("half_width") or 0) * scale for r in shown]
    ax.barh([r["method"] for r in shown], values, xerr=errors, color="#4a78b0")
    ax.invert_yaxis()
    ax.set_xlabel(name + ", measured")
    ax.set_title("methods compared on the same oracle")
    return fig


def selection_figure(curves: dict[str, list[float]]):
    """Loss of the best measured among the first n predicted plans against n (TPDS Figure 8)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    for method, losses in curves.items():
        ax.plot(range(1, len(losses) + 1), [100 * x for x in losses], marker="o", label=method)
    ax.set_xlabel("plans measured in the selection phase (n best predicted)")
    ax.set_ylabel("loss vs best measured (%)")
    ax.set_title("selection phase")
    ax.legend(loc="best", fontsize=8)
    return fig


def ecdf_figure(values, plan_value: float, objective: str, what: str, estimate: float | None):
    """The sample's empirical distribution, in the unit, with the plan and the estimate marked."""
    import numpy as np

    plt = _pyplot()
    scale, name = unit(objective)
    x = np.sort(np.asarray(values, dtype=float)) * scale
    fig, ax = plt.subplots(figsize=(7, 3.4))
    # the marks go behind the steps, and the axis runs past the largest of them all, so that the
    # sample's final jump (often at the plan's value) stays in sight
    marks = [plan_value * scale] + ([estimate * scale] if estimate is not None else [])
    ax.axvline(marks[0], color="#7b2cbf", lw=2, ls=":", alpha=0.7, zorder=1, label="the plan")
    if estimate is not None:
        ax.axvline(marks[1], color="#b3261e", lw=1.2, ls="--", alpha=0.7, zorder=1, label="estimated optimum")
    ends = [float(x[0]), float(x[-1])] + [m for m in marks if np.isfinite(m)]
    pad = 0.05 * ((max(ends) - min(ends)) or abs(max(ends)) or 1.0)
    ax.step(
        np.concatenate([x, [max(ends) + pad]]),
        np.concatenate([np.arange(1, x.size + 1) / x.size, [1.0]]),
        where="post",
        color="#4a78b0",
        lw=1.5,
        zorder=3,
        label=f"{what} (n = {x.size})",
    )
    ax.set_xlim(min(ends) - pad, max(ends) + pad)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(name)
    ax.set_ylabel("share of the sample at or below")
    ax.set_title(f"Distribution of the sample: {what}")
    ax.legend(loc="upper left", fontsize=8)
    return fig


def estimates_figure(cert):
    """One axis of values: each design's estimate and interval, the bounds, the known plans and the
    plan (`cert.designs` holds other designs' estimates, if any); an open end is an arrow."""
    plt = _pyplot()
    scale, name = unit(cert.objective)
    rows: list[tuple[str, float | None, float | None, float | None, str]] = []
    opened: dict[int, float] = {}
    designs = cert.designs or [
        {
            "design": cert.design,
            "n": cert.samples.n,
            "estimate": cert.optimum.estimate,
            "lower": cert.optimum.lower,
            "upper": cert.optimum.upper,
            "top_atom": cert.optimum.top_atom is not None,
        }
    ]
    for entry in designs:
        est, low, high = (finite_or_none(entry.get(k)) for k in ("estimate", "lower", "upper"))
        if est is not None and (low is None) != (high is None):
            opened[len(rows)] = low if low is not None else high
        head = "best value, hit many times" if entry.get("top_atom") else "EVT estimate"
        if est is None:
            head = "no finite estimate"
        rows.append((f"{head}: {entry['design']} design, {entry.get('n', '?')} samples", est, low, high, "#4a78b0"))
    for bound in cert.bounds:
        if bound.value is not None:
            rows.append((bound.label, bound.value, None, None, "#1d7a36" if bound.applies else "#888888"))
    for known in cert.known_plans[:-1]:
        rows.append((known.plan, finite_or_none(known.value), None, None, "#888888"))
    rows.append(("the plan", finite_or_none(cert.plan_performance.value), None, None, "#7b2cbf"))
    fig, ax = plt.subplots(figsize=(7.5, 0.4 * len(rows) + 1.2))
    finite = [v for row in rows for v in row[1:4] if v is not None]
    low_edge, high_edge = (min(finite), max(finite)) if finite else (0.0, 1.0)
    pad = 0.08 * ((high_edge - low_edge) or abs(high_edge) or 1.0)  # an open end's arrow shows past the points
    edges = (low_edge - pad, high_edge + pad)
    for y, (_, value, low, high, colour) in enumerate(rows):
        if value is not None:
            ax.plot([value * scale], [y], "o", color=colour)
        if low is not None and high is not None:
            ax.plot([low * scale, high * scale], [y, y], "-", color=colour, linewidth=2)
        elif y in opened:  # open towards improvement: an arrow to the edge of the axis
            end = edges[1] if low is not None else edges[0]
            ax.annotate("", (end * scale, y), (opened[y] * scale, y), arrowprops={"arrowstyle": "->", "color": colour})
    ax.set_xlim(edges[0] * scale, edges[1] * scale)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(name)
    ax.set_title("the plan against the estimate, the bounds and the known plans")
    return fig
