"""`report.html`: one self-contained page (plots embedded as PNG data) a person reads.

Sections: the spec, the chosen plan drawn on the topology, the method comparison, the ECDF of
the random plans with the plan and the estimated optimum marked, the EVT diagnostics (mean
excess, QQ, profile likelihood), the sequential history when there is one, the certificate, and
how to pin the threads.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

from tasksolve.specs import Plan, Spec, display


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def comparison_figure(rows: list[dict[str, Any]], objective: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r.get("simulated") is not None]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(shown) + 1.2))
    scale, unit = (1e6, "latency (us)") if objective == "latency" else (1e-6, "throughput (Mpps)")
    values = [abs(r["simulated"]) * scale for r in shown]
    errors = [(r.get("half_width") or 0) * scale for r in shown]
    ax.barh([r["method"] for r in shown], values, xerr=errors, color="#4a78b0")
    ax.invert_yaxis()
    ax.set_xlabel(unit + ", measured")
    ax.set_title("methods compared on the same oracle")
    return fig


def selection_figure(curves: dict[str, list[float]]):
    """Loss of the best measured among the first n predicted plans against n (TPDS Figure 8)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    for method, losses in curves.items():
        ax.plot(range(1, len(losses) + 1), [100 * x for x in losses], marker="o", label=method)
    ax.set_xlabel("plans measured in the selection phase (n best predicted)")
    ax.set_ylabel("loss vs best measured (%)")
    ax.set_title("selection phase")
    ax.legend(loc="best", fontsize=8)
    return fig


def ecdf_with_plan(analysis, plan_value: float, objective: str):
    from tasksolve.evt.plots import plot_ecdf

    fig = plot_ecdf(analysis)
    ax = fig.axes[0]
    ax.axvline(plan_value, color="#7b2cbf", linewidth=2, linestyle=":", label="chosen plan")
    ax.legend(loc="best", fontsize=8)
    return fig


def estimates_figure(certificate: dict[str, Any]):
    """One axis of values: each design's estimate and interval, the bound, the proven optimum,
    the known plans and the plan (`certificate["designs"]` holds other designs' estimates, if any)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scale, unit = (1e6, "latency (us)") if certificate["objective"] == "latency" else (1e-6, "throughput (Mpps)")
    rows: list[tuple[str, float | None, float | None, float | None, str]] = []
    designs = certificate.get("designs") or [{"design": certificate.get("design", "random"), **certificate["optimum"]}]
    opened: dict[int, float] = {}  # row -> the finite limit of an interval open on one side (evt.atom)
    for entry in designs:
        est = _bounded(entry.get("estimate"))  # none to draw when the tail has no finite end
        low, high = (_bounded(entry.get(k)) for k in ("lower", "upper"))
        if est is not None and (low is None) != (high is None):
            opened[len(rows)] = low if low is not None else high
        label = f"{entry['design']} design, {entry.get('n', '?')} samples"
        rows.append(
            (
                "EVT, " + label if not entry.get("top_atom") else "best value hit twice or more, " + label,
                est,
                low,
                high,
                "#4a78b0",
            )
        )
    bound = certificate.get("bound") or {}
    if _bounded(bound.get("bound")) is not None:
        rows.append(
            (
                "bound" + ("" if bound.get("applies") else " (closed form only)"),
                _bounded(bound["bound"]),
                None,
                None,
                "#1d7a36",
            )
        )
    if _bounded(bound.get("proven_optimum")) is not None:
        rows.append(("proven optimum", _bounded(bound["proven_optimum"]), None, None, "#1d7a36"))
    for known in certificate.get("known_plans", [])[:-1]:
        rows.append((known["plan"], _bounded(known["value"]), None, None, "#888888"))
    rows.append(("the plan", _bounded(certificate["plan_performance"]["value"]), None, None, "#7b2cbf"))
    fig, ax = plt.subplots(figsize=(7.5, 0.4 * len(rows) + 1.2))
    finite = [v for row in rows for v in row[1:4] if v is not None]
    low_edge, high_edge = (min(finite), max(finite)) if finite else (0.0, 1.0)
    pad = 0.04 * ((high_edge - low_edge) or abs(high_edge) or 1.0)
    edges = (low_edge - pad, high_edge + pad)  # an open interval runs to the edge of the axis
    for y, (_, value, low, high, colour) in enumerate(rows):
        if value is not None:
            ax.plot([value * scale], [y], "o", color=colour)
        if low is not None and high is not None:
            ax.plot([low * scale, high * scale], [y, y], "-", color=colour, linewidth=2)
        elif y in opened:  # open towards improvement: an arrow to the edge of the axis
            end = edges[1] if low is not None else edges[0]
            ax.annotate("", (end * scale, y), (opened[y] * scale, y), arrowprops={"arrowstyle": "->", "color": colour})
    ax.set_xlim(sorted((edges[0] * scale, edges[1] * scale)))
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(unit)
    ax.set_title("estimate, bound and plans")
    return fig


def _figures(
    certificate: dict[str, Any], analysis, history, comparison, selection_curves: dict[str, list[float]] | None = None
) -> list[tuple[str, str, str]]:
    """(id, caption, PNG data URL) of every plot of the page; each caption says what to read in it."""
    from tasksolve.evt import plots

    objective = certificate["objective"]
    figures: list[tuple[str, str, str]] = []
    if comparison:
        figures.append(
            (
                "comparison",
                "Method comparison: every method's plan measured on the same oracle; "
                "longer is better for throughput, shorter for latency.",
                _png(comparison_figure(comparison, objective)),
            )
        )
    if selection_curves:
        figures.append(
            (
                "selection",
                "Selection phase of TSBSched and BlackBox: loss of the best measured among "
                "the n best predicted plans against the best measured plan of the comparison; "
                "n = 1 is the method without selection.",
                _png(selection_figure(selection_curves)),
            )
        )
    figures.append(
        (
            "estimates",
            "The plan against the evidence: the EVT estimate of the optimum with its "
            "interval (per sampling design), the rigorous bound and the proven optimum when the closed "
            "form was solved, and the best known plans.",
            _png(estimates_figure(certificate)),
        )
    )
    if analysis is None:
        return figures
    figures.append(
        (
            "ecdf",
            "Random plans (empirical distribution function): how likely a random placement is "
            "to reach a value; the dotted line is the chosen plan, the dashed one the estimated optimum.",
            _png(ecdf_with_plan(analysis, certificate["plan_performance"]["value"], objective)),
        )
    )
    figures.append(
        (
            "mean-excess",
            "Mean excess above each threshold: the tail is fitted above the marked "
            "threshold, where the curve becomes roughly straight (a straight falling line means a "
            "finite optimum).",
            _png(plots.plot_mean_excess(analysis)),
        )
    )
    figures.append(
        (
            "qq",
            "Quantiles of the values above the threshold against the fitted Generalised Pareto "
            "distribution: points on the diagonal mean the fit describes the tail.",
            _png(plots.plot_qq(analysis)),
        )
    )
    figures.append(
        (
            "profile",
            "Profile log-likelihood of the optimum: the interval is where the curve stays "
            "above the horizontal line (Wilks' theorem).",
            _png(plots.plot_profile(analysis)),
        )
    )
    if history is not None:
        figures.append(
            (
                "sequential",
                "Sequential sampling: the best plan and the estimated optimum as the "
                "sample grew, until the gap met the target.",
                _png(plots.plot_sequential(history)),
            )
        )

    return figures


def write_report(
    path,
    spec: Spec,
    plan: Plan,
    certificate: dict[str, Any],
    analysis,
    history,
    comparison: list[dict[str, Any]] | None,
    plan_tree_text: str,
    pin_lines: list[str],
    selection_curves: dict[str, list[float]] | None = None,
    methods_html: str = "",
) -> None:
    """Write the page atomically; `selection_curves` (method -> losses for n = 1..N) adds the
    selection-phase plot; `methods_html` (already escaped) goes after the methods table."""
    objective = certificate["objective"]
    figures = _figures(certificate, analysis, history, comparison, selection_curves)
    e = html.escape
    opt = certificate["optimum"]

    def num(value) -> str:
        return e(display.objective_value(_finite(value), objective))

    rows_html = ""
    for row in comparison or []:
        loss = row.get("loss")
        measured = display.with_half_width(_finite(row.get("simulated")), _finite(row.get("half_width")), objective)
        rows_html += (
            f"<tr><td>{e(row['method'])}</td><td>{num(row.get('predicted'))}</td>"
            f"<td>{e(measured)}</td><td>{'' if loss is None else display.share(loss, 1)}</td></tr>"
        )
    baselines = "".join(
        f"<tr><td>{e(b['method'])}</td><td>{num(b['value'])}</td></tr>" for b in certificate["baselines"]
    )
    solver_html = _solver_section(certificate.get("solve"), objective)
    figures_html = "".join(
        f'<figure id="{fid}"><img alt="{e(title)}" src="{src}"><figcaption>{e(title)}</figcaption></figure>'
        for fid, title, src in figures
    )
    verdict = certificate["verdict"]
    reasons_html = "".join(f"<li>{e(r['sentence'])}</li>" for r in certificate.get("reasons", []))
    gap_html = "<br>".join(e(w) for w in certificate["gap"].get("words", []))
    bound = certificate.get("bound") or {}
    bound_html = (
        e(bound["note"]) if bound else "none: no rigorous bound exists for this oracle; the EVT estimate stands in"
    )
    if bound.get("bound") is not None:
        bound_html = (
            f"{num(bound['bound'])} ({e(str(bound.get('bound_source')))}, CP-SAT {e(str(bound.get('status')))}); "
            + bound_html
        )
    from tasksolve.evt.result import FLAG_NOTES

    flags_html = (
        "<br>".join(
            f"<b>{e(f)}</b>: {e(FLAG_NOTES.get(f, 'EVT could not analyse the sample'))}" for f in certificate["flags"]
        )
        or "none"
    )
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tasksolve report: {e(spec.name)}</title>
<style>
body{{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}}
h1{{font-size:1.6em}} h2{{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}}
table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:.25em .6em;text-align:right}}
td:first-child,th:first-child{{text-align:left}} pre{{background:#f6f6f6;padding:.8em;overflow-x:auto}}
.verdict{{font-size:1.3em;font-weight:bold}} .certified{{color:#1d7a36}} .not_certified{{color:#b3261e}}
.estimate_refuted{{color:#b3261e}} .no_finite_optimum{{color:#8a5a00}} figure{{margin:1em 0}} img{{max-width:100%}}
</style></head><body>
<h1>tasksolve: {e(spec.name)}</h1>
<h2>Spec</h2>
<p>{len(spec.threads)} threads of {", ".join(e(a) for a in spec.applications)} on {e(spec.topology.name)}
({e(spec.topology.describe())}); objective <b>{e(objective)}</b>; {len(spec.usable_contexts)} usable contexts.</p>
<h2>Certificate</h2>
<p class="verdict {e(verdict)}">{e(verdict.replace("_", " "))}</p>
<p>{e(certificate.get("sentence", ""))} <i>({e(certificate.get("verdict_meaning", ""))}; basis: {e(certificate.get("basis", ""))})</i></p>
<ul>{reasons_html}</ul>
<table><tr><th>plan</th><td>{num(certificate["plan_performance"]["value"])}</td></tr>
<tr><th>estimated optimum ({e(certificate.get("design", "random"))} design)</th><td>{num(opt["estimate"])}</td></tr>
<tr><th>{opt["confidence"]:.0%} interval</th><td>[{num(opt["lower"])}, {num(opt["upper"])}]</td></tr>
{_other_designs(certificate, num)}<tr><th>rigorous bound</th><td>{bound_html}</td></tr>
<tr><th>gaps (signed)</th><td>{gap_html}</td></tr>
<tr><th>target gap</th><td>{_pct(certificate["target_gap"])}</td></tr>
<tr><th>samples measured (failed)</th><td>{certificate["samples"]["n"]} ({certificate["samples"]["failed"]})</td></tr>
<tr><th>flags</th><td>{flags_html}</td></tr></table>
<h2>The chosen plan</h2>
<pre>{e(plan_tree_text)}</pre>
<h2>Methods</h2>
<p>Every plan measured on the same oracle with the same seeds; "model" is the closed form's value of
the same plan; ± is the 95% half-width of a simulated figure; loss is against the best measured.</p>
<table><tr><th>method</th><th>model</th><th>measured</th><th>loss</th></tr>{rows_html}</table>
{methods_html}
{solver_html}
<h3>The certificate's sample</h3>
<table><tr><th>samples</th><th>measured</th></tr>{baselines}</table>
<h2>Plots</h2>
{figures_html}
<h2>How to pin the threads</h2>
<p>Context <i>i</i> is CPU <i>i</i> in the topology's order; map it to your machine's numbering
(<code>lscpu -e</code>) before use.</p>
<pre>{e(chr(10).join(pin_lines))}</pre>
</body></html>
"""
    from tasksolve.specs.files import write_text_atomic

    write_text_atomic(path, page)


def _other_designs(certificate: dict[str, Any], num) -> str:
    """Table rows of the other designs' estimates (`solver.certify.compare`): shown, not used for the verdict."""
    rows = ""
    for entry in (certificate.get("designs") or [])[1:]:
        what = f"[{num(entry.get('lower'))}, {num(entry.get('upper'))}]"
        if entry.get("top_atom"):
            what += " (best value hit twice or more: open)"
        rows += (
            f"<tr><th>for comparison: {html.escape(entry['design'])} design, {entry['n']} samples "
            f"(not used for the verdict)</th><td>{num(entry.get('estimate'))}, {what}</td></tr>"
        )
    return rows


def _bounded(value) -> float | None:
    """`_finite`, and None for an infinite limit (an interval open on that side)."""
    number = _finite(value)
    return None if number is None or abs(number) == float("inf") else number


def _finite(value) -> float | None:
    """A number from the certificate's JSON (where infinities are the strings "inf"/"-inf")."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if number != number else number


def _solver_section(solve: dict[str, Any] | None, objective: str) -> str:
    """CP-SAT's status, objective, bound and gap: the only rigorous evidence (for the closed form)."""
    if not solve or solve.get("status") in (None, "NOT_RUN"):
        return ""
    e = html.escape
    cpsat = solve.get("details", {}).get("cpsat", {})
    source = "configuration LP" if cpsat.get("bound_source", "cpsat") != "cpsat" else "CP-SAT"
    return (
        f"<h3>CP-SAT on the closed form</h3><table>"
        f"<tr><th>status</th><td>{e(str(solve['status']))}</td></tr>"
        f"<tr><th>model objective</th><td>{e(display.objective_value(_finite(solve.get('objective')), objective))}</td></tr>"
        f"<tr><th>bound ({e(source)})</th><td>{e(display.objective_value(_finite(solve.get('bound')), objective))}</td></tr>"
        f"<tr><th>proven gap</th><td>{e(display.share(_finite(solve.get('gap'))))}</td></tr></table>"
        "<p>The bound is proven for the closed-form model only; measured on the simulation a plan may "
        "differ from its model value.</p>"
    )


def _pct(value) -> str:
    if value is None or value != value:
        return "-"
    if value == float("inf"):
        return "∞"
    return f"{value:.2%}"
