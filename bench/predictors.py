"""TSBSched and BlackBox against the closed form: ranking, optimum reached, speed and memory.

1. Ranking (the six-thread T2 examples): the profiling tables are measured with the closed form
   (`--oracle analytic`, default) or the simulation (`--oracle des`), every one of the 1526
   placement classes is predicted, and the predictions are compared with the closed form over
   the same classes: Spearman's rank correlation (scipy), the closed-form loss of the predicted
   top 1 and of the best of the predicted top N (N = 10 for TSBSched, 5 for BlackBox) against the
   closed-form optimum (the best of all classes: an exhaustive proof), and the largest
   closed-form gap between two classes the prediction orders the other way (Spearman also
   counts the order given to classes the closed form ties).  With `--des-plans K` the
   predictions are also correlated with the simulation on K classes drawn at random.  With
   `--no-communication` the topology's communication section is removed first (messages cost
   nothing: a diagnosis of what the slowdown experiments' remote communication costs).
2. Scale (24 and 60 threads): `solver.predictors.selection.run_predictor` end to end (profiling,
   prediction of `--samples` random plans, selection measured on the oracle), each spec in a
   fresh process: wall time and peak RSS (the process and its workers).
3. Prediction speed: plans per second of the batch predictor once the tables hold what the plans
   need, next to the closed form's `BatchModel`.

    python bench/predictors.py --seed 0
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
from results import markdown_table, write_results
from scipy.stats import spearmanr

from tasksolve.simulate.analytic import BatchModel
from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.binding.samplers import distinct_placements, uniform_plans
from tasksolve.solver.predictors.batch import BatchPredictor
from tasksolve.solver.predictors.selection import SELECTION_SIZE
from tasksolve.solver.predictors.tables import ProfileTables
from tasksolve.specs import Spec, load_spec

SIX = [
    "t2-ipfwd-intadd-x2",
    "t2-ipfwd-l1-x2",
    "t2-ipfwd-l2-x2",
    "t2-ipfwd-mem-x2",
    "t2-ipfwd-hashn-l1-x2",
    "t2-ipfwd-hashn-mem-x2",
    "t2-ipfwd-intdiv-x2",
    "t2-ipfwd-intmul-x2",
]
LARGE = ["t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8", "t2-ipfwd-x20"]


def worst_inversion(predicted: np.ndarray, truth: np.ndarray) -> float:
    """Largest ``truth[i] / truth[j] - 1`` over the pairs with ``truth[i] > truth[j]`` (relative
    1e-9) that the prediction ranks strictly the other way; 0 when there is none."""
    higher = truth[:, None] > truth[None, :] * (1 + 1e-9)
    wrong = higher & (predicted[:, None] < predicted[None, :])
    return float((np.where(wrong, truth[:, None] / truth[None, :], 1.0) - 1).max(initial=0.0))


def without_communication(spec: Spec) -> Spec:
    data = spec.model_dump(by_alias=True)
    data["topology"]["communication"] = None
    return Spec.model_validate(data)


def ranking(name: str, oracle: str, des_plans: int, seed: int, communication: bool = True) -> dict:
    spec = load_spec(name) if communication else without_communication(load_spec(name))
    plans, _ = distinct_placements(spec)
    truth = BatchModel(spec).throughput(plans)
    best = truth.max()
    tables = ProfileTables(spec, lambda s: make_oracle(s, oracle), oracle_kind=oracle, workers=2, seed=seed)
    batch = BatchPredictor(tables)
    row = {"spec": name, "classes": len(plans), "experiments": 0}
    pick = np.random.default_rng(seed).choice(len(plans), size=min(des_plans, len(plans)), replace=False)
    simulated = None
    if des_plans:
        des = make_oracle(spec, "des")
        simulated = np.array(
            [m.throughput for m in des.evaluate_many([list(map(int, plans[k])) for k in pick], seed=seed, workers=2)]
        )
    for method in ("tsbsched", "blackbox"):
        predicted = batch.values(method, plans)
        order = np.argsort(-predicted, kind="stable")
        n = SELECTION_SIZE[method]
        row[method] = {
            "spearman": float(spearmanr(predicted, truth).statistic),
            "inversion": worst_inversion(predicted, truth),
            "top1_loss": float(1 - truth[order[0]] / best),
            f"top{n}_loss": float(1 - truth[order[:n]].max() / best),
            "loss_curve": [float(1 - truth[order[:k]].max() / best) for k in range(1, n + 1)],
        }
        if simulated is not None:
            row[method]["spearman_des"] = float(spearmanr(predicted[pick], simulated).statistic)
    row["experiments"] = tables.experiments
    return row


def scale_one(name: str, oracle: str, samples: int, seed: int) -> dict:
    """One spec end to end (run in its own process for its peak RSS)."""
    from tasksolve.solver.predictors.candidates import Candidates
    from tasksolve.solver.predictors.selection import run_predictor

    spec = load_spec(name)
    factory = lambda s: make_oracle(s, oracle)  # noqa: E731
    started = time.perf_counter()
    tables = ProfileTables(spec, factory, seed=seed, oracle_kind=oracle, workers=2)
    out = {"spec": name, "threads": len(spec.threads), "oracle": oracle}
    for method in ("tsbsched", "blackbox"):
        result = run_predictor(
            spec,
            method,
            factory,
            Candidates.of(spec, samples=samples, seed=seed),
            seed=seed,
            tables=tables,
            oracle_kind=oracle,
            workers=2,
        )
        out[method] = {
            "measured": result.best_measured.throughput,
            "predicted_plans": result.predicted_plans,
            "predict_seconds": result.predict_seconds,
        }
    out["experiments"] = tables.experiments
    out["profiling_seconds"] = tables.profiling_seconds
    out["wall_seconds"] = time.perf_counter() - started
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out["peak_rss_mb"] = max(own, children) / 1024
    return out


def speed(name: str, plans: int, seed: int, repeats: int = 5) -> dict:
    spec = load_spec(name)
    rows = uniform_plans(spec, plans, seed)
    batch = BatchPredictor(ProfileTables(spec, lambda s: make_oracle(s, "analytic"), oracle_kind="analytic"))
    out = {"spec": name, "plans": plans}
    for method in ("tsbsched", "blackbox"):
        batch.values(method, rows)  # fills the tables
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            batch.values(method, rows)
            times.append(time.perf_counter() - t0)
        out[method] = plans / float(np.median(times))
    model = BatchModel(spec)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        model.throughput(rows)
        times.append(time.perf_counter() - t0)
    out["closed_form"] = plans / float(np.median(times))
    return out


MODULES = [
    "solver/predictors/batch.py",
    "solver/predictors/tables.py",
    "solver/predictors/models.py",
    "solver/predictors/codetable.py",
    "simulate/analytic.py",
]
COLUMNS = ["spec", "TSBSched Spearman", "worst inversion", "top 1 / top 10 loss", "BlackBox Spearman"]
COLUMNS += ["worst inversion", "top 1 / top 5 loss", "profiling runs"]


def render_scale(data: dict) -> str:
    cols = ["spec", "threads", "profiling runs", "profiling (s)", "prediction TSBSched / BlackBox (s)", "wall (s)"]
    cols += ["peak RSS (MB)", "measured TSBSched / BlackBox (Mpps)"]
    rows = [
        [
            r["spec"],
            r["threads"],
            f"{r['experiments']:,}",
            f"{r['profiling_seconds']:.1f}",
            f"{r['tsbsched']['predict_seconds']:.2f} / {r['blackbox']['predict_seconds']:.2f}",
            f"{r['wall_seconds']:.1f}",
            f"{r['peak_rss_mb']:.0f}",
            f"{r['tsbsched']['measured'] / 1e6:.3f} / {r['blackbox']['measured'] / 1e6:.3f}",
        ]
        for r in data["rows"]
    ]
    return (
        f"The scale part of `python bench/predictors.py --seed {data['seed']}` (`run_predictor` end to end, "
        f"{data['samples']} random plans predicted, each spec in a fresh process, 2 worker processes, "
        f"`{data['oracle']}` profiling; load average {data['load']:.1f} at the end):\n\n" + markdown_table(cols, rows)
    )


def render_speed(data: dict) -> str:
    rows = [
        [r["spec"], f"{r['tsbsched']:,.0f}", f"{r['blackbox']:,.0f}", f"{r['closed_form']:,.0f}"] for r in data["rows"]
    ]
    return (
        f"The speed part of `python bench/predictors.py --seed 0` (plans/s once the tables hold what the plans "
        f"need; {data['plans']:,} random plans, median of 5; load average {data['load']:.1f} at the end):\n\n"
        + markdown_table(["spec", "TSBSched", "BlackBox", "closed form"], rows)
    )


def render_markdown(data: dict) -> str:
    if data.get("section") == "scale":
        return render_scale(data)
    if data.get("section") == "speed":
        return render_speed(data)
    rows = []
    for r in data["rows"]:
        t, b = r["tsbsched"], r["blackbox"]
        rows.append(
            [
                r["spec"],
                f"{t['spearman']:.4f}",
                f"{t['inversion']:.2%}",
                f"{t['top1_loss']:.2%} / {t['top10_loss']:.2%}",
                f"{b['spearman']:.4f}",
                f"{b['inversion']:.2%}",
                f"{b['top1_loss']:.2%} / {b['top5_loss']:.2%}",
                r["experiments"],
            ]
        )
    flags = "" if data["communication"] else " --no-communication"
    oracle = "" if data["oracle"] == "analytic" else f" --oracle {data['oracle']}"
    return (
        f"`python bench/predictors.py --seed {data['seed']} --skip scale,speed{oracle}{flags}` (tables profiled on "
        f"the `{data['oracle']}` oracle, judged on the closed form over all 1526 classes; deterministic: in the quick "
        "set):\n\n" + markdown_table(COLUMNS, rows)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--oracle", default="analytic", choices=["analytic", "des"], help="oracle of the tables")
    parser.add_argument("--des-plans", type=int, default=0, help="classes also simulated for a Spearman")
    parser.add_argument("--no-communication", action="store_true", help="ranking with messages costing nothing")
    parser.add_argument("--samples", type=int, default=5000, help="random plans predicted at 24 and 60 threads")
    parser.add_argument("--speed-plans", type=int, default=100_000)
    parser.add_argument("--skip", default="", help="comma-separated: ranking, scale, speed")
    parser.add_argument("--scale-one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scale_one:
        print(json.dumps(scale_one(args.scale_one, args.oracle, args.samples, args.seed)))
        return
    skip = set(filter(None, args.skip.split(",")))
    if "ranking" not in skip:
        rows = []
        for name in SIX:
            r = ranking(name, args.oracle, args.des_plans, args.seed, not args.no_communication)
            rows.append(r)
            print(r["spec"], r["experiments"], r["tsbsched"]["spearman"], r["blackbox"]["spearman"], flush=True)
        data = {"oracle": args.oracle, "seed": args.seed, "communication": not args.no_communication, "rows": rows}
        name = "predictors-ranking" + ("" if args.oracle == "analytic" else f"-{args.oracle}")
        name += "" if not args.no_communication else "-no-communication"
        if not args.des_plans:
            write_results(name, data, modules=MODULES)
        print(render_markdown(data))
    if "scale" not in skip:
        scale = []
        for name in LARGE:
            cmd = [sys.executable, __file__, "--scale-one", name, "--oracle", args.oracle]
            cmd += ["--samples", str(args.samples), "--seed", str(args.seed)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            scale.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(scale[-1], flush=True)
        data = {"section": "scale", "seed": args.seed, "samples": args.samples, "oracle": args.oracle, "rows": scale}
        data["load"] = os.getloadavg()[0]
        write_results("predictors-scale", data, modules=MODULES)
        print(render_markdown(data))
    if "speed" not in skip:
        speeds = []
        for name in ("t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8"):
            speeds.append(speed(name, args.speed_plans, args.seed))
            print(speeds[-1], flush=True)
        data = {"section": "speed", "plans": args.speed_plans, "rows": speeds, "load": os.getloadavg()[0]}
        write_results("predictors-speed", data, modules=MODULES)
        print(render_markdown(data))


if __name__ == "__main__":
    main()
