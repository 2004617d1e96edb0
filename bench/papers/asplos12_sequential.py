"""ASPLOS'12 (Radojković et al.) §5.3, Figures 13-14: the sequential algorithm -- sample N_init
random assignments, estimate the optimum, stop when the best is within X% of it, else add N_delta
more -- and the number of assignments it needs for X = 10%, 5% and 2.5%, judged against the
closed form's optimum proven by CP-SAT (`asplos12_truth.closed_form_truth`).

Per benchmark and seed, one stream of 10,000 uniform random assignments (the first 5000 are
`asplos12.py`'s sample of the same seed) is valued by the closed form.  `evt.sequential` runs on
it with the paper's N_init = 1000 and N_delta = 100 to the project's `max_n` of 10,000, every
step's analysis kept; each stopping rule's stop for each X is the first step that meets it
(equal to running `evt.sequential` with that rule and X: the stream and every analysis are the
same -- tests/bench/test_papers.py):

* the paper's rule: the best is within X% of the EVT *point estimate* (``gap_point``; §5.3,
  Step 3: "the performance difference between the observed best assignment ... and the
  estimated optimal system performance");
* the project's rule: within X% of the 95% interval's far limit (``gap_worst``; docs/design.md,
  Departure 6).

Figure 14 is reported twice: as the paper measures it (samples until the paper's rule stops),
and against the truth (samples until the best is in fact within X% of the optimum).

    python bench/papers/asplos12_sequential.py      # 25 runs, ~2 min on 2 busy cores
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from asplos12 import BENCHMARKS, bench_spec
from asplos12_truth import allowance, closed_form_truth
from common import markdown_table, papers_table, write_results

from tasksolve import evt
from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding.samplers import uniform_plans

N_INIT, N_DELTA, MAX_N = 1000, 100, 10_000  # the paper's N_init and N_delta; the project's max_n
TARGETS = (10.0, 5.0, 2.5)  # X, % (Figure 14)
RULES = {"point": "gap_point", "far": "gap_worst"}
CRITERIA = {
    "fig14": "the paper's rule stops claiming 10% within 1300 samples on every run, and claiming 2.5% within 4500 "
    "samples on at least 80% of the runs (paper: under 1300 on all five benchmarks; 2200-4500)",
    "fig14_truth": "the best of the sample is truly within 10% of the proven optimum within 1300 samples on every "
    "run, and within 2.5% within 4500 samples on at least 80% of the runs (the paper's figures, read as the truth)",
    "stops_point": "for each X, the paper's rule's stops whose best is more than X below the proven optimum are no "
    "more than a valid 95% claim allows but with probability under 5% (the binomial 95% quantile of the stops made)",
    "stops_far": "the same for the project's rule (the interval's far limit, Departure 6)",
}
# Why a result does not hold, written after the run that found it (the criteria above were not changed).
WHY = {
    "fig14": "close to the paper: 24 of 25 runs stop within the paper's counts, most at the first look (n = 1000, "
    "where the estimate sits on the sample's top plateau); IPFwd-L1 seed 0 (heavy tail in the closed form) stops for "
    "10% at 3900 and for 2.5% at 5800",
    "fig14_truth": "the paper's method fails against the truth: the best of 10,000 uniform plans is within 2.5% of the "
    "optimum on 6 of 25 runs only (IPFwd-Mem 5 of 5, Aho-Corasick 1); IPFwd-L1's never comes within 5%, Packet analyzer's and Stateful's never within 2.5%; for 10%, IPFwd-L1 seed 2 needs 1905 samples",
    "stops_point": "the paper's rule stops on the estimate, which sits on the sample's top: 23 of its 25 '2.5%' "
    "stops are 2.65-11.9% below the optimum (IPFwd-L1 seed 2 stops at n = 1000 for all three targets, 11.9% below)",
    "stops_far": "the far limit stops less often (19 of 25 for 2.5%) but is as wrong when it stops: 17 of 19 '2.5%' "
    "stops and 5 of 22 '5%' stops are beyond the target; a 95% interval that misses the optimum (asplos12.py's "
    "coverage row) gives a far limit below it",
}
IGNORE = ["seconds", "*.seconds"]
MODULES = [
    "evt/analysis.py",
    "evt/endpoint.py",
    "evt/gpd.py",
    "evt/threshold.py",
    "evt/sequential.py",
    "solver/binding/samplers.py",
    "solver/binding/cpsat.py",
    "simulate/analytic.py",
]


def first_within(values: np.ndarray, optimum: float, target: float) -> int | None:
    """The sample size at which the best first lies within `target` % of `optimum`."""
    hit = np.flatnonzero(np.maximum.accumulate(values) >= (1 - target / 100) * optimum)
    return int(hit[0]) + 1 if hit.size else None


def steps_of(values: np.ndarray, seed: int) -> list[dict]:
    """Every step of `evt.sequential` on the stream `values`, run to `MAX_N`."""
    stream = iter(values)

    def sampler(k: int) -> list[float]:
        return [next(stream) for _ in range(k)]

    res = evt.sequential(
        sampler, n_init=N_INIT, n_delta=N_DELTA, max_n=MAX_N, gof_bootstrap=0, seed=seed, stop=lambda s, r: False
    )
    return [{"n": s.n, "best": s.best, "gap_point": s.gap_point, "gap_worst": s.gap_worst} for s in res.steps]


def stop_of(steps: list[dict], rule: str, target: float) -> dict | None:
    """The first step whose gap under `rule` is at most `target` %; None when none is."""
    key = RULES[rule]
    for s in steps:
        if s[key] is not None and s[key] <= target / 100:
            return s
    return None


def one(bench: str, seed: int, optimum: float) -> dict:
    spec = bench_spec(bench)
    values = BatchModel(spec).throughput(uniform_plans(spec, MAX_N, seed)) / 1e6
    steps = steps_of(values, seed)
    out: dict = {"benchmark": bench, "seed": seed, "truth": {}, "stops": {}}
    for x in TARGETS:
        out["truth"][str(x)] = first_within(values, optimum, x)
        for rule in RULES:
            s = stop_of(steps, rule, x)
            out["stops"][f"{rule}:{x}"] = (
                None
                if s is None
                else {"n": s["n"], "claimed": 100 * s[RULES[rule]], "loss": 100 * (1 - s["best"] / optimum)}
            )
    return out


def _within(ns: list[int | None], limit: int) -> int:
    return sum(n is not None and n <= limit for n in ns)


def _ns(ns: list[int | None]) -> str:
    got = [n for n in ns if n is not None]
    never = len(ns) - len(got)
    return (f"{min(got)}-{max(got)}" if got else "none") + (f", {never} never by {MAX_N}" if never else "")


def _fig14(key: str, result: str, ten: list, two: list, n: int) -> dict:
    return {
        "key": key,
        "result": result,
        "paper": "10%: under 1300 on all five; 2.5%: 2200 (IPFwd-L1) to 4500 (IPFwd-Mem)",
        "ours": f"10%: {_ns(ten)}, within 1300 on {_within(ten, 1300)} of {n}; "
        f"2.5%: {_ns(two)}, within 4500 on {_within(two, 4500)} of {n}",
        "criterion": CRITERIA[key],
        "holds": _within(ten, 1300) == n and _within(two, 4500) >= 0.8 * n,
    }


def _stops(rule: str, rows: list[dict]) -> dict:
    parts, ok = [], True
    for x in TARGETS:
        made = [r["stops"][f"{rule}:{x}"] for r in rows if r["stops"][f"{rule}:{x}"] is not None]
        wrong = [s for s in made if s["loss"] > x]
        ok = ok and len(wrong) <= allowance(len(made))
        worst = f", up to {max(s['loss'] for s in wrong):.2f}% below" if wrong else ""
        parts.append(f"{x:g}%: {len(wrong)} of {len(made)} stops wrong{worst} (allowed {allowance(len(made))})")
    name = "the paper's rule (point estimate)" if rule == "point" else "the project's rule (far limit)"
    return {
        "key": f"stops_{rule}",
        "result": f"the sequential algorithm's stops, {name}, against the proven optimum",
        "paper": "stops when the best is within X% of the estimated optimum",
        "ours": "; ".join(parts),
        "criterion": CRITERIA[f"stops_{rule}"],
        "holds": ok,
    }


def verdicts(rows: list[dict]) -> list[dict]:
    n = len(rows)
    paper = [[(r["stops"][f"point:{x}"] or {}).get("n") for r in rows] for x in (10.0, 2.5)]
    truth = [[r["truth"][str(x)] for r in rows] for x in (10.0, 2.5)]
    return [
        _fig14("fig14", "Figure 14: samples until the paper's rule stops (10% / 2.5%)", *paper, n),
        _fig14("fig14_truth", "Figure 14 against the truth: samples until the best is within 10% / 2.5%", *truth, n),
        _stops("point", rows),
        _stops("far", rows),
    ]


def _cell(s: dict | None) -> str:
    return "--" if s is None else f"{s['n']} ({s['loss']:.2f})"


def render_markdown(data: dict) -> str:
    head = (
        f"`python bench/papers/asplos12_sequential.py{'' if data['seeds'] == 5 else ' --seeds ' + str(data['seeds'])}` "
        f"({data['seconds']:.0f} s wall; closed form, seeds "
        f"{data['seeds']}; N_init {N_INIT}, N_delta {N_DELTA}, max_n {MAX_N}). Optima (Mpps, proven by CP-SAT): "
        + ", ".join(f"{b} {v:.4f}" for b, v in data["optima"].items())
        + "."
    )
    table = papers_table(
        [{**v, "why": "" if v["holds"] else WHY.get(v["key"], "not analysed")} for v in data["verdicts"]]
    )
    cols = ["benchmark", "seed"]
    for x in TARGETS:
        cols += [f"{x:g}%: truly within", f"{x:g}%: paper's rule stops (true loss)", f"{x:g}%: far-limit rule stops"]
    rows = [
        [r["benchmark"], r["seed"]]
        + [
            c
            for x in TARGETS
            for c in (r["truth"][str(x)] or "--", _cell(r["stops"][f"point:{x}"]), _cell(r["stops"][f"far:{x}"]))
        ]
        for r in data["rows"]
    ]
    legend = 'Samples needed per run ("--": not within {MAX_N}); in brackets the best\'s true loss at the stop, %:'
    return "\n".join([head, "", table, "", legend.format(MAX_N=MAX_N), "", markdown_table(cols, rows)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    print("criteria:", *(f"  {k}: {v}" for k, v in CRITERIA.items()), sep="\n", flush=True)
    started = time.perf_counter()
    optima = {b: closed_form_truth(bench_spec(b))["optimum"] for b in BENCHMARKS}
    rows = []
    for seed in range(args.seeds):
        for bench in BENCHMARKS:
            rows.append(one(bench, seed, optima[bench]))
            print(rows[-1], flush=True)
    data = {"seeds": args.seeds, "optima": optima, "criteria": CRITERIA, "rows": rows, "verdicts": verdicts(rows)}
    data["seconds"] = time.perf_counter() - started
    for v in data["verdicts"]:
        print(f"{v['result']}: ours {v['ours']}; holds: {v['holds']}")
    write_results("paper-asplos12-sequential", data, modules=MODULES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
