"""ASPLOS'12 (Radojković et al., "Optimal task assignment in multithreaded processors: a
statistical approach") §5.2-5.3, Figures 10-12: how much the best of a random sample gains from
1000 to 5000 task assignments, and how far the best of 5000 lies from the EVT estimate of the
optimum, on the five benchmarks of the paper (24 threads: eight instances each of IPFwd-L1,
IPFwd-Mem, packet analyzer, Aho-Corasick and stateful processing, the example applications).

The "machine" is the closed form by default (``--oracle analytic``, five samples per benchmark in
seconds) or the simulation (``--oracle des``: each sampled assignment simulated once, as the
paper runs each on the T2; 25,000 simulations of 24 threads per seed at the paper's sizes, about
45 minutes of wall time on two busy cores: ``--sizes 1000`` keeps five seeds of all five benchmarks
to the same 25,000).  The samples
of 1000 and 2000 are the first assignments of the sample of 5000 (one experiment, as in the
paper); the estimate is `evt.analyze` (the paper's POT method, at most 5% of the sample above
the threshold) on each sample.  ``--seeds`` repeats the whole experiment with other samples.

Every result is also judged against the truth the paper did not have (`asplos12_truth`): the
closed form's optimum proven by CP-SAT, or on the simulation the bracket between the best known
plan and the fluid LP's bound -- whether each 95% interval holds the optimum, how far the best of
the sample lies below it, and how far the loss the estimate reports is from the true loss.
Table 1 (the number of assignments) is recomputed with the project's exact count.  The
sequential algorithm (Figures 13-14) is `asplos12_sequential.py`.

    python bench/papers/asplos12.py                     # closed form, 5 seeds x 5 benchmarks, ~1 min
    python bench/papers/asplos12.py --oracle des --sizes 1000   # simulation, 25,000 runs, 45 min at load 10
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from asplos12_truth import add_best_known, add_truth, closed_form_truth, simulation_truth, table1, table1_verdict
from asplos12_truth import truth_verdicts as truth_rows
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
    # Stated before the runs against the truth (the rows above were judged against the sample's own best).
    "cover": "at the largest sample size, the 95% interval misses the optimum in no more runs than a valid 95% "
    "interval does but with probability under 5% (the binomial 95% quantile: 3 of 25); on the simulation a miss is "
    "an interval wholly below the best known plan's lower limit or wholly above the fluid LP bound",
    "best": "on every run, the best of the largest sample lies at most the paper's estimated loss at that size below "
    "the optimum (Figure 12: 2.4% at n = 5000, 5% at 2000, 23% at 1000); on the simulation, below the best known plan",
    "loss": "the loss the EVT point estimate reports for the best of the largest sample (1 - best / estimate) is "
    "within 1 percentage point of the true loss (1 - best / optimum; on the simulation, of the bracket's range) on at "
    "least 80% of the runs; an infinite estimate counts as a miss",
    "table1": "the project's exact count of distinct assignments is within 1% of the paper's on every row (the paper "
    "prints three significant figures)",
}
# Why a result does not hold, by oracle, written after the run that found it (the criteria above were not changed).
WHY = {
    "analytic": {
        "fig10": "the closed form takes few distinct values near the top (whole plateaus of tied assignments): the "
        "best of 1000 either already holds the sample's top plateau (+0.00%) or the best of 5000 reaches the next "
        "one, 0.7-3.0% higher; the paper's measured PPS has no such steps (the simulation: the first simulation run, "
        "below)",
        "fig12": "IPFwd-L1's tail is heavy in the closed form (its 95% intervals are open above at 1000 and reach "
        "15-54 Mpps at 5000): its estimates lie 0.7-7.6% above the best; the other four stay within 3.7%",
        "fig11": "7 of 25 are not narrower: in 6 the sample of 1000 tops out on a lower plateau of tied values "
        "(estimate = best, a narrow interval) and the sample of 5000 reaches a higher plateau, fitted anew; IPFwd-L1 "
        "seed 1 is open above at both sizes",
        "cover": "the paper's method fails against the truth: every IPFwd-Mem and Stateful run and 4 of 5 Packet "
        "analyzer runs end their interval below the optimum (7.81 and 9.87-9.90 Mpps against 7.966 and 10.127): the "
        "sample's top is a plateau 2.1-4.8% below the optimum, and the GPD fitted to it sees nothing above; the runs "
        "that hold are mostly open or wide above (IPFwd-L1 up to 54 Mpps; at n = 1000, 11 of the 12 that hold are "
        "open above: they hold by claiming nothing), and the share falls as the sample grows (12, 12, 8 of 25)",
        "best": "uniform random plans rarely come near the optimum: the best of 5000 is 2.1% (IPFwd-Mem) to 9.5% "
        "(IPFwd-L1: 8.0-9.5%) below it; the paper's 2.4% is the distance to its own estimate, not to the optimum",
        "loss": "the estimate mostly reports what the sample already holds: a loss of 0.00-0.02% on IPFwd-Mem and "
        "Stateful where the truth is 2.11% and 2.65%, 0.0-1.0% on Packet analyzer where it is 3.6-4.8%; it is within 1 "
        "point on 2 Aho-Corasick runs and 1 IPFwd-L1 run only, and by chance (IPFwd-L1's estimates are 0.7-7.0% for 8.0-9.5%)",
        "table1": "the 18-task row: the paper's 971e12 is 16% below the exact 1.159e15 (+19.3% ours over its); the "
        "paper's own time columns (30 million years at 1 s, 31 years at 1 us) agree with 971e12, so the count, not a "
        "typo, differs; the other rows are within 0.42% (9 and 12 tasks 0.27% and 0.42% low, beyond the paper's "
        "rounding); no counting rule we tried (pipes or strands told apart) gives 971e12 while keeping the 3- and "
        "6-task rows (11, 1526), so the miss stays unexplained",
    },
    "des": {
        "cover": "the paper's method fails on the simulation too: 17 of 25 intervals miss -- every Stateful run and 4 "
        "of 5 IPFwd-Mem runs end below the closed-form optimum's plan (9.78-10.04 against 10.127, 7.75-7.80 against "
        "7.966) or reject every finite end point; 4 of 5 Aho-Corasick intervals start above the fluid LP's bound "
        "(4.72-5.03 against 4.667: a heavy fitted tail), or reject every finite end; 3 Packet analyzer runs and 1 "
        "IPFwd-L1 run miss below; the 6 that hold are 5 open above and one 2.3 Mpps wide",
        "loss": "the estimate reports 0.00-0.24% on IPFwd-Mem and Stateful where the best is 2.1-3.5% below the best "
        "known plan; none of Aho-Corasick's estimates is finite; IPFwd-L1's 0.3-6.1% against 7.0-9.0%",
    },
}
IGNORE = ["seconds", "*.seconds", "truths.*.contexts"]  # wall times; which of several optimal plans CP-SAT returns
#: EVT's estimates, their intervals and what follows from them (bench/render.py: agree to 1e-5 relative on a re-run)
FITTED = ["rows.*.*.estimate", "rows.*.*.lower", "rows.*.*.upper", "rows.*.*.gap", "rows.*.*.truth.estimated_loss"]
MODULES = ["evt/analysis.py", "evt/endpoint.py", "evt/gpd.py", "evt/threshold.py", "solver/binding/samplers.py"]
TRUTH_MODULES = ["solver/binding/cpsat.py", "solver/certify/bounds.py", "specs/counting.py"]


def bench_spec(bench: str):
    """The benchmark's 24-thread spec: eight instances of its example application on the T2."""
    return load_spec_text(spec_text(f"t2-{BENCHMARKS[bench]}-x8", BENCHMARKS[bench], 8), file=bench)


def measure(spec, plans, oracle: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Each plan's throughput and its 95% half-width (zero on the closed form), Mpps."""
    if oracle == "analytic":
        return BatchModel(spec).throughput(np.asarray(plans)) / 1e6, np.zeros(len(plans))
    rows = [list(map(int, p)) for p in plans]
    ms = make_oracle(spec, "des").evaluate_many(rows, seed=seed, workers=2)
    half = [float(m.natural_half_width(spec.objective) or 0.0) for m in ms]
    return np.array([m.throughput for m in ms]) / 1e6, np.array(half) / 1e6


def one(bench: str, oracle: str, seed: int, sizes=SIZES) -> dict:
    spec = bench_spec(bench)
    values, half = measure(spec, uniform_plans(spec, max(sizes), seed), oracle, seed)
    out = {"benchmark": bench, "seed": seed, "best_half_width": float(half[int(np.argmax(values))])}
    for n in sizes:
        x = values[:n]
        res = evt.analyze(x, gof_bootstrap=0, seed=seed)
        finite = math.isfinite(res.estimate)
        out[str(n)] = {
            "best": float(x.max()),
            "estimate": float(res.estimate) if finite else None,
            "lower": float(res.lower) if math.isfinite(res.lower) else None,  # inf: every finite end point rejected
            "upper": float(res.upper) if math.isfinite(res.upper) else None,
            "gap": 100 * (res.estimate / x.max() - 1) if finite else None,
        }
    if "1000" in out and "5000" in out:
        out["gain_1000_5000"] = 100 * (out["5000"]["best"] / out["1000"]["best"] - 1)
    return out


def truth(bench: str, oracle: str) -> dict:
    """The benchmark's optimum: proven on the closed form; on the simulation the closed-form
    optimum's plan simulated and the fluid bound (the runs' best plans join after the runs)."""
    spec = bench_spec(bench)
    proof = closed_form_truth(spec, deterministic=oracle == "des")
    if oracle == "analytic":
        return proof
    return simulation_truth(spec, proof, lambda rows: measure(spec, rows, "des", 0))


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
    low = "inf" if r["lower"] is None else f"{r['lower']:.4f}"
    return f"{r['best']:.4f} / {est} [{low}, {up}]"


def _sizes(data: dict) -> list[int]:
    return [int(k) for k in data["rows"][0] if k.isdigit()]


def _why(data: dict, v: dict) -> str:
    """The "why not" cell; on a run of fewer than five benchmarks judged against the sample's own
    best, a note that "4 of 5 benchmarks" was read as 80% of too few runs."""
    if not v["holds"]:
        return WHY[data["oracle"]].get(v["key"], "not analysed")
    benches = {r["benchmark"] for r in data["rows"]}
    if v["key"] in ("fig10", "fig11", "fig12") and len(benches) < len(BENCHMARKS):
        return (
            f"holds on {len(data['rows'])} runs only ({len(benches)} benchmarks, {data['seeds']} seed(s)): "
            "'4 of 5 benchmarks' was read as 80% of the runs; the row judges against the sample's own best, the "
            "simulation run against the truth (five seeds, five benchmarks) against the optimum"
        )
    return ""


def _truth_cells(r: dict, sizes: list[int], des: bool) -> list[str]:
    t = r[str(max(sizes))]["truth"]
    loss = f"{t['loss'][0]:.2f}" + (f" to {t['loss'][1]:.2f}" if des else "")
    return ["/".join({"yes": "y", "no": "**n**", "undecided": "?"}[r[str(n)]["truth"]["holds"]] for n in sizes), loss]


def _run_table(data: dict) -> str:
    sizes, des = _sizes(data), data["oracle"] == "des"
    truth = "truths" in data
    cols = ["benchmark", "seed"] + [f"n = {n}" for n in sizes]
    if "gain_1000_5000" in data["rows"][0]:
        cols += ["gain 1000 -> 5000", "estimate above best (5000)"]
    if truth:
        cols += [f"interval holds the optimum ({'/'.join(map(str, sizes))})", f"best of {max(sizes)} below the optimum"]
    rows = []
    for r in data["rows"]:
        row = [r["benchmark"], r["seed"]] + [_cell(r[str(n)]) for n in sizes]
        if "gain_1000_5000" in r:
            row += [f"+{r['gain_1000_5000']:.2f}", "inf" if r["5000"]["gap"] is None else f"{r['5000']['gap']:.2f}"]
        rows.append(row + (_truth_cells(r, sizes, des) if truth else []))
    return markdown_table(cols, rows)


def _truth_table(data: dict) -> str:
    if data["oracle"] == "analytic":
        rows = [[b, f"{t['optimum']:.4f}", t["status"], f"{t['seconds']:.1f}"] for b, t in data["truths"].items()]
        return markdown_table(["benchmark", "proven optimum (Mpps)", "CP-SAT status", "proof (s)"], rows)
    rows = []
    for b, t in data["truths"].items():
        plan, *sampled = t["known"]
        top = max(sampled, key=lambda k: k["value"]) if sampled else None
        rows.append(
            [b, f"{t['optimum']:.4f}", f"{plan['value']:.4f} +- {plan['half_width']:.4f}"]
            + [
                f"{top['value']:.4f} +- {top['half_width']:.4f}" if top else "",
                f"{t['fluid']:.4f} ({t['fluid_method']})",
            ]
        )
    cols = ["benchmark", "closed-form optimum", "its plan simulated", "best sampled plan", "fluid LP bound"]
    return markdown_table(cols, rows)


def _table1(data: dict) -> str:
    rows = [[r["tasks"], f"{r['paper']:.3g}", r["ours"], f"{100 * r['ratio']:+.2f}%"] for r in data["table1"]]
    return markdown_table(["tasks", "paper", "ours (exact count)", "ours / paper - 1"], rows)


def render_markdown(data: dict) -> str:
    des = data["oracle"] == "des"
    lines = [
        f"`python bench/papers/asplos12.py{data['options']}` ({data['seconds']:.0f} s wall; oracle `{data['oracle']}`, "
        f"seeds {data['seeds']}). The verdicts take every (benchmark, seed) as one experiment.",
        "",
        papers_table([{**v, "why": _why(data, v)} for v in data["verdicts"]]),
        "",
    ]
    if "truths" in data:
        what = (
            "bracket: the best known plan's simulated value (less its half-width) to the fluid LP's bound"
            if des
            else "proven by CP-SAT (`closed_form_bound`)"
        )
        lines += [f"The optimum, Mpps ({what}):", "", _truth_table(data), ""]
    if "table1" in data:
        lines += ["Table 1 (distinct assignments on the T2, `specs.counting.count_distinct`):", "", _table1(data), ""]
    lines += [
        "Best / EVT estimate [95% interval], Mpps, by sample size; gains, gaps and losses in %"
        + ("; holds: y, **n** (a miss), ? (holds part of the bracket)" if des and "truths" in data else "")
        + ":",
        "",
    ]
    return "\n".join(lines) + "\n" + _run_table(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", choices=("des", "analytic"), default="analytic")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--benchmarks", default=",".join(BENCHMARKS), help="comma-separated benchmark names")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated sample sizes")
    args = parser.parse_args(argv)
    sizes = sorted(int(n) for n in args.sizes.split(","))
    benches = args.benchmarks.split(",")
    print("criteria:", *(f"  {k}: {v}" for k, v in CRITERIA.items()), sep="\n", flush=True)
    started = time.perf_counter()
    truths = {b: truth(b, args.oracle) for b in benches}
    print(truths, flush=True)
    rows = []
    for seed in range(args.seeds):
        for bench in benches:
            rows.append(one(bench, args.oracle, seed, sizes))
            print(rows[-1], flush=True)
    if args.oracle == "des":
        add_best_known(rows, truths, max(sizes))
    add_truth(rows, truths, sizes)
    found = verdicts(rows) if {1000, 5000} <= set(sizes) else []
    found += truth_rows(rows, sizes, CRITERIA, args.oracle == "des")
    data = {
        "options": _options(args),
        "oracle": args.oracle,
        "seeds": args.seeds,
        "criteria": CRITERIA,
        "truths": truths,
        "rows": rows,
    }
    if args.oracle == "analytic":
        data["table1"] = table1()
        found.append(table1_verdict(data["table1"], CRITERIA["table1"]))
    data["verdicts"] = found
    data["seconds"] = time.perf_counter() - started
    for v in found:
        print(f"{v['result']}: paper {v['paper']}; ours {v['ours']}; holds: {v['holds']}")
    name = (
        "paper-asplos12"
        + ("-des" if args.oracle == "des" else "")
        + ("" if tuple(sizes) == SIZES else f"-n{max(sizes)}")
    )
    oracle_modules = (
        ["simulate/analytic.py"] if args.oracle == "analytic" else ["simulate/oracle.py", "solver/certify/fluid_max.py"]
    )
    write_results(name, data, modules=MODULES + TRUTH_MODULES + oracle_modules)
    return 0


def _options(args) -> str:
    return "".join(
        [
            f" --oracle {args.oracle}" if args.oracle != "analytic" else "",
            f" --seeds {args.seeds}" if args.seeds != 5 else "",
            f" --benchmarks {args.benchmarks}" if args.benchmarks != ",".join(BENCHMARKS) else "",
            f" --sizes {args.sizes}" if args.sizes != ",".join(map(str, SIZES)) else "",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
