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

from specs import Plan, Spec


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


def ecdf_with_plan(analysis, plan_value: float, objective: str):
    from evt.plots import plot_ecdf

    fig = plot_ecdf(analysis)
    ax = fig.axes[0]
    ax.axvline(plan_value, color="#7b2cbf", linewidth=2, linestyle=":", label="chosen plan")
    ax.legend(loc="best", fontsize=8)
    return fig


def write_report(path, spec: Spec, plan: Plan, certificate: dict[str, Any], analysis, history,
                 comparison: list[dict[str, Any]] | None, plan_tree_text: str, pin_lines: list[str]) -> None:
    """Write the page atomically."""
    from evt import plots

    objective = certificate["objective"]
    figures: list[tuple[str, str, str]] = []
    if comparison:
        figures.append(("comparison", "Method comparison", _png(comparison_figure(comparison, objective))))
    figures.append(("ecdf", "Random plans (ECDF), the chosen plan and the estimated optimum",
                    _png(ecdf_with_plan(analysis, certificate["plan_performance"]["value"], objective))))
    figures.append(("mean-excess", "Mean excess and the threshold", _png(plots.plot_mean_excess(analysis))))
    figures.append(("qq", "QQ plot against the fitted GPD", _png(plots.plot_qq(analysis))))
    figures.append(("profile", "Profile log-likelihood of the optimum", _png(plots.plot_profile(analysis))))
    if history is not None:
        figures.append(("sequential", "Sequential sampling history", _png(plots.plot_sequential(history))))

    e = html.escape
    opt = certificate["optimum"]
    unit = "s" if objective == "latency" else "packets/s"
    rows_html = ""
    for row in comparison or []:
        loss = row.get("loss")
        rows_html += (f"<tr><td>{e(row['method'])}</td><td>{_num(row.get('predicted'))}</td>"
                      f"<td>{_num(row.get('simulated'))}</td><td>{_num(row.get('half_width'))}</td>"
                      f"<td>{'' if loss is None else f'{loss:.1%}'}</td></tr>")
    baselines = "".join(f"<tr><td>{e(b['method'])}</td><td>{_num(b['value'])}</td></tr>" for b in certificate["baselines"])
    figures_html = "".join(f'<figure id="{fid}"><img alt="{e(title)}" src="{src}"><figcaption>{e(title)}</figcaption></figure>'
                           for fid, title, src in figures)
    verdict = certificate["verdict"]
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tasksolve report: {e(spec.name)}</title>
<style>
body{{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}}
h1{{font-size:1.6em}} h2{{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}}
table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:.25em .6em;text-align:right}}
td:first-child,th:first-child{{text-align:left}} pre{{background:#f6f6f6;padding:.8em;overflow-x:auto}}
.verdict{{font-size:1.3em;font-weight:bold}} .certified{{color:#1d7a36}} .not_certified{{color:#b3261e}}
.exceeds_estimate{{color:#1d5fa8}} .no_finite_optimum{{color:#8a5a00}} figure{{margin:1em 0}} img{{max-width:100%}}
</style></head><body>
<h1>tasksolve: {e(spec.name)}</h1>
<h2>Spec</h2>
<p>{len(spec.threads)} threads of {', '.join(e(a) for a in spec.applications)} on {e(spec.topology.name)}
({e(spec.topology.describe())}); objective <b>{e(objective)}</b>; {len(spec.usable_contexts)} usable contexts.</p>
<h2>Certificate</h2>
<p class="verdict {e(verdict)}">{e(verdict.replace('_', ' '))}</p>
<table><tr><th>plan</th><td>{_num(certificate['plan_performance']['value'])} {unit}</td></tr>
<tr><th>estimated optimum</th><td>{_num(opt['estimate'])} {unit}</td></tr>
<tr><th>{opt['confidence']:.0%} interval</th><td>[{_num(opt['lower'])}, {_num(opt['upper'])}]</td></tr>
<tr><th>gap (point / worst case)</th><td>{_pct(certificate['gap']['point'])} / {_pct(certificate['gap']['worst'])}</td></tr>
<tr><th>target gap</th><td>{_pct(certificate['target_gap'])}</td></tr>
<tr><th>random plans measured (failed)</th><td>{certificate['samples']['n']} ({certificate['samples']['failed']})</td></tr>
<tr><th>flags</th><td>{e(', '.join(certificate['flags']) or 'none')}</td></tr></table>
<h2>The chosen plan</h2>
<pre>{e(plan_tree_text)}</pre>
<h2>Methods</h2>
<table><tr><th>method</th><th>model</th><th>measured</th><th>± half-width</th><th>loss</th></tr>{rows_html}</table>
<h3>Baselines</h3>
<table><tr><th>baseline</th><th>measured</th></tr>{baselines}</table>
<h2>Plots</h2>
{figures_html}
<h2>How to pin the threads</h2>
<p>Context <i>i</i> is CPU <i>i</i> in the topology's order; map it to your machine's numbering
(<code>lscpu -e</code>) before use.</p>
<pre>{e(chr(10).join(pin_lines))}</pre>
</body></html>
"""
    from specs.files import write_text_atomic

    write_text_atomic(path, page)


def _num(value) -> str:
    if value is None:
        return "-"
    try:
        value = float(value)
    except (TypeError, ValueError):
        return html.escape(str(value))
    if value != value:
        return "-"
    if value in (float("inf"), float("-inf")):
        return "∞" if value > 0 else "-∞"
    return f"{value:.6g}"


def _pct(value) -> str:
    if value is None or value != value:
        return "-"
    if value == float("inf"):
        return "∞"
    return f"{value:.2%}"
