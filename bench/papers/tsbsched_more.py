"""TSBSched (PPoPP'10) under conditions its tables cannot see, the part of
`bench/papers/tsbsched.py` that judges the predictors beyond the noise-free tables profiled on
the machine they are judged on (see `predictor_study` for the noise, the core-pair T2 and the
reference set):

* **Noise** (two instances, every class simulated): the tables profiled once, then `DRAWS`
  noisy copies (3%, PPoPP'10 §6); each draw's TSBSched top 10 (Figure 7, and Table 1 by cores
  used) and BlackBox top 1 / top 5 (TPDS Figures 7-8) judged on the noise-free simulation.
* **Core pairs** (two instances, 7,295 classes on the core-pair T2): run on every variant whose
  closed form the split changes for some class (elsewhere the machine is the T2's for these
  plans), judged on the reference set, noise-free and over the draws.
* **Figure 8** (three instances): TSBSched's prediction against the simulation over the
  systematic sample of §5.2.1 -- their rank correlation, the median relative error, and how far
  below the best measured the classes predicted in the top 5% fall.
"""

from __future__ import annotations

import math

import numpy as np
import predictor_study as study
from common import markdown_table
from scipy.stats import spearmanr

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding.samplers import distinct_placements

loss = study.loss


def noisy_two(tables, plans: np.ndarray, truth: np.ndarray, cores: np.ndarray, draws: int, by_cores) -> dict:
    """Per draw of 3% profiling noise: TSBSched's top-10 loss (overall and by cores used),
    BlackBox's top-1 and top-5 losses, against the best simulated class."""
    best = truth.max()
    pred = study.predictions(tables, plans, draws)
    tsb, bb = pred["tsbsched"][1], pred["blackbox"][1]
    return {
        "draws": draws,
        "noise": study.NOISE,
        "tsbsched_top10": [float(loss(truth[study.top(v, 10)].max(), best)) for v in tsb],
        "blackbox_top1": [float(loss(truth[study.top(v, 1)].max(), best)) for v in bb],
        "blackbox_top5": [float(loss(truth[study.top(v, 5)].max(), best)) for v in bb],
        "by_cores": [[float(c) for c in by_cores(v, truth, cores)] for v in tsb],
    }


def figure8(values: np.ndarray, order: np.ndarray, sample: np.ndarray, measured: np.ndarray, best: float) -> dict:
    """Figure 8: the sample's predictions against its measurements (§5.2.1)."""
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    in_top = rank[sample] < math.ceil(0.05 * len(order))
    predicted = values[sample]
    return {
        "spearman": float(spearmanr(predicted, measured).statistic),
        "median_error": float(np.median(np.abs(predicted / measured - 1)) * 100),
        "top5pct": int(in_top.sum()),
        "top5pct_worst": float(loss(measured[in_top].min(), best)) if in_top.any() else None,
    }


def pairs_runs(variants: dict, kinds: list[str], seed: int, draws: int) -> list[dict]:
    """Two instances of every variant on the core-pair T2 of each kind (see the module doc)."""
    out = []
    for kind in kinds:
        for name, app in variants.items():
            spec = study.make_spec(f"t2-{kind}-{name}-x2", app, 2, kind)
            plans, _ = distinct_placements(spec)
            t2 = study.make_spec(f"t2-{name}-x2", app, 2)
            split = BatchModel(spec).evaluate(plans).per_instance.sum(axis=1)
            whole = BatchModel(t2).evaluate(plans).per_instance.sum(axis=1)
            changed = float(np.mean(np.abs(split / whole - 1) > 1e-9) * 100)
            row = {"kind": kind, "variant": name, "changed": changed}
            if changed:
                figures, _ = study.judge(spec, plans, seed, draws, {"tsbsched": 10, "blackbox": 5}, everything=False)
                row.update(figures)
            out.append(row)
            print({k: v for k, v in row.items() if k not in ("tsbsched", "blackbox")}, flush=True)
    return out


def verdicts(two: list[dict], three: list[dict], pairs: list[dict], criteria: dict) -> list[dict]:
    """The rows of the noisy, core-pair and Figure 8 results."""
    out = []
    if two and "noise" in two[0]:
        out += _noise_verdicts(two, criteria)
    ran = [r for r in pairs if r.get("changed")]
    if ran:
        ok_exact = [r["tsbsched"]["exact"][-1] <= 3 and r["blackbox"]["exact"][0] <= 4 for r in ran]
        med = [
            study.over_draws([c[-1] for c in r["tsbsched"]["draws"]])["median"] <= 3
            and study.over_draws([c[0] for c in r["blackbox"]["draws"]])["median"] <= 4
            for r in ran
        ]
        worst = max(ran, key=lambda r: r["tsbsched"]["exact"][-1])
        out.append(
            {
                "result": "Core-pair T2: TSBSched top 10 and BlackBox top 1 (2 instances)",
                "paper": "(the T2: < 3% in 6 of 7; BlackBox < 4%)",
                "ours": f"noise-free within the bands in {sum(ok_exact)} of {len(ran)} runs, median over draws in "
                f"{sum(med)} of {len(ran)}; worst TSBSched top 10 {worst['tsbsched']['exact'][-1]:.2f}% "
                f"({worst['kind']} {worst['variant']}); skipped (split changes nothing): "
                f"{', '.join(r['kind'] + ' ' + r['variant'] for r in pairs if not r.get('changed')) or 'none'}",
                "criterion": criteria["pairs"],
                "holds": all(ok_exact) and all(med),
            }
        )
    if three:
        f8 = [r["fig8"] for r in three]
        ok = [f["spearman"] >= 0.9 and (f["top5pct_worst"] or 0) <= 10 for f in f8]
        out.append(
            {
                "result": "Figure 8: TSBSched predicted vs measured (3 instances, sample of 700)",
                "paper": "the prediction follows the measurement closely; top 5% predicted very unlikely below 10%",
                "ours": f"Spearman {min(f['spearman'] for f in f8):.3f}-{max(f['spearman'] for f in f8):.3f}; "
                f"top 5% predicted at most {max((f['top5pct_worst'] or 0) for f in f8):.1f}% below the best; "
                f"in the bands in {sum(ok)} of {len(ok)}",
                "criterion": criteria["fig8"],
                "holds": all(ok),
            }
        )
    return out


def _noise_verdicts(two: list[dict], criteria: dict) -> list[dict]:
    tsb = [study.over_draws(r["noise"]["tsbsched_top10"]) for r in two]
    bb = [study.over_draws(r["noise"]["blackbox_top1"]) for r in two]
    cells = np.array([r["noise"]["by_cores"] for r in two])  # (variants, draws, 5)
    med_cells, worst_cells = np.median(cells, axis=1), cells.max(axis=1)
    draws = two[0]["noise"]["draws"]
    within = sum(d["median"] <= 3 for d in tsb)
    return [
        {
            "result": f"Figure 7 with 3% profiling noise: TSBSched top 10 ({draws} draws)",
            "paper": "< 3% in 6 of 7; single worst 5%",
            "ours": f"median <= 3% in {within} of {len(two)}; worst draw "
            f"{max(d['worst'] for d in tsb):.2f}% ({two[int(np.argmax([d['worst'] for d in tsb]))]['variant']})",
            "criterion": criteria["noise_fig7"],
            "holds": within >= len(two) - 1 and all(d["worst"] <= 5 for d in tsb),
        },
        {
            "result": "Table 1 with 3% profiling noise: top-10 loss by cores used",
            "paper": "all < 3%",
            "ours": f"median: max {med_cells.max():.2f}%, {int((med_cells > 3).sum())} of {med_cells.size} cells "
            f"above 3%; worst draw: max {worst_cells.max():.2f}%, {int((worst_cells > 5).sum())} cells above 5%",
            "criterion": criteria["noise_table1"],
            "holds": bool(med_cells.max() <= 3 and worst_cells.max() <= 5),
        },
        {
            "result": "TPDS Figure 7 with 3% profiling noise: BlackBox top 1",
            "paper": "always below 4%",
            "ours": f"median max {max(d['median'] for d in bb):.2f}%; worst draw {max(d['worst'] for d in bb):.2f}% "
            f"({two[int(np.argmax([d['worst'] for d in bb]))]['variant']}); worst draw <= 4% in "
            f"{sum(d['worst'] <= 4 for d in bb)} of {len(two)}",
            "criterion": criteria["noise_tpds7"],
            "holds": all(d["median"] <= 4 and d["worst"] <= 4 for d in bb),
        },
    ]


def render(data: dict) -> list[str]:
    """The noisy, core-pair and Figure 8 tables (markdown lines)."""
    lines = []
    two = [r for r in data["two"] if "noise" in r]
    if two:
        n = two[0]["noise"]
        lines += [
            f"With profiling noise ({n['noise']:.0%} relative standard deviation on every profiled figure, "
            f"{n['draws']} draws, seeds 0-{n['draws'] - 1}; losses median / worst over draws, %; the plans judged on "
            "the noise-free simulation of every class):",
            "",
        ]
        rows = [
            [
                r["variant"],
                f"{r['tsbsched_top10']:.2f}",
                study.fmt_draws(r["noise"]["tsbsched_top10"]),
                f"{r['blackbox_top1']:.2f}",
                study.fmt_draws(r["noise"]["blackbox_top1"]),
                study.fmt_draws(r["noise"]["blackbox_top5"]),
            ]
            + [study.fmt_draws([d[k] for d in r["noise"]["by_cores"]]) for k in range(5)]
            for r in two
        ]
        cols = ["variant", "TSBSched top 10: noise-free", "noisy", "BlackBox top 1: noise-free", "noisy"]
        cols += ["BlackBox top 5 noisy"] + [f"Table 1, {k} core{'s' if k > 1 else ''}" for k in range(1, 6)]
        lines += [markdown_table(cols, rows), ""]
    lines += _render_pairs(data.get("pairs", []))
    three = [r for r in data["three"] if "fig8" in r]
    if three:
        lines += ["Figure 8 (three instances, TSBSched's prediction against the simulation over the sample):", ""]
        rows = [
            [
                r["variant"],
                f"{r['fig8']['spearman']:.3f}",
                f"{r['fig8']['median_error']:.1f}",
                r["fig8"]["top5pct"],
                "-" if r["fig8"]["top5pct_worst"] is None else f"{r['fig8']['top5pct_worst']:.2f}",
            ]
            for r in three
        ]
        cols = ["variant", "Spearman", "median abs error %", "sampled in the predicted top 5%", "their worst loss %"]
        lines += [markdown_table(cols, rows), ""]
    return lines


def _render_pairs(pairs: list[dict]) -> list[str]:
    ran = [r for r in pairs if r.get("changed")]
    if not ran:
        return []
    lines = [
        "Core-pair T2 (L2 and memory per pair of cores; `even`: a quarter of the chip's each, `narrow`: half that; "
        "losses against the best of the reference set, noise-free and median / worst over the draws):",
        "",
    ]
    rows = [
        [
            r["kind"],
            r["variant"],
            f"{r['changed']:.0f}%",
            f"{r['simulated']} of {r['classes']}",
            r["closed_form_rank_of_best"],
            f"{r['tsbsched']['exact'][-1]:.2f}",
            study.fmt_draws([c[-1] for c in r["tsbsched"]["draws"]]),
            f"{r['blackbox']['exact'][0]:.2f}",
            study.fmt_draws([c[0] for c in r["blackbox"]["draws"]]),
            study.fmt_draws([c[-1] for c in r["blackbox"]["draws"]]),
            f"{r['balanced']['average']:.1f} / {r['balanced']['worst']:.1f} ({r['balanced']['count']})",
            f"{r['all']['average']:.1f} / {r['all']['worst']:.1f}",
            f"{r['tsbsched']['spearman']:.3f} / {r['blackbox']['spearman']:.3f}",
        ]
        for r in ran
    ]
    cols = ["split", "variant", "classes changed", "simulated", "closed-form rank of the best"]
    cols += ["TSBSched top 10", "noisy", "BlackBox top 1", "noisy", "BlackBox top 5 noisy"]
    cols += ["balanced avg / worst (n)", "uniform sample avg / worst", "Spearman TSBSched / BlackBox"]
    return lines + [markdown_table(cols, rows), ""]
