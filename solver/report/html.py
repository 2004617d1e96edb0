"""`report.html`: one self-contained page (plots embedded as PNG data) that answers first.

The first screen is the answer: the verdict's sentence, the plan (thread -> context and the
pinning command), its value in the spec's unit, and how much better it is than the naive,
balanced and random placements and the predictors.  The evidence follows: the verdict's reasons,
the certificate's figures, the methods, the plots (`solver.report.figures`: each labelled for the
sample it shows; a degenerate one is left out with the reason), and the plan drawn on the
topology.  The page reads the typed certificate (`solver.certify.certificate.Certificate`) by
attribute; given a certificate JSON it reads it back first (`Certificate.from_dict`).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from tasksolve.solver.report import figures as fg
from tasksolve.solver.report.figures import comparison_figure, estimates_figure, selection_figure  # noqa: F401 (re-exported)
from tasksolve.specs import Plan, Spec, display
from tasksolve.specs.files import finite_or_none
from tasksolve.specs.objective import Objective
from tasksolve.specs.oracles import noun

COLOURS = {True: "#1d7a36", False: "#b3261e"}


def _sample_values(cert) -> list[float]:
    """The certificate's sample, read back from its samples file (empty if it is gone)."""
    path = Path(cert.samples.file)
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines()[1:]:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("status") == "ok" and record.get("index", 0) < cert.samples.requested:
            out.append(float(record["value"]))
    return out


def _figures(cert, analysis, history, comparison, selection_curves) -> tuple[list[tuple[str, str, str]], list[str]]:
    """((id, caption, PNG data URL) of every plot, [why a plot is left out])."""
    from tasksolve.evt import plots

    objective = cert.objective
    shown: list[tuple[str, str, str]] = []
    omitted: list[str] = []
    what = cert.samples.draws
    if comparison:
        caption = (
            "Every method's plan measured on the same oracle; longer is better for throughput, shorter for latency."
        )
        shown.append(("comparison", caption, fg.png(fg.comparison_figure(comparison, objective))))
    if selection_curves:
        caption = (
            "Selection phase of TSBSched and BlackBox: loss of the best measured among the n best predicted "
            "plans against the best measured plan of the comparison; n = 1 is the method without selection."
        )
        shown.append(("selection", caption, fg.png(fg.selection_figure(selection_curves))))
    caption = (
        "The plan against the evidence: the estimate of the optimum with its interval (an arrow: open on that side), "
        "the bounds (green: a bound on this oracle; grey: of another model), and the best known plans."
    )
    shown.append(("estimates", caption, fg.png(fg.estimates_figure(cert))))
    values = _sample_values(cert)
    if values and len(set(values)) == 1:
        omitted.append(
            f"The sample's distribution is not drawn: all {len(values)} samples ({what}) have one value, "
            f"{Objective.of(objective).format(values[0])}."
        )
    elif values:
        estimate = finite_or_none(cert.optimum.estimate)
        caption = (
            f"Distribution of the certificate's sample ({what}, n = {len(values)}): the share of the sample at or "
            "below each value; dotted: the plan"
            + ("; dashed: the estimated optimum." if estimate is not None else " (no finite estimate to mark).")
        )
        shown.append(
            ("ecdf", caption, fg.png(fg.ecdf_figure(values, cert.plan_performance.value, objective, what, estimate)))
        )
    _diagnostics(cert, analysis, what, shown, omitted)
    if history is not None and len(history.steps) > 1:
        caption = (
            f"Sequential sampling ({what}): the best sample and the estimate as the sample grew, until the verdict "
            "was decided or the budget ended."
        )
        shown.append(("sequential", caption, fg.png(fg.in_unit(plots.plot_sequential(history), objective, "y"))))
    elif history is not None:
        omitted.append("The sequential history is not drawn: the verdict was decided at the first look.")
    return shown, omitted


def _diagnostics(cert, analysis, what: str, shown: list, omitted: list) -> None:
    """The EVT diagnostics (mean excess, QQ, profile likelihood), each drawn or left out with the reason."""
    from tasksolve.evt import plots

    objective = cert.objective
    if analysis is None:
        omitted.append(
            "The EVT diagnostics (mean excess, QQ, profile likelihood) are not drawn: EVT could not analyse the sample."
        )
    else:
        note = (
            "Not used for the verdict (the best value is hit by several draws, so the GPD tail does not hold): "
            if cert.optimum.top_atom is not None
            else ""
        )
        for fid, caption, draw, axes in (
            (
                "mean-excess",
                f"Mean excess beyond each level ({what}): the tail is fitted beyond the dashed threshold, where the "
                "curve is roughly straight (falling: a finite optimum).",
                plots.plot_mean_excess,
                "xy",
            ),
            (
                "qq",
                f"Excesses beyond the threshold ({what}) against the fitted Generalised Pareto quantiles: points on "
                "the diagonal mean the fit describes the tail.",
                plots.plot_qq,
                "xy",
            ),
            (
                "profile",
                "Profile log-likelihood of the optimum: the interval is where the curve stays above the dashed line "
                "(Wilks' theorem); an interval open on one side runs off the plot.",
                plots.plot_profile,
                "x",
            ),
        ):
            why = _degenerate(fid, analysis)
            if why:
                omitted.append(f"The {fid.replace('-', ' ')} plot is not drawn: {why}.")
                continue
            labels = {
                "mean-excess": ("level: {unit}", "mean excess beyond the level: {unit}"),
                "qq": (
                    "fitted GPD quantile: {unit} beyond the threshold",
                    "sample quantile: {unit} beyond the threshold",
                ),
                "profile": ("optimum: {unit}", None),
            }[fid]
            figure = fg.in_unit(draw(analysis), objective, axes, labels[0], ylabel=labels[1])
            shown.append((fid, note + caption, fg.png(figure)))


def _degenerate(fid: str, analysis) -> str | None:
    """Why a diagnostic plot would be empty or misleading (None: draw it)."""
    import numpy as np

    if fid == "mean-excess":
        me = analysis.mean_excess()
        if np.count_nonzero(np.isfinite(me.values)) < 3:
            return "fewer than 3 distinct levels have values beyond them"
    if fid == "qq" and analysis.exceedances < 3:
        return "fewer than 3 values lie beyond the threshold"
    return None


def _better_rows(cert, comparison, baselines, answer: str | None = None) -> list[tuple[str, str, str]]:
    """(what, its value, how much better the plan is) for the first screen; `answer` is the
    method whose plan is the answer (its own rows are left out)."""
    objective = Objective.of(cert.objective)
    plan = cert.plan_performance.value
    rows = []

    def better(value) -> str:
        if value in (None, 0) or plan is None:
            return "-"
        gain = (objective.score(plan) - objective.score(value)) / abs(value)
        if abs(gain) < 5e-4:
            return "equal"
        word = "better" if gain >= 0 else "worse"
        return f"{abs(gain):.1%} {word}"

    for row in comparison or []:
        value = row.get("simulated")
        method = str(row.get("method") or "")
        if value is None or not method or (answer and method.split()[0] == answer):
            continue
        shown = objective.format(value, row.get("half_width"))
        rows.append((str(row["method"]), shown, better(value)))
    for b in baselines:
        if "average" in b.method and b.value is not None:
            rows.append((b.method, objective.format(b.value), better(b.value)))
    return rows


def write_report(
    path,
    spec: Spec,
    plan: Plan,
    certificate: Any,
    analysis,
    history,
    comparison: list[dict[str, Any]] | None,
    plan_tree_text: str,
    pin_lines: list[str],
    selection_curves: dict[str, list[float]] | None = None,
    methods_html: str = "",
) -> None:
    """Write the page atomically.  `certificate` is a `Certificate`, or its JSON (a dict, with the
    main job's solve report under ``"solve"``); `selection_curves` (method -> losses for
    n = 1..N) adds the selection-phase plot; `methods_html` (already escaped) follows the methods table."""
    from tasksolve.solver.certify.certificate import Certificate

    solve = certificate.get("solve") if isinstance(certificate, dict) else None
    cert = certificate if isinstance(certificate, Certificate) else Certificate.from_dict(certificate)
    from tasksolve.specs.files import write_text_atomic

    write_text_atomic(
        path,
        page(
            spec,
            plan,
            cert,
            solve,
            analysis,
            history,
            comparison,
            plan_tree_text,
            pin_lines,
            selection_curves,
            methods_html,
        ),
    )


def _answer(spec: Spec, plan: Plan, cert, comparison, pin_lines: list[str], answer: str | None = None) -> str:
    """The first screen: the verdict's sentence, the plan's value, what it beats, where threads go."""
    e = html.escape
    perf = cert.plan_performance
    colour = COLOURS[cert.positive]
    value = Objective.of(cert.objective).format(perf.value, perf.half_width)
    quantity = Objective.of(cert.objective).quantity
    better = "".join(
        f"<tr><td>{e(what)}</td><td>{e(shown)}</td><td><b>{e(gain)}</b></td></tr>"
        for what, shown, gain in _better_rows(cert, comparison, cert.baselines, answer)
    )
    bindings = "".join(
        f"<tr><td>{e(str(thread))}</td><td>{e(str(context))}</td></tr>" for thread, context in plan.bindings.items()
    )
    sentence = cert.sentence
    return f"""<section id="answer" style="border-left:6px solid {colour};padding:.2em 1em;margin:1em 0">
<p class="sentence" style="font-size:1.25em;color:{colour}"><b>{e(sentence)}</b></p>
<p class="value">The plan's {quantity}: <b style="font-size:1.3em">{e(value)}</b> on the {e(noun(perf.oracle))}
(verdict <code>{e(cert.verdict)}</code>, exit code {cert.exit_code}).</p>
<div style="display:flex;gap:2em;flex-wrap:wrap;align-items:flex-start">
<table><tr><th>compared with</th><th>{quantity}</th><th>the plan is</th></tr>{better}</table>
<table><tr><th>thread</th><th>context</th></tr>{bindings}</table>
</div>
<p>Pin the threads (context <i>i</i> is CPU <i>i</i> in the topology's order; map it with <code>lscpu -e</code>):</p>
<pre>{e(chr(10).join(pin_lines))}</pre>
</section>"""


class _Ends:
    def __init__(self, lower, upper) -> None:
        self.lower, self.upper = lower, upper


def _evidence_table(cert) -> str:
    e = html.escape

    def num(value) -> str:
        number = finite_or_none(value)
        return "none" if number is None else e(Objective.of(cert.objective).format(number))

    from tasksolve.solver.certify.summary import interval_text

    opt, samples = cert.optimum, cert.samples
    bounds = (
        "".join(
            f"<tr><th>{e(b.label)}</th><td>{num(b.value)} ({e(b.source)}{', ' + e(b.status) if b.status else ''})"
            + (f"; proven optimum {num(b.proven_optimum)}" if b.proven_optimum is not None else "")
            + "</td></tr>"
            for b in cert.bounds
        )
        or "<tr><th>rigorous bound</th><td>none applies to this oracle</td></tr>"
    )
    why_none = opt.nulls.get("estimate", "")
    estimate = num(opt.estimate) if opt.estimate is not None else f"none ({e(why_none)})"
    designs = "".join(
        f"<tr><th>for comparison: {e(d['design'])} design, {d['n']} samples (not used for the verdict)</th>"
        f"<td>{num(d.get('estimate'))}, {e(interval_text(_Ends(d.get('lower'), d.get('upper')), cert.objective))}"
        + (" (best value hit many times: open)" if d.get("top_atom") else "")
        + "</td></tr>"
        for d in (cert.designs or [])[1:]
    )
    from tasksolve.evt.result import FLAG_NOTES

    flags = "<br>".join(
        f"<b>{e(f)}</b>: {e(FLAG_NOTES.get(f, 'EVT could not analyse the sample'))}" for f in cert.flags
    )
    measured = f", {display.count(samples.classes, 'placement class')}" if samples.classes else ""
    # a proof beside "unanalysable" reads as a contradiction: say which the verdict rests on
    flags_heading = "EVT flags" if cert.basis == "EVT estimate" else "EVT flags (the verdict does not rest on EVT)"
    return f"""<table>
<tr><th>sample</th><td>{samples.n} {e(samples.draws)} ({samples.failed} failed{measured})</td></tr>
<tr><th>the draw bound covers</th><td>{e(samples.covers)}</td></tr>
<tr><th>estimated optimum ({e(opt.source)})</th><td>{estimate}</td></tr>
<tr><th>{opt.confidence:.0%} interval</th><td>{e(interval_text(opt, cert.objective))}</td></tr>
<tr><th>one more draw beats the best, at most</th><td>{_pct(opt.beat_bound)} (distribution-free, {opt.confidence:.0%})</td></tr>
{designs}{bounds}
<tr><th>gaps (signed)</th><td>{"<br>".join(e(w) for w in cert.gap.words)}</td></tr>
<tr><th>target gap</th><td>{_pct(cert.target_gap)}</td></tr>
<tr><th>{flags_heading}</th><td>{flags or "none"}</td></tr></table>"""


def page(
    spec, plan, cert, solve, analysis, history, comparison, plan_tree_text, pin_lines, selection_curves, methods_html
) -> str:
    e = html.escape
    objective = cert.objective
    shown, omitted = _figures(cert, analysis, history, comparison, selection_curves)
    rows_html = ""
    for row in comparison or []:
        loss = row.get("loss")
        measured = Objective.of(objective).format(
            finite_or_none(row.get("simulated")), finite_or_none(row.get("half_width"))
        )
        predicted = Objective.of(objective).format(finite_or_none(row.get("predicted")))
        rows_html += (
            f"<tr><td>{e(row['method'])}</td><td>{e(predicted)}</td>"
            f"<td>{e(measured)}</td><td>{'' if loss is None else display.share(loss, 1)}</td></tr>"
        )
    baselines = "".join(
        f"<tr><td>{e(b.method)}</td><td>{e(Objective.of(objective).format(b.value))}</td></tr>" for b in cert.baselines
    )
    figures_html = "".join(
        f'<figure id="{fid}"><img alt="{e(title)}" src="{src}"><figcaption>{e(title)}</figcaption></figure>'
        for fid, title, src in shown
    ) + "".join(f"<p><i>{e(why)}</i></p>" for why in omitted)
    reasons_html = "".join(f"<li>{e(r.sentence)}</li>" for r in cert.reasons)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tasksolve report: {e(spec.name)}</title>
<style>
body{{font-family:system-ui,sans-serif;max-width:1000px;margin:1em auto;padding:0 1em;color:#222}}
h1{{font-size:1.4em;margin:.3em 0}} h2{{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}}
table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:.2em .6em;text-align:right}}
td:first-child,th:first-child{{text-align:left}} pre{{background:#f6f6f6;padding:.6em;overflow-x:auto;margin:.3em 0}}
figure{{margin:1em 0}} img{{max-width:100%}}
</style></head><body>
<h1>tasksolve: {e(spec.name)}</h1>
<p>{len(spec.threads)} threads of {", ".join(e(a) for a in spec.applications)} on {e(spec.topology.name)}
({e(spec.topology.describe())}); objective <b>{e(objective)}</b>.</p>
{_answer(spec, plan, cert, comparison, pin_lines, (solve or {}).get("method"))}
<h2>Evidence</h2>
<p><i>{e(cert.verdict_meaning)}</i> (basis: {e(cert.basis)}). Why:</p>
<ul>{reasons_html}</ul>
{_evidence_table(cert)}
<h2>Methods</h2>
<p>Every plan measured on the same oracle; "model" is the closed form's value of the same plan;
± is the 95% half-width of a simulated figure; loss is against the best measured.</p>
<table><tr><th>method</th><th>model</th><th>measured</th><th>loss</th></tr>{rows_html}</table>
{methods_html}
{_solver_section(solve, objective)}
<h3>The certificate's sample</h3>
<table><tr><th>samples</th><th>{Objective.of(objective).quantity}</th></tr>{baselines}</table>
<h2>Plots</h2>
{figures_html}
<h2>The plan on the topology</h2>
<pre>{e(plan_tree_text)}</pre>
</body></html>
"""


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
        f"<tr><th>model objective</th><td>{e(Objective.of(objective).format(finite_or_none(solve.get('objective'))))}</td></tr>"
        f"<tr><th>bound ({e(source)})</th><td>{e(Objective.of(objective).format(finite_or_none(solve.get('bound'))))}</td></tr>"
        f"<tr><th>proven gap</th><td>{e(display.share(finite_or_none(solve.get('gap'))))}</td></tr></table>"
        "<p>The bound is proven for the closed-form model only; measured on the simulation a plan may "
        "differ from its model value.</p>"
    )


def _pct(value) -> str:
    if value is None or value != value:
        return "-"
    if value == float("inf"):
        return "∞"
    return f"{value:.2%}"
