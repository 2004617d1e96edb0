"""ASPLOS'12 (Radojković et al., "Optimal task assignment in multithreaded processors: a
statistical approach") §5.2-5.3, Figures 10-12: how much the best of a random sample gains from
1000 to 5000 task assignments, and how far the best of 5000 lies from the EVT estimate of the
optimum, on the five benchmarks of the paper (24 threads: eight instances each of IPFwd-L1,
IPFwd-Mem, packet analyzer, Aho-Corasick and stateful processing, the example applications).

The "machine" is the closed form by default (``--oracle analytic``, five samples per benchmark in
seconds) or the simulation (``--oracle des``: each sampled assignment simulated once, as the
paper runs each on the T2; 25,000 simulations of 24 threads per seed, about 20 minutes of CPU).  The samples
of 1000 and 2000 are the first assignments of the sample of 5000 (one experiment, as in the
paper); the estimate is `evt.analyze` (the paper's POT method, at most 5% of the sample above
the threshold) on each sample.  ``--seeds`` repeats the whole experiment with other samples.

    python bench/papers/asplos12.py
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from common import markdown_table, papers_table, spec_text, write_results

from tasksolve import evt
from tasksolve.simulate.analytic import BatchModel
from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.specs import load_spec_text

BENCHMARKS = {
    "IPFwd-L1": "ipfwd-l1",
    "IPFwd-Mem": "ipfwd-mem",
    "Packet analyzer": "packet-analyzer",
    "Aho-Corasick": "aho-corasick",
    "Stateful": "stateful",
}
SIZES = (1000, 2000, 5000)
CRITERIA = {
    "fig10": "the best of 5000 beats the best of 1000 by <= 0.6% on at least 4 of 5 benchmarks and by <= 1.2% "
    "(twice the paper's) on all (paper: at most 0.6%, IPFwd-Mem; below 0.25% on the other four)",
    "fig12": "the EVT point estimate lies <= 2.4% above the best of 5000 on at least 4 of 5 benchmarks and <= 5% on "
    "all, with a finite estimate (paper: at most 2.4%, IPFwd-Mem)",
    "fig11": "the 95% interval at 5000 is narrower than at 1000 on at least 4 of 5 benchmarks (paper: 4 of 5, all "
    "but Aho-Corasick)",
}
# Why a result does not hold, by oracle, written after the run that found it (the criteria above were not changed).
WHY = {
    "analytic": {
        "fig10": "the closed form takes few distinct values near the top (whole plateaus of tied assignments): the "
        "best of 1000 either already holds the sample's top plateau (+0.00%) or the best of 5000 reaches the next "
        "one, 0.7-3.0% higher; the paper's measured PPS has no such steps (the simulation: the next section)",
        "fig12": "IPFwd-L1's tail is heavy in the closed form (its 95% intervals are open above at 1000 and reach "
        "15-54 Mpps at 5000): its estimates lie 0.7-7.6% above the best; the other four stay within 3.7%",
        "fig11": "7 of 25 are not narrower: in 6 the sample of 1000 tops out on a lower plateau of tied values "
        "(estimate = best, a narrow interval) and the sample of 5000 reaches a higher plateau, fitted anew; IPFwd-L1 "
        "seed 1 is open above at both sizes",
    },
    "des": {},
}
IGNORE = ["seconds", "*.seconds"]  # wall times (of the run, shown beside the command; of each method, not shown)
MODULES = ["evt/analysis.py", "evt/endpoint.py", "evt/gpd.py", "evt/threshold.py", "solver/binding/samplers.py"]


def measure(spec, plans: np.ndarray, oracle: str, seed: int) -> np.ndarray:
    if oracle == "analytic":
        return BatchModel(spec).throughput(plans)
    rows = [list(map(int, p)) for p in plans]
    return np.array([m.throughput for m in make_oracle(spec, "des").evaluate_many(rows, seed=seed, workers=2)])


def one(bench: str, oracle: str, seed: int) -> dict:
    spec = load_spec_text(spec_text(f"t2-{BENCHMARKS[bench]}-x8", BENCHMARKS[bench], 8), file=bench)
    values = measure(spec, uniform_plans(spec, max(SIZES), seed), oracle, seed) / 1e6
    out = {"benchmark": bench, "seed": seed}
    for n in SIZES:
        x = values[:n]
        res = evt.analyze(x, gof_bootstrap=0, seed=seed)
        finite = math.isfinite(res.estimate)
        out[str(n)] = {
            "best": float(x.max()),
            "estimate": float(res.estimate) if finite else None,
            "lower": float(res.lower),
            "upper": float(res.upper) if math.isfinite(res.upper) else None,
            "gap": 100 * (res.estimate / x.max() - 1) if finite else None,
        }
    out["gain_1000_5000"] = 100 * (out["5000"]["best"] / out["1000"]["best"] - 1)
    return out


def _width(r: dict) -> float:
    return math.inf if r["upper"] is None else r["upper"] - r["lower"]


def verdicts(rows: list[dict]) -> list[dict]:
    gains = [r["gain_1000_5000"] for r in rows]
    gaps = [r["5000"]["gap"] for r in rows]
    finite = [g for g in gaps if g is not None]
    narrower = sum(_width(r["5000"]) < _width(r["1000"]) for r in rows)
    n = len(rows)
    return [
        {
            "key": "fig10",
            "result": "Figure 10: best of 5000 vs best of 1000 random assignments",
            "paper": "+0.6% at most (IPFwd-Mem); < 0.25% on the other four",
            "ours": f"+{min(gains):.2f}% to +{max(gains):.2f}%; <= 0.6% on {sum(g <= 0.6 for g in gains)} of {n}",
            "criterion": CRITERIA["fig10"],
            "holds": sum(g <= 0.6 for g in gains) >= 0.8 * n and max(gains) <= 1.2,
        },
        {
            "key": "fig12",
            "result": "Figure 12: EVT estimate above the best of 5000",
            "paper": "2.4% at most (IPFwd-Mem)",
            "ours": (f"{min(finite):.2f}% to {max(finite):.2f}%" if finite else "no finite estimate")
            + f"; <= 2.4% on {sum(g <= 2.4 for g in finite)} of {n}; {n - len(finite)} without a finite estimate",
            "criterion": CRITERIA["fig12"],
            "holds": len(finite) == n and sum(g <= 2.4 for g in finite) >= 0.8 * n and max(finite) <= 5,
        },
        {
            "key": "fig11",
            "result": "Figure 11: the interval narrows from 1000 to 5000",
            "paper": "4 of 5",
            "ours": f"{narrower} of {n}",
            "criterion": CRITERIA["fig11"],
            "holds": narrower >= 0.8 * n,
        },
    ]


def _cell(r: dict) -> str:
    est = "inf" if r["estimate"] is None else f"{r['estimate']:.4f}"
    up = "inf" if r["upper"] is None else f"{r['upper']:.4f}"
    return f"{r['best']:.4f} / {est} [{r['lower']:.4f}, {up}]"


def render_markdown(data: dict) -> str:
    lines = [
        f"`python bench/papers/asplos12.py{data['options']}` ({data['seconds']:.0f} s wall; oracle `{data['oracle']}`, "
        f"seeds {data['seeds']}). The verdicts take every (benchmark, seed) as one experiment.",
        "",
        papers_table(
            [
                {**v, "why": "" if v["holds"] else WHY[data["oracle"]].get(v["key"], "not analysed")}
                for v in data["verdicts"]
            ]
        ),
        "",
        "Best / EVT estimate [95% interval], Mpps, by sample size; gains and gaps in %:",
        "",
    ]
    rows = [
        [r["benchmark"], r["seed"]]
        + [_cell(r[str(n)]) for n in SIZES]
        + [f"+{r['gain_1000_5000']:.2f}", "inf" if r["5000"]["gap"] is None else f"{r['5000']['gap']:.2f}"]
        for r in data["rows"]
    ]
    cols = ["benchmark", "seed", "n = 1000", "n = 2000", "n = 5000", "gain 1000 -> 5000", "estimate above best (5000)"]
    return "\n".join(lines) + "\n" + markdown_table(cols, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", choices=("des", "analytic"), default="analytic")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--benchmarks", default=",".join(BENCHMARKS), help="comma-separated benchmark names")
    args = parser.parse_args(argv)
    print("criteria:", *(f"  {k}: {v}" for k, v in CRITERIA.items()), sep="\n", flush=True)
    started = time.perf_counter()
    rows = []
    for seed in range(args.seeds):
        for bench in args.benchmarks.split(","):
            rows.append(one(bench, args.oracle, seed))
            print(rows[-1], flush=True)
    options = "".join(
        [
            f" --oracle {args.oracle}" if args.oracle != "analytic" else "",
            f" --seeds {args.seeds}" if args.seeds != 5 else "",
            f" --benchmarks {args.benchmarks}" if args.benchmarks != ",".join(BENCHMARKS) else "",
        ]
    )
    data = {
        "options": options,
        "oracle": args.oracle,
        "seeds": args.seeds,
        "seconds": time.perf_counter() - started,
        "criteria": CRITERIA,
        "rows": rows,
        "verdicts": verdicts(rows),
    }
    for v in data["verdicts"]:
        print(f"{v['result']}: paper {v['paper']}; ours {v['ours']}; holds: {v['holds']}")
    name = "paper-asplos12" if args.oracle == "analytic" else "paper-asplos12-des"
    write_results(
        name,
        data,
        modules=MODULES + (["simulate/analytic.py"] if args.oracle == "analytic" else ["simulate/oracle.py"]),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
