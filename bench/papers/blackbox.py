"""BlackBox (Radojković et al., IEEE TPDS) Table 1 and Figures 7-9 on the simulated UltraSPARC T2,
with the nine IPFwd variants of §4.3 (intmul and intdiv included; hashN_L2 has no example
application and is synthetic, `predictor_study.HASHN_L2`), the tables profiled on the simulation
noise-free and in 20 draws of 3% measurement noise, judged on the simulation
(`predictor_study` says how).

* Table 1 (§3.2): experiments in the complete tables of one application of 4, 6, 8 and 32 threads
  on the T2 (`ProfileTables.full_table_size`: every placement class of the application alone and
  every stress combination of a core), at 2 s an experiment on one and on four servers.  The
  table's own rows are not in the text; its figures quoted in §3.2 are.
* Figures 7 and 8 (six threads, two instances; 1526 classes, 7295 on the core-pair T2): BlackBox's
  predicted top 1 (no selection phase, Figure 7) and the best measured among its first n, n = 1..5
  (the selection phase, Figure 8), against the best of the reference set.
* Figure 9 (24 threads, eight instances): the paper's sample of random assignments (1000; here
  `--fig9`, uniform over the injective maps, `solver.binding.samplers.uniform_plans`) and balanced
  ones (`balanced_plans`), every one simulated; BlackBox's TOP1 and TOP5 among them against the
  best of them; naive (the uniform sample) and balanced average and worst.  The same on the
  core-pair T2 (`--pair-variants`: those whose processing thread loads the L2 or memory) where its
  split changes the closed form of the plans judged.

    python bench/papers/blackbox.py

Run time: about 33 min of wall time (1992 s) at load 9-10 on two shared cores, with the default
`--fig9` of 150 random plans (the paper's 1000 take several times longer).
"""

from __future__ import annotations

import argparse
import sys
import time

import blackbox_parts as parts
import numpy as np
import predictor_study as study
from common import papers_table, write_results

from tasksolve.solver.binding.samplers import balanced_plans, distinct_placements, uniform_plans

VARIANTS = {
    "hash1_L1": "ipfwd-l1",
    "hash1_L2": "ipfwd-l2",
    "hash1_Mem": "ipfwd-mem",
    "hashN_L1": "ipfwd-hashn-l1",
    "hashN_L2": study.HASHN_L2,
    "hashN_Mem": "ipfwd-hashn-mem",
    "intadd": "ipfwd-intadd",
    "intmul": "ipfwd-intmul",
    "intdiv": "ipfwd-intdiv",
}
CRITERIA = {
    "table1": "the complete tables at 2 s an experiment within 10% of the times of §3.2 for 4, 6 and 8 threads "
    "(5.5 h, 2.5 d, 17 d on one server; 1.3 h, 15 h, 4.2 d on four) and within a factor of 2 of 9e23 years for 32",
    "fig7": "6 threads: BlackBox's top 1 within 4% of the best in every one of the 9 variants, noise-free and at the "
    "median over 20 draws of 3% noise (TPDS: always below 4%)",
    "fig8": "6 threads, at the median over the draws: the selection phase (best of the top 5) gains over the top 1 "
    "in 2-7 of 9 variants (paper: 4 of 9) and by at most 4% (paper: 1.8-3.9%)",
    "fig9_top": "24 threads: TOP1 within 2.8% and TOP5 within 1.4% of the best of the sample in every variant "
    "(the paper's maxima, intdiv and hash1_Mem): noise-free and at the median over the draws",
    "fig9_base": "24 threads: TOP5 above the naive and the balanced average in every variant, and the naive average "
    "loss within 3-38% (half to twice the paper's 6-19%)",
    "pairs": "on the core-pair T2 (even split), where it changes the closed form: TPDS Figure 7's and Figure 9's "
    "bands (top 1 within 4% at 6 threads; TOP1 2.8% and TOP5 1.4% at 24), noise-free and at the median over the draws",
}
# Why a result does not hold, written after the run that found it (the criteria above were not
# changed), keyed by the result's first words.
WHY: dict[str, str] = {
    "Figure 8": "BlackBox's noise-free top 1 is the best in 9 of 9, and a draw of 3% noise seldom displaces it: "
    "selection gains in 0-9 of the 20 draws per variant (by up to 5.6%, hash1_Mem), so the median gain is 0; the "
    "paper's one campaign gained in 4 of 9",
    "Figure 9": "hash1_Mem and hashN_Mem lose 1.1% on average to naive placement: at 24 threads the chip's one "
    "memory resource holds their throughput whatever the placement (the paper's least, hash1_Mem, lost 6%)",
    "Core-pair T2": "the stress domain is the core: no slowdown experiment varies what the neighbour core puts on "
    "the pair's L2 and memory, so classes that differ by pair are predicted alike and hundreds tie at the top (on "
    "closed-form tables: 250 for hashN_Mem x2, 31% of them more than 10% below the best); the noise-free pick is "
    "the first of them (16.7% on hashN_Mem x2, 25.2% on hash1_Mem x8) and noise picks one at random",
}
MODULES = [
    "solver/predictors/batch.py",
    "solver/predictors/tables.py",
    "solver/predictors/codetable.py",
    "solver/binding/samplers.py",
    "simulate/oracle.py",
    "simulate/analytic.py",
    "bench/papers/predictor_study.py",
]
KEEP = {"blackbox": 5, "tsbsched": 10}
# the variants whose processing thread loads the L2 or memory (what the core-pair split shares)
PAIR_VARIANTS = ["hash1_L2", "hash1_Mem", "hashN_L2", "hashN_Mem"]


def six_threads(name: str, app, kind: str, seed: int, draws: int) -> dict:
    """Figures 7-8: two instances, every class predicted, the reference set simulated."""
    spec = study.make_spec(f"{kind}-{name}-x2", app, 2, kind)
    plans, _ = distinct_placements(spec)
    row, _ = study.judge(spec, plans, seed, draws, KEEP, everything=False)
    return {"variant": name, "kind": kind, **row}


def twenty_four(name: str, app, kind: str, seed: int, draws: int, size: int, balanced: int) -> dict:
    """Figure 9: eight instances, a uniform sample and balanced plans, all simulated."""
    spec = study.make_spec(f"{kind}-{name}-x8", app, 8, kind)
    plans = np.concatenate([uniform_plans(spec, size, seed=seed), balanced_plans(spec, balanced, seed=seed)])
    row, inner = study.judge(spec, plans, seed, draws, KEEP, everything=True)
    truth = inner["truth"]
    row["all"] = study.summary(truth[:size], row["best_pps"])  # naive: the uniform sample only
    row["balanced"] = study.summary(truth[size:], row["best_pps"])
    return {"variant": name, "kind": kind, "sample": size, **row}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated paper variants")
    parser.add_argument("--draws", type=int, default=study.DRAWS, help="draws of 3%% profiling noise")
    parser.add_argument("--fig9", type=int, default=150, help="Figure 9: random assignments (0: skip)")
    parser.add_argument("--balanced", type=int, default=30, help="Figure 9: balanced assignments")
    parser.add_argument("--pairs", default="pairs-even", help="core-pair T2 kinds ('': none)")
    parser.add_argument("--pair-variants", default=",".join(PAIR_VARIANTS), help="variants run on the core pairs")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    chosen = [v for v in args.variants.split(",") if v]
    print("criteria:", *(f"  {k}: {v}" for k, v in CRITERIA.items()), sep="\n", flush=True)
    kinds = [k for k in args.pairs.split(",") if k]
    on_pairs = args.pair_variants.split(",")
    six, nine = [], []
    for kind in ["t2"] + kinds:
        for v in chosen:
            if kind != "t2" and (v not in on_pairs or not parts.split_matters(VARIANTS[v], kind, 2)):
                continue
            six.append(six_threads(v, VARIANTS[v], kind, args.seed, args.draws))
            parts.show(six[-1])
    for kind in ["t2"] + kinds if args.fig9 else []:
        for v in chosen:
            if kind != "t2" and (
                v not in on_pairs or not parts.split_matters(VARIANTS[v], kind, 8, args.fig9, args.balanced, args.seed)
            ):
                continue
            nine.append(twenty_four(v, VARIANTS[v], kind, args.seed, args.draws, args.fig9, args.balanced))
            parts.show(nine[-1])
    default = (args.variants, args.draws, args.fig9, args.balanced, args.pairs, args.pair_variants, args.seed)
    options = (
        ""
        if default == (",".join(VARIANTS), study.DRAWS, 150, 30, "pairs-even", ",".join(PAIR_VARIANTS), 0)
        else f" --seed {args.seed} --variants {args.variants} --draws {args.draws} --fig9 {args.fig9} "
        f"--balanced {args.balanced} --pairs '{args.pairs}' --pair-variants {args.pair_variants}"
    )
    data = {
        "options": options,
        "criteria": CRITERIA,
        "table1": parts.table1(),
        "six": six,
        "nine": nine,
    }
    data["verdicts"] = parts.verdicts(data, CRITERIA)
    data["seconds"] = time.perf_counter() - started
    for v in data["verdicts"]:
        print(f"{v['result']}: paper {v['paper']}; ours {v['ours']}; holds: {v['holds']}")
    write_results("paper-blackbox", data, modules=MODULES)
    return 0


def render_markdown(data: dict) -> str:
    verdicts = [
        {**v, "why": "" if v["holds"] else WHY.get(v["result"].split(":")[0], "not analysed")} for v in data["verdicts"]
    ]
    lines = [
        f"`python bench/papers/blackbox.py{data['options']}` ({data['seconds']:.0f} s wall). Losses in % of the best "
        "simulated plan; the simulation is the machine (the tables profiled on it, noise-free and with 3% noise).",
        "",
        papers_table(verdicts),
        "",
    ]
    return "\n".join(lines + parts.render(data)).rstrip()


if __name__ == "__main__":
    sys.exit(main())
