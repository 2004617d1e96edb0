"""Selection under noise on the test bed with known truth: does racing pick a plan within the
zone, do its intervals cover the truth, and what does it spend against fixed repeats?

The truth is `bench/testbed/truth.py` (2 pipelines of 3 threads on 4 cores x 2 strands; CV 5%
log-normal noise, 2% outliers, 1% drift).  Per seed, ten finalists: the true optimum and three
plans drawn from each band of true gap (0-2%, 2-5%, 5-12%).  Racing is
`solver.selection.racing.race` (KN + Hsu's stop, zone 2%, alpha 0.05, n0 20, one warm-up round,
5 confirmation runs; also alpha 0.2 and 0.5, to find the cheapest setting that is still right); fixed repeats measure every finalist n times (interleaved, one warm-up
round) and keep the best mean.  The least favourable configuration (KN's LFC: nine plans exactly
2% below the best) tells what a fixed n needs where nothing is known of the plans.  A few seeds
also run end to end through the real command oracle (`bench/testbed/program.py`).

    python bench/racing.py --seeds 50 --e2e-seeds 2
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "testbed"))

import truth  # noqa: E402

from bench.results import write_results  # noqa: E402
from tasksolve.solver.selection.racing import race  # noqa: E402

ZONE = 0.02
BANDS = ((1e-4, 0.02), (0.02, 0.05), (0.05, 0.12))
FIXED_N = (3, 5, 8, 10, 15, 20, 30, 50, 80)


def distinct_plans() -> list[tuple[float, tuple]]:
    """One plan per distinct true value, best first."""
    found: dict[float, tuple] = {}
    for plan in truth.all_plans():
        found.setdefault(round(truth.true_rate(plan), 3), plan)
    return sorted(found.items(), reverse=True)


def finalists(seed: int, ranked) -> list[tuple]:
    rng = random.Random(seed)
    top = ranked[0][0]
    chosen = [ranked[0][1]]
    for low, high in BANDS:
        chosen += rng.sample([p for v, p in ranked if low <= 1 - v / top < high], 3)
    rng.shuffle(chosen)
    return chosen


def wilson(hits: int, n: int) -> list[float]:
    """95% Wilson interval of a proportion."""
    z, p = 1.96, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(centre - half, 4), round(centre + half, 4)]


def share(hits: int, n: int) -> dict:
    return {"share": round(hits / n, 4), "n": n, "ci95": wilson(hits, n)}


def study_racing(seeds: int, cv: float, ranked, **settings) -> dict:
    top = ranked[0][0]
    correct = covered = pooled = pooled_hits = 0
    spent, stops = [], {}
    for seed in range(seeds):
        bed = truth.TestBed(seed=seed, cv=cv)
        result = race(finalists(seed, ranked), bed.measure, zone=ZONE, seed=seed, **settings)
        true_best = truth.true_rate(result.best)
        correct += true_best >= (1 - ZONE) * top
        covered += abs(result.mean - true_best) <= result.half_width
        spent.append(result.measurements)
        stops[result.stopped] = stops.get(result.stopped, 0) + 1
        for stats in result.stats:
            pooled += 1
            pooled_hits += abs(stats.mean - truth.true_rate(stats.plan)) <= stats.half_width()
    return {
        "settings": settings,
        "correct": share(correct, seeds),
        "winner_interval_coverage": share(covered, seeds),
        "pooled_interval_coverage": share(pooled_hits, pooled),
        "measurements_median": statistics.median(spent),
        "measurements_mean": round(statistics.fmean(spent), 1),
        "stops": stops,
    }


def fixed_pick(plans, measure, n: int, seed: int) -> tuple:
    rng = random.Random(seed)
    values = {i: [] for i in range(len(plans))}
    last = None
    for r in range(n + 1):
        order = list(values)
        rng.shuffle(order)
        if order[0] == last:
            order[0], order[-1] = order[-1], order[0]
        for i in order:
            x = measure(plans[i], r)
            if r > 0:  # round 0 is the warm-up
                values[i].append(x)
        last = order[-1]
    return plans[max(values, key=lambda i: statistics.fmean(values[i]))]


def study_fixed(seeds: int, cv: float, ranked) -> list[dict]:
    top, rows = ranked[0][0], []
    for n in FIXED_N:
        hits = 0
        for seed in range(seeds):
            bed = truth.TestBed(seed=seed, cv=cv)
            pick = fixed_pick(finalists(seed, ranked), bed.measure, n, seed)
            hits += truth.true_rate(pick) >= (1 - ZONE) * top
        rows.append({"n": n, "measurements": 10 * (n + 1), "correct": share(hits, seeds)})
    return rows


def study_lfc(seeds: int, cv: float) -> dict:
    """Nine plans exactly ZONE below the best: the least favourable configuration of KN."""
    means = {0: 1.0, **dict.fromkeys(range(1, 10), 1.0 - ZONE)}
    plans = list(means)

    def bed(seed):
        noise = truth.Noise(cv=cv, seed=10_000 + seed)
        return lambda plan, r: means[plan] * noise.factor()

    hits, spent = 0, []
    for seed in range(seeds):
        result = race(plans, bed(seed), zone=ZONE, seed=seed, confirm=0)
        hits += result.best == 0
        spent.append(result.measurements)
    fixed = []
    for n in (*FIXED_N, 120, 160):
        fixed.append(
            {
                "n": n,
                "measurements": 10 * (n + 1),
                "correct": share(sum(fixed_pick(plans, bed(s), n, s) == 0 for s in range(seeds)), seeds),
            }
        )
    return {
        "racing": {"correct": share(hits, seeds), "measurements_mean": round(statistics.fmean(spent), 1)},
        "fixed": fixed,
    }


def closed_form_pick(seeds: int, ranked) -> dict:
    """The analytic oracle's best finalist, judged by the truth."""
    from tasksolve.simulate.oracle import make_oracle
    from tasksolve.specs import Plan
    from tasksolve.specs.loader import load_spec

    spec = load_spec(ROOT / "bench" / "testbed" / "testbed.yaml")
    analytic = make_oracle(spec, "analytic")
    top, hits, gaps = ranked[0][0], 0, []
    for seed in range(seeds):
        plans = finalists(seed, ranked)
        pick = max(plans, key=lambda p: analytic.evaluate(Plan.from_contexts(spec, list(p))).throughput)
        gap = 1 - truth.true_rate(pick) / top
        hits += gap <= ZONE
        gaps.append(gap)
    return {"correct": share(hits, seeds), "median_true_gap": round(statistics.median(gaps), 4)}


def end_to_end(seeds: int, ranked) -> dict:
    """Racing four finalists through the real command oracle (the program, one run per call)."""
    from tasksolve.simulate.oracle import make_oracle
    from tasksolve.specs import Plan
    from tasksolve.specs.loader import load_spec

    spec = load_spec(ROOT / "bench" / "testbed" / "testbed.yaml")
    program = str(ROOT / "bench" / "testbed" / "program.py")
    oracle = make_oracle(spec, "command", command=[sys.executable, program, "--plan", "{plan_file}"], repeats=1)
    top, runs = ranked[0][0], []
    for seed in range(seeds):
        plans = finalists(seed, ranked)[:4]
        began = time.perf_counter()
        result = race(
            plans, lambda p, r: oracle.evaluate(Plan.from_contexts(spec, list(p)), seed=r).throughput, seed=seed
        )
        optimum = max(truth.true_rate(p) for p in plans)
        runs.append(
            {
                "seed": seed,
                "true_gap_of_pick": round(1 - truth.true_rate(result.best) / optimum, 4),
                "gap_to_global_optimum": round(1 - truth.true_rate(result.best) / top, 4),
                "measurements": result.measurements,
                "seconds": round(time.perf_counter() - began, 1),
                "mean": result.mean,
                "half_width": result.half_width,
                "truth": truth.true_rate(result.best),
                "ties": len(result.ties),
            }
        )
    return {"runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--cv", type=float, default=0.05)
    parser.add_argument("--e2e-seeds", type=int, default=2)
    args = parser.parse_args()
    ranked = distinct_plans()
    began = time.perf_counter()
    data = {
        "seeds": args.seeds,
        "cv": args.cv,
        "total_cv": round(truth.Noise(cv=args.cv).total_cv(), 4),
        "zone": ZONE,
        "racing": study_racing(args.seeds, args.cv, ranked),
        "racing_alpha_0.2": study_racing(args.seeds, args.cv, ranked, alpha=0.2),
        "racing_alpha_0.5": study_racing(args.seeds, args.cv, ranked, alpha=0.5),
        "racing_n0_10": study_racing(args.seeds, args.cv, ranked, n0=10),
        "fixed": study_fixed(args.seeds, args.cv, ranked),
        "lfc": study_lfc(max(args.seeds, 200), args.cv),
        "closed_form": closed_form_pick(args.seeds, ranked),
        "end_to_end": end_to_end(args.e2e_seeds, ranked),
    }
    data["seconds"] = round(time.perf_counter() - began, 1)
    write_results("racing", data, modules=["solver/selection/racing.py", "bench/testbed/truth.py", "bench/racing.py"])
    print(render_markdown(data))


def _cell(s: dict) -> str:
    return f"{s['share']:.0%} [{s['ci95'][0]:.0%}, {s['ci95'][1]:.0%}]"


def render_markdown(data: dict) -> str:
    r = data["racing"]
    lines = [
        f"Test bed (bench/testbed, known truth), 10 finalists per seed, {data['seeds']} seeds, noise CV "
        f"{data['cv']:.0%} log-normal ({data['total_cv']:.1%} with 2% outliers), 1% drift, zone {data['zone']:.0%}; "
        "shares with 95% Wilson intervals.",
        "",
        "| procedure | chosen within the zone | winner's interval covers | all intervals cover (pooled) | measurements (mean) |",
        "|---|---|---|---|---|",
    ]
    for name, key in (
        ("racing (alpha 0.05, n0 20)", "racing"),
        ("racing (alpha 0.05, n0 10)", "racing_n0_10"),
        ("racing (alpha 0.2)", "racing_alpha_0.2"),
        ("racing (alpha 0.5)", "racing_alpha_0.5"),
    ):
        s = data[key]
        lines.append(
            f"| {name} | {_cell(s['correct'])} | {_cell(s['winner_interval_coverage'])} | "
            f"{_cell(s['pooled_interval_coverage'])} (n={s['pooled_interval_coverage']['n']}) | {s['measurements_mean']:g} |"
        )
    for row in data["fixed"]:
        lines.append(f"| fixed {row['n']} repeats | {_cell(row['correct'])} | - | - | {row['measurements']} |")
    cf = data["closed_form"]
    lines.append(f"| closed form's pick (no measurement) | {_cell(cf['correct'])} | - | - | 0 |")
    lfc = data["lfc"]
    lines += [
        "",
        f"Least favourable configuration (nine plans exactly 2% below the best, {lfc['racing']['correct']['n']} seeds): "
        f"racing picks the best in {_cell(lfc['racing']['correct'])} with {lfc['racing']['measurements_mean']:g} "
        "measurements on average; fixed repeats: "
        + ", ".join(f"n={row['n']}: {row['correct']['share']:.0%} ({row['measurements']})" for row in lfc["fixed"])
        + ".",
        "",
        f"Stops of the racing: {r['stops']}.",
        "",
        "End to end through the command oracle (4 finalists, one run of bench/testbed/program.py per measurement):",
        "",
        "| seed | true gap of the pick | measurements | wall (s) | mean +- half-width | truth | ties |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in data["end_to_end"]["runs"]:
        lines.append(
            f"| {run['seed']} | {run['true_gap_of_pick']:.2%} | {run['measurements']} | {run['seconds']} | "
            f"{run['mean']:.4g} +- {run['half_width']:.2g} | {run['truth']:.4g} | {run['ties']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
