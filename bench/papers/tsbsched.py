"""TSBSched (Radojković et al., PPoPP'10) Table 1 and Figures 7 and 9, and BlackBox (TPDS) Figure 7,
reproduced on the simulated UltraSPARC T2: the predictors profiled on the simulation and judged
on the simulation, as the papers profile and judge on the machine.

* Figure 7 / TPDS Figure 7 (two IPFwd instances, six threads): every one of the 1526 placement
  classes simulated once (the "actual" figures); TSBSched's tables profiled on the simulation;
  loss of TSBSched's best measured among its predicted top 10 (PPoPP'10 §5.1: the tuning
  phase), of BlackBox's predicted top 1 (TPDS §5.1: no selection phase), and of the average and
  worst balanced and of all classes, against the best class.  Spearman of the predictions with
  the simulation over all classes.
* Table 1: the same, per number of cores used (1-5): TSBSched's top 10 among the classes using
  exactly that many cores against the best of them.
* Figure 9 (three instances, nine threads, 592,573 classes): every class predicted; the paper's
  systematic sample (§5.2.1: the classes ordered by prediction, every k-th from a random start,
  700 of them) and TSBSched's top 10 simulated; losses against the best simulated.

The paper's IPFwd variants map onto the example applications (hash1 = the `ipfwd-l1/-l2/-mem`
look-up, hashN = `ipfwd-hashn-*`); hashN_L2 has no example and is left out.  "Balanced": at most
ceil(T/8) threads on a core and ceil(T/16) on a pipe (threads spread over cores and pipes, as
Linux and Solaris do, PPoPP'10 §5.1).  Averages are over classes (the papers' "TSBs"), not
weighted by orbit size.

The tables above are noise-free and profiled on the machine they are judged on; `tsbsched_more`
adds what they cannot see: profiling with 3% measurement noise (20 draws), the core-pair T2
(L2 and memory per pair of cores, a load no slowdown experiment varies), and Figure 8.

    python bench/papers/tsbsched.py

Run time: about 43 min of wall time (2591 s) with `tsbsched_more` at load 9-10 on two shared cores;
the noise-free part alone took 302 s at load 4.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
import tsbsched_more as more
from common import markdown_table, papers_table, spec_text, write_results
from scipy.stats import spearmanr

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.binding.samplers import distinct_placements
from tasksolve.solver.predictors.batch import BatchPredictor
from tasksolve.solver.predictors.tables import ProfileTables
from tasksolve.specs import load_spec_text

VARIANTS = {
    "hash1_DL1": "ipfwd-l1",
    "hash1_L2": "ipfwd-l2",
    "hash1_Mem": "ipfwd-mem",
    "hashN_DL1": "ipfwd-hashn-l1",
    "hashN_Mem": "ipfwd-hashn-mem",
    "intADD": "ipfwd-intadd",
}
# PPoPP'10 Table 1: loss of the best of the predicted top 10, by cores used (1..5).
TABLE1 = {
    "hash1_DL1": [0.00, 0.00, 0.40, 0.88, 0.00],
    "hash1_L2": [0.00, 0.00, 1.80, 0.00, 0.20],
    "hash1_Mem": [0.00, 0.00, 2.69, 1.68, 0.61],
    "hashN_DL1": [0.00, 0.00, 2.83, 2.06, 0.42],
    "hashN_L2": [0.00, 0.00, 0.94, 1.71, 0.00],
    "hashN_Mem": [0.00, 0.59, 0.69, 0.29, 0.92],
    "intADD": [0.00, 0.00, 0.00, 0.00, 0.00],
}
CRITERIA = {
    "table1": "every cell <= 3% (paper: all < 3%) and at 1-2 cores at least 80% of the cells 0.00% (paper: 13 of 14)",
    "fig7": "TSBSched's top 10 within 3% of the best in at least 5 of 6 variants (paper: 6 of 7), and below the "
    "average balanced and average of all in every variant",
    "fig7_worst": "intADD has the largest worst-balanced loss (paper: 46%, the largest)",
    "tpds7": "BlackBox's top 1 within 4% of the best in every variant (TPDS: always below 4%)",
    "fig9": "TSBSched's top 10 within 0.5% of the best simulated in at least 5 of 6 variants (paper: the best in 6 "
    "of 7, 0.4% on the 7th), and below the average balanced and average of all in every variant",
    # stated with the noisy profiling, the core-pair T2 and Figure 8 (the rows above were run without them)
    "noise_fig7": "with 3% profiling noise (20 draws): TSBSched's top 10 within 3% of the best at the median over "
    "draws in at least 5 of 6 variants, and within 5% (the paper's single worst, §6) at the worst draw of every variant",
    "noise_table1": "with 3% profiling noise: every cell's median over draws <= 3% (paper: all < 3%) and its worst "
    "draw <= 5%",
    "noise_tpds7": "with 3% profiling noise: BlackBox's top 1 within 4% of the best at the median over draws and at "
    "the worst draw, in every variant (TPDS: always below 4%)",
    "pairs": "on the core-pair T2 (even and narrow split; every variant whose closed form the split changes), "
    "TSBSched's top 10 within 3% and BlackBox's top 1 within 4% of the best simulated: noise-free, and at the "
    "median over 20 draws of 3% noise",
    "fig8": "over the 700-class sample of every variant (the paper shows intADD and hash1_Mem): Spearman of "
    "TSBSched's prediction with the simulation >= 0.9, and no class predicted in the top 5% more than 10% below "
    "the best measured (paper: 'very unlikely')",
}
# Why a result does not hold, written after the run that found it (the criteria above were not changed),
# keyed by the result's first words.
WHY: dict[str, str] = {
    "Figure 7 with 3% profiling noise": "a table entry is read by many classes, so one entry's error moves a whole "
    "family of them together: the median draw picks the best in 6 of 6, single draws' whole top 10 lose up to "
    "10.6% (hash1_DL1) and 8.5% (hashN_DL1)",
    "Table 1 with 3% profiling noise": "as Figure 7 with noise: the medians are within 1.4%, 7 of 30 cells lose more "
    "than 5% in their worst draw (up to 10.6%)",
    "TPDS Figure 7 with 3% profiling noise": "without the selection phase one draw's error is the loss: 5.6% "
    "(hash1_Mem) and 4.2% (hash1_L2) in the worst draws; the top 5 stays within 3.4%",
    "Core-pair T2": "the stress domain is the core: no slowdown experiment varies what the neighbour core puts on "
    "the pair's L2 and memory, so classes that differ by pair are predicted alike and hundreds tie at the top (BlackBox "
    "on closed-form tables: 138-250 classes, 27-31% of them more than 10% below the best); the noise-free pick is the first "
    "of them and noise picks one at random",
    "Figure 8": "not analysed beyond this: in intADD, classes TSBSched ranks in its top 5% measure up to 17% below "
    "the best (its median error is 0.3%); hash1_DL1 7.1%, hashN_DL1 6.0%",
}
MODULES = [
    "solver/predictors/batch.py",
    "solver/predictors/tables.py",
    "solver/predictors/models.py",
    "solver/predictors/codetable.py",
    "solver/binding/samplers.py",
    "simulate/oracle.py",
    "simulate/analytic.py",
    "bench/papers/predictor_study.py",
]
CORES_OF = 8  # contexts per T2 core; 4 per pipe


def loss(x: float, best: float) -> float:
    return 100 * (1 - x / best)


def balanced(plans: np.ndarray) -> np.ndarray:
    threads = plans.shape[1]
    per_core = np.stack([np.bincount(row // CORES_OF, minlength=8) for row in plans])
    per_pipe = np.stack([np.bincount(row // 4, minlength=16) for row in plans])
    return (per_core.max(1) <= math.ceil(threads / 8)) & (per_pipe.max(1) <= math.ceil(threads / 16))


def simulate(spec, plans: np.ndarray, seed: int) -> np.ndarray:
    oracle = make_oracle(spec, "des")
    rows = [list(map(int, p)) for p in plans]
    return np.array([m.throughput for m in oracle.evaluate_many(rows, seed=seed, workers=2)])


def predict(spec, plans: np.ndarray, seed: int) -> tuple[dict[str, np.ndarray], ProfileTables]:
    tables = ProfileTables(spec, lambda s: make_oracle(s, "des"), oracle_kind="des", workers=2, seed=seed)
    batch = BatchPredictor(tables)
    out = {m: batch.values(m, plans) for m in ("tsbsched", "blackbox")}
    return out, tables


def summary(values: np.ndarray, mask: np.ndarray, best: float) -> dict:
    return {
        "average": loss(values[mask].mean(), best),
        "worst": loss(values[mask].min(), best),
        "count": int(mask.sum()),
    }


def two_instances(variant: str, seed: int, draws: int) -> dict:
    spec = load_spec_text(spec_text(f"t2-{variant}-x2", VARIANTS[variant], 2), file=variant)
    plans, _ = distinct_placements(spec)
    truth = simulate(spec, plans, seed)
    pred, tables = predict(spec, plans, seed)
    experiments = tables.experiments
    best = truth.max()
    order = np.argsort(-pred["tsbsched"], kind="stable")
    row = {
        "variant": variant,
        "classes": len(plans),
        "experiments": experiments,
        "tsbsched_top10": loss(truth[order[:10]].max(), best),
        "tsbsched_top1": loss(truth[order[0]], best),
        "blackbox_top1": loss(truth[np.argmax(pred["blackbox"])], best),
        "spearman_tsbsched": float(spearmanr(pred["tsbsched"], truth).statistic),
        "spearman_blackbox": float(spearmanr(pred["blackbox"], truth).statistic),
        "balanced": summary(truth, balanced(plans), best),
        "all": summary(truth, np.ones(len(plans), bool), best),
    }
    cores = np.array([len(set(p // CORES_OF)) for p in plans])
    row["by_cores"] = by_cores(pred["tsbsched"], truth, cores)
    if draws:
        row["noise"] = more.noisy_two(tables, plans, truth, cores, draws, by_cores)
    return row


def by_cores(values: np.ndarray, truth: np.ndarray, cores: np.ndarray) -> list[float]:
    """Table 1: loss of the best of the predicted top 10 among the classes using k cores, k = 1..5."""
    out = []
    for k in range(1, 6):
        idx = np.flatnonzero(cores == k)
        top = idx[np.argsort(-values[idx], kind="stable")[:10]]
        out.append(loss(truth[top].max(), truth[idx].max()))
    return out


def three_instances(variant: str, plans: np.ndarray, seed: int, size: int) -> dict:
    spec = load_spec_text(spec_text(f"t2-{variant}-x3", VARIANTS[variant], 3), file=variant)
    pred, tables = predict(spec, plans, seed)
    experiments = tables.experiments
    order = np.argsort(-pred["tsbsched"], kind="stable")
    step = len(plans) // size
    start = int(np.random.default_rng(seed).integers(step))
    sample = order[start::step][:size]
    top = order[:10]
    measured = simulate(spec, plans[np.concatenate([sample, top])], seed)
    in_sample, in_top = measured[: len(sample)], measured[len(sample) :]
    best = measured.max()
    return {
        "variant": variant,
        "classes": len(plans),
        "sample": len(sample),
        "experiments": experiments,
        "tsbsched_top10": loss(in_top.max(), best),
        "tsbsched_top1": loss(in_top[0], best),
        "balanced": summary(in_sample, balanced(plans[sample]), best),
        "all": summary(in_sample, np.ones(len(sample), bool), best),
        "fig8": more.figure8(pred["tsbsched"], order, sample, in_sample, best),
    }


def verdicts(two: list[dict], three: list[dict]) -> list[dict]:
    cells = [c for r in two for c in r["by_cores"]]
    low = [c for r in two for c in r["by_cores"][:2]]
    zero_low = sum(c < 0.005 for c in low)
    t1 = {
        "result": "Table 1: top-10 loss by cores used (2 instances)",
        "paper": "all < 3%; 19 of 35 cells 0.00%; 13 of 14 at 1-2 cores",
        "ours": f"max {max(cells):.2f}%; {sum(c < 0.005 for c in cells)} of {len(cells)} cells 0.00%; "
        f"{zero_low} of {len(low)} at 1-2 cores",
        "criterion": CRITERIA["table1"],
        "holds": max(cells) <= 3 and zero_low >= 0.8 * len(low),
    }
    within = sum(r["tsbsched_top10"] <= 3 for r in two)
    ordered = all(r["tsbsched_top10"] < min(r["balanced"]["average"], r["all"]["average"]) for r in two)
    f7 = {
        "result": "Figure 7: TSBSched top 10 vs balanced and naive (2 instances)",
        "paper": "< 3% in 6 of 7; balanced loses 5-10% on average (46% worst, intADD), naive 10-17%",
        "ours": f"<= 3% in {within} of {len(two)}; TSBSched below both averages: {'all' if ordered else 'not all'}; "
        f"balanced average {min(r['balanced']['average'] for r in two):.1f}-{max(r['balanced']['average'] for r in two):.1f}%, "
        f"all {min(r['all']['average'] for r in two):.1f}-{max(r['all']['average'] for r in two):.1f}%",
        "criterion": CRITERIA["fig7"],
        "holds": within >= 5 and ordered,
    }
    worst = max(two, key=lambda r: r["balanced"]["worst"])
    f7w = {
        "result": "Figure 7: the variant with the worst balanced placement",
        "paper": "intADD (46%)",
        "ours": f"{worst['variant']} ({worst['balanced']['worst']:.1f}%)",
        "criterion": CRITERIA["fig7_worst"],
        "holds": worst["variant"] == "intADD",
    }
    bb = max(r["blackbox_top1"] for r in two)
    tp = {
        "result": "TPDS Figure 7: BlackBox top 1, no selection (2 instances)",
        "paper": "always below 4%; the best in 4 of 9",
        "ours": f"max {bb:.2f}%; the best in {sum(r['blackbox_top1'] < 0.005 for r in two)} of {len(two)}",
        "criterion": CRITERIA["tpds7"],
        "holds": bb <= 4,
    }
    out = [t1, f7, f7w, tp]
    if three:
        within9 = sum(r["tsbsched_top10"] <= 0.5 for r in three)
        ordered9 = all(r["tsbsched_top10"] < min(r["balanced"]["average"], r["all"]["average"]) for r in three)
        out.append(
            {
                "result": "Figure 9: TSBSched top 10 (3 instances, systematic sample of 700)",
                "paper": "the best in 6 of 7, 0.4% on the 7th; balanced 5-18% on average, naive 7-20%",
                "ours": f"<= 0.5% in {within9} of {len(three)} (max {max(r['tsbsched_top10'] for r in three):.2f}%); "
                f"below both averages: {'all' if ordered9 else 'not all'}",
                "criterion": CRITERIA["fig9"],
                "holds": within9 >= 5 and ordered9,
            }
        )
    return out


def render_markdown(data: dict) -> str:
    two, three = data["two"], data["three"]
    lines = [
        f"`python bench/papers/tsbsched.py{data['options']}` ({data['seconds']:.0f} s wall). Losses in % of the best "
        "simulated class; the simulation is the machine (the predictors' tables profiled on it).",
        "",
        papers_table(
            [
                {**v, "why": "" if v["holds"] else WHY.get(v["result"].split(":")[0], "not analysed")}
                for v in data["verdicts"]
            ]
        ),
        "",
        "Table 1, paper / ours (top-10 loss %, by cores used):",
        "",
    ]
    rows = [[r["variant"]] + [f"{p:.2f} / {o:.2f}" for p, o in zip(TABLE1[r["variant"]], r["by_cores"])] for r in two]
    lines += [markdown_table(["variant", "1 core", "2 cores", "3 cores", "4 cores", "5 cores"], rows), ""]
    lines += ["Figure 7 (two instances, all 1526 classes simulated):", ""]
    cols = ["variant", "TSBSched top 10", "TSBSched top 1", "BlackBox top 1", "balanced avg / worst (n)"]
    cols += ["all avg / worst", "Spearman TSBSched / BlackBox", "profiling runs"]
    rows = [
        [
            r["variant"],
            f"{r['tsbsched_top10']:.2f}",
            f"{r['tsbsched_top1']:.2f}",
            f"{r['blackbox_top1']:.2f}",
            f"{r['balanced']['average']:.1f} / {r['balanced']['worst']:.1f} ({r['balanced']['count']})",
            f"{r['all']['average']:.1f} / {r['all']['worst']:.1f}",
            f"{r['spearman_tsbsched']:.3f} / {r['spearman_blackbox']:.3f}",
            r["experiments"],
        ]
        for r in two
    ]
    lines += [markdown_table(cols, rows), ""]
    if all(r["balanced"]["count"] == 1 for r in two):
        lines += [
            "With six threads on eight cores every balanced placement (one thread per core) is one class up to the "
            "hardware's symmetry, so its average and worst coincide; the paper's balanced TSBs differ in ways the "
            "model does not distinguish.",
            "",
        ]
    if three:
        lines += [f"Figure 9 (three instances, {three[0]['classes']:,} classes predicted, sample simulated):", ""]
        cols = [
            "variant",
            "TSBSched top 10",
            "TSBSched top 1",
            "balanced avg / worst (n in sample)",
            "sample avg / worst",
        ]
        rows = [
            [
                r["variant"],
                f"{r['tsbsched_top10']:.2f}",
                f"{r['tsbsched_top1']:.2f}",
                f"{r['balanced']['average']:.1f} / {r['balanced']['worst']:.1f} ({r['balanced']['count']})",
                f"{r['all']['average']:.1f} / {r['all']['worst']:.1f}",
            ]
            for r in three
        ]
        lines += [markdown_table(cols, rows), ""]
    return "\n".join(lines + more.render(data)).rstrip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated paper variants")
    parser.add_argument("--fig9", type=int, default=700, help="Figure 9 sample size (0: skip Figure 9)")
    parser.add_argument("--draws", type=int, default=20, help="draws of 3%% profiling noise (0: none)")
    parser.add_argument("--pairs", default="pairs-even,pairs-narrow", help="core-pair T2 kinds ('': none)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    chosen = [v for v in args.variants.split(",") if v]
    print("criteria:", *(f"  {k}: {v}" for k, v in CRITERIA.items()), sep="\n", flush=True)
    two = []
    for v in chosen:
        two.append(two_instances(v, args.seed, args.draws))
        print({k: x for k, x in two[-1].items() if k != "noise"}, flush=True)
    three = []
    if args.fig9:
        x3 = load_spec_text(spec_text("t2-x3", VARIANTS[chosen[0]], 3), file="x3")
        plans3, _ = distinct_placements(x3)
        for v in chosen:
            three.append(three_instances(v, plans3, args.seed, args.fig9))
            print(three[-1], flush=True)
    kinds = [k for k in args.pairs.split(",") if k]
    pairs = more.pairs_runs({v: VARIANTS[v] for v in chosen}, kinds, args.seed, args.draws)
    default = args.variants == ",".join(VARIANTS) and args.fig9 == 700 and args.seed == 0
    default = default and args.draws == 20 and args.pairs == "pairs-even,pairs-narrow"
    options = (
        ""
        if default
        else (
            f" --seed {args.seed} --variants {args.variants} --fig9 {args.fig9} --draws {args.draws} "
            f"--pairs '{args.pairs}'"
        )
    )
    data = {
        "options": options,
        "seconds": time.perf_counter() - started,
        "criteria": CRITERIA,
        "two": two,
        "three": three,
        "pairs": pairs,
        "verdicts": verdicts(two, three) + more.verdicts(two, three, pairs, CRITERIA),
    }
    for v in data["verdicts"]:
        print(f"{v['result']}: paper {v['paper']}; ours {v['ours']}; holds: {v['holds']}")
    write_results("paper-tsbsched", data, modules=MODULES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
