"""The pieces of `bench/papers/blackbox.py` (BlackBox, IEEE TPDS): Table 1 of §3.2, whether the
core-pair T2 changes a variant's closed form, the verdicts and the tables."""

from __future__ import annotations

import numpy as np
import predictor_study as study
from common import markdown_table

from tasksolve.simulate.analytic import BatchModel
from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.binding.samplers import balanced_plans, distinct_placements, uniform_plans
from tasksolve.solver.predictors.tables import ProfileTables
from tasksolve.specs.counting import scientific

SECONDS = 2.0  # §3.2: "a single experiment can be executed in two seconds"
HOUR, DAY, YEAR = 3600.0, 86400.0, 365.25 * 86400.0
# §3.2's figures: threads -> (one server, four servers), in seconds
PAPER_TABLE1 = {
    4: (5.5 * HOUR, 1.3 * HOUR),
    6: (2.5 * DAY, 15 * HOUR),
    8: (17 * DAY, 4.2 * DAY),
    32: (9e23 * YEAR, None),
}


def chain_app(threads: int) -> dict:
    """An application of `threads` tasks in a pipeline (R, P1 .. Pn, T): Table 1 counts
    experiments, which depend on the number of task types, not on their demands."""
    task = {"cycles": 500, "demand": {"ifu": 0.35, "l1": 0.2}, "idle_demand": {"ifu": 0.3}}
    names = ["R"] + [f"P{k}" for k in range(1, threads - 1)] + ["T"]
    edges = [{"from": a, "to": b, "bytes": "64B"} for a, b in zip(names, names[1:])]
    return {"description": f"a {threads}-stage pipeline", "tasks": {n: dict(task) for n in names}, "edges": edges}


def table1() -> list[dict]:
    """Experiments in the complete tables and their time at 2 s each, 4 / 6 / 8 / 32 threads."""
    rows = []
    for threads, (one, four) in PAPER_TABLE1.items():
        spec = study.make_spec(f"t2-chain-{threads}", chain_app(threads), 1)
        size = ProfileTables(spec, lambda s: make_oracle(s, "analytic")).full_table_size()
        rows.append({"threads": threads, **size, "seconds": size["total"] * SECONDS, "paper": [one, four]})
    return rows


def split_matters(app, kind: str, instances: int, size: int = 0, balanced: int = 0, seed: int = 0) -> bool:
    """Whether the core-pair split changes the closed form of any plan judged (every class of
    two instances; the uniform and balanced sample of eight)."""
    spec = study.make_spec(f"{kind}-x{instances}", app, instances, kind)
    t2 = study.make_spec(f"t2-x{instances}", app, instances)
    if instances == 2:
        plans, _ = distinct_placements(spec)
    else:
        plans = np.concatenate([uniform_plans(spec, size, seed=seed), balanced_plans(spec, balanced, seed=seed)])
    split = BatchModel(spec).evaluate(plans).per_instance.sum(axis=1)
    whole = BatchModel(t2).evaluate(plans).per_instance.sum(axis=1)
    return bool(np.any(np.abs(split / whole - 1) > 1e-9))


def show(row: dict) -> None:
    print(
        row["kind"],
        row["variant"],
        {m: (row[m]["exact"][0], row[m]["exact"][-1]) for m in ("blackbox", "tsbsched")},
        "simulated",
        row["simulated"],
        "profiling",
        row["experiments"],
        flush=True,
    )


def big(n: int) -> str:
    """A count with thousands separators, in scientific notation past a billion."""
    return f"{n:,}" if n < 10**9 else scientific(n)


def duration(seconds: float) -> str:
    if seconds < 2 * DAY:
        return f"{seconds / HOUR:.1f} h"
    if seconds < YEAR:
        return f"{seconds / DAY:.1f} d"
    return f"{seconds / YEAR:.1e} years"


def med(curves: list[list[float]], n: int) -> float:
    """Median over draws of the loss of the best of the first n."""
    return study.over_draws([c[n - 1] for c in curves])["median"]


def gains(row: dict) -> list[float]:
    """Per draw: the selection phase's gain, top 1 - best of top 5 (points of %)."""
    return [c[0] - c[-1] for c in row["blackbox"]["draws"]]


def verdicts(data: dict, criteria: dict) -> list[dict]:
    out = [_table1_verdict(data["table1"], criteria)]
    six = [r for r in data["six"] if r["kind"] == "t2"]
    if six:
        out += _six_verdicts(six, criteria)
    nine = [r for r in data["nine"] if r["kind"] == "t2"]
    if nine:
        out += _nine_verdicts(nine, criteria)
    pairs = [r for r in data["six"] + data["nine"] if r["kind"] != "t2"]
    if pairs:
        ok = [_pair_ok(r) for r in pairs]
        out.append(
            {
                "result": "Core-pair T2: BlackBox in TPDS Figure 7's and 9's bands",
                "paper": "(the T2: top 1 < 4% at 6 threads; TOP1 <= 2.8%, TOP5 <= 1.4% at 24)",
                "ours": f"in the bands in {sum(ok)} of {len(ok)} runs ("
                + ", ".join(f"{r['variant']} x{8 if 'sample' in r else 2}" for r, k in zip(pairs, ok) if not k)
                + (" out)" if not all(ok) else "all)"),
                "criterion": criteria["pairs"],
                "holds": all(ok),
            }
        )
    return out


def _pair_ok(r: dict) -> bool:
    c, d = r["blackbox"]["exact"], r["blackbox"]["draws"]
    if "sample" in r:
        return c[0] <= 2.8 and c[-1] <= 1.4 and med(d, 1) <= 2.8 and med(d, 5) <= 1.4
    return c[0] <= 4 and med(d, 1) <= 4


def _table1_verdict(rows: list[dict], criteria: dict) -> dict:
    ok = True
    for r in rows:
        for ours, paper in zip([r["seconds"], r["seconds"] / 4], r["paper"]):
            if paper is not None:
                ok &= abs(ours / paper - 1) <= 0.1 if r["threads"] < 32 else 0.5 <= ours / paper <= 2
    return {
        "result": "Table 1: profiling time of the complete tables (2 s an experiment)",
        "paper": "4 / 6 / 8 threads: 5.5 h, 2.5 d, 17 d (four servers 1.3 h, 15 h, 4.2 d); 32: 9e23 years",
        "ours": "; ".join(f"{r['threads']}: {big(r['total'])} runs, {duration(r['seconds'])}" for r in rows),
        "criterion": criteria["table1"],
        "holds": bool(ok),
    }


def _six_verdicts(six: list[dict], criteria: dict) -> list[dict]:
    top1 = [(r["blackbox"]["exact"][0], med(r["blackbox"]["draws"], 1)) for r in six]
    g = [float(np.median(gains(r))) for r in six]
    gaining = sum(x > 0.1 for x in g)
    return [
        {
            "result": "Figure 7: BlackBox top 1, no selection (6 threads, 9 variants)",
            "paper": "always below 4%; the best in 4 of 9",
            "ours": f"noise-free max {max(a for a, _ in top1):.2f}% (the best in {sum(a < 0.005 for a, _ in top1)} "
            f"of {len(six)}); median over draws max {max(b for _, b in top1):.2f}%",
            "criterion": criteria["fig7"],
            "holds": all(a <= 4 and b <= 4 for a, b in top1),
        },
        {
            "result": "Figure 8: the selection phase's gain, top 1 -> best of top 5 (6 threads)",
            "paper": "gains in 4 of 9, by 1.8% (intmul) to 3.9% (hash1_L2)",
            "ours": f"median gain > 0.1% in {gaining} of {len(six)}, largest {max(g):.2f}% "
            f"({six[int(np.argmax(g))]['variant']}); noise-free it gains in "
            f"{sum(r['blackbox']['exact'][0] - r['blackbox']['exact'][-1] > 0.1 for r in six)}",
            "criterion": criteria["fig8"],
            "holds": 2 <= gaining <= 7 and max(g) <= 4,
        },
    ]


def _nine_verdicts(nine: list[dict], criteria: dict) -> list[dict]:
    b = [r["blackbox"] for r in nine]
    ok = [
        c["exact"][0] <= 2.8 and c["exact"][-1] <= 1.4 and med(c["draws"], 1) <= 2.8 and med(c["draws"], 5) <= 1.4
        for c in b
    ]
    above = all(r["blackbox"]["exact"][-1] < min(r["all"]["average"], r["balanced"]["average"]) for r in nine)
    naive = [r["all"]["average"] for r in nine]
    return [
        {
            "result": f"Figure 9: BlackBox TOP1 / TOP5 (24 threads, {nine[0]['sample']} random + balanced)",
            "paper": "TOP1 <= 2.8% (intdiv), TOP5 <= 1.4% (hash1_Mem), sample of 1000",
            "ours": f"noise-free TOP1 max {max(c['exact'][0] for c in b):.2f}%, TOP5 max "
            f"{max(c['exact'][-1] for c in b):.2f}%; median over draws TOP1 max {max(med(c['draws'], 1) for c in b):.2f}%, "
            f"TOP5 max {max(med(c['draws'], 5) for c in b):.2f}%; in the bands in {sum(ok)} of {len(ok)}",
            "criterion": criteria["fig9_top"],
            "holds": all(ok),
        },
        {
            "result": "Figure 9: naive and balanced against BlackBox (24 threads)",
            "paper": "naive 6-19% on average (45% worst, intadd); balanced 6-19% on average",
            "ours": f"TOP5 above both averages: {'all' if above else 'not all'}; naive average "
            f"{min(naive):.1f}-{max(naive):.1f}%, balanced {min(r['balanced']['average'] for r in nine):.1f}-"
            f"{max(r['balanced']['average'] for r in nine):.1f}%",
            "criterion": criteria["fig9_base"],
            "holds": above and min(naive) >= 3 and max(naive) <= 38,
        },
    ]


def render(data: dict) -> list[str]:
    rows = [
        [
            r["threads"],
            big(r["base"]),
            big(r["slowdown"]),
            big(r["total"]),
            f"{duration(r['seconds'])} / {duration(r['paper'][0])}",
            f"{duration(r['seconds'] / 4)} / " + ("-" if r["paper"][1] is None else duration(r["paper"][1])),
        ]
        for r in data["table1"]
    ]
    cols = ["threads", "base table", "slowdown table", "experiments", "one server, ours / §3.2", "four servers"]
    lines = ["Table 1 (complete tables of one application on the T2, 2 s an experiment):", ""]
    lines += [markdown_table(cols, rows), ""]
    lines += _render_runs(data["six"], "Figures 7-8 (two instances, 6 threads; the reference set simulated)")
    if data["six"]:
        lines += ["Figure 8 (best of the first n predicted, noise-free / median over draws, %):", ""]
        rows = [
            [r["kind"], r["variant"]]
            + [f"{r['blackbox']['exact'][n - 1]:.2f} / {med(r['blackbox']['draws'], n):.2f}" for n in range(1, 6)]
            for r in data["six"]
        ]
        lines += [markdown_table(["machine", "variant"] + [f"n = {n}" for n in range(1, 6)], rows), ""]
    lines += _render_runs(data["nine"], "Figure 9 (eight instances, 24 threads; every sampled plan simulated)")
    return lines


def _render_runs(runs: list[dict], title: str) -> list[str]:
    if not runs:
        return []
    rows = [
        [
            r["kind"],
            r["variant"],
            f"{r['simulated']} of {r['classes']}",
            f"{r['blackbox']['exact'][0]:.2f}",
            study.fmt_draws([c[0] for c in r["blackbox"]["draws"]]),
            f"{r['blackbox']['exact'][-1]:.2f}",
            study.fmt_draws([c[-1] for c in r["blackbox"]["draws"]]),
            f"{r['tsbsched']['exact'][-1]:.2f} / " + study.fmt_draws([c[-1] for c in r["tsbsched"]["draws"]]),
            f"{r['balanced']['average']:.1f} / {r['balanced']['worst']:.1f} ({r['balanced']['count']})",
            f"{r['all']['average']:.1f} / {r['all']['worst']:.1f} ({r['all']['count']})",
            f"{r['blackbox']['spearman']:.3f}",
            r["experiments"],
        ]
        for r in runs
    ]
    cols = ["machine", "variant", "simulated", "BlackBox top 1", "noisy", "top 5", "noisy"]
    cols += [
        "TSBSched top 10: noise-free / median / worst",
        "balanced avg / worst (n)",
        "naive avg / worst (n)",
        "Spearman",
        "profiling",
    ]
    return [f"{title}; losses %, noisy: median / worst over the draws:", "", markdown_table(cols, rows), ""]
