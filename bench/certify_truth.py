"""Certificates against the truth: both sampling designs on specs whose optimum is proven.

For each spec the closed form's optimum is proven by CP-SAT (`solver.certify.bounds`, status
OPTIMAL; a spec without a proof is skipped).  For each design and sample size n, independent
samples are analysed with `evt.analyze` (ASPLOS'12 POT, unchanged) and judged by
`solver.certify.verdict.decide` with the best sampled plan as the plan and *no* bound (what
the simulation would have) beyond the best of `--probes` local-search restarts, as `certify` adds
(`solver.certify.designs.probe`; ``--probes 0`` judges the sample alone):

* coverage -- share of samples whose 95% interval holds the proven optimum;
* width -- median of (upper - lower) / optimum;
* error -- median of (estimate - optimum) / optimum (negative: the estimate is too low);
* wrong -- samples `certified` while the best sampled plan is more than the 5% target below the
  optimum (a wrong verdict);
* old wrong -- the same count under the rule replaced by `solver.certify.verdict` (certified when
  the best plan is within the target of the far limit, whatever the flags, the sample size or a
  refuting plan);
* found -- share of samples whose best plan is the optimum (relative 1e-6, see `TOLERANCE`).

Samples.  ``random``: uniform plans (`uniform_plans`, one generator per repetition) evaluated by
the closed form in a batch.  ``local-optima``: one pool of iid local optima per spec measured
through the `SamplingService` (the product's path, 2 worker processes), cut into *disjoint*
chunks of n, so the repetitions are independent; sizes the pool cannot fill twice are skipped.
Samples EVT cannot analyse (e.g. constant) count as not covering and not certified.

    python bench/certify_truth.py [--reps 10] [--pool 2000] [--sizes 200,1000,5000]
                                  [--specs a,b] [--probes 10] [--width-spec t2-ipfwd-l1-x8] [--width-cap 4000]

The last part times both designs until the interval's width is at most 1% of the estimate on
`--width-spec` (closed form), checking every 200 samples.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import evt
from simulate.analytic import BatchModel
from simulate.oracle import make_oracle
from solver.binding.samplers import uniform_plans
from solver.certify.bounds import closed_form_bound
from solver.certify.designs import PROBES, probe
from solver.certify.service import SamplingService
from solver.certify.verdict import Evidence, decide
from specs import load_spec

SPECS = ("t2-ipfwd-intadd-x2", "t2-ipfwd-l2-x2", "t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8", "t2-asplos12-mix")
TARGET = 0.05
#: the optimum is CP-SAT's plan valued by the closed form the samples use; CP-SAT's own figure and
#: bound agree with it to ~3e-8 (scaled integers), so "equal" means within 1e-6 (`bounds.PROVEN_GAP`)
TOLERANCE = 1e-6


def judge(values: np.ndarray, optimum: float, probed: float | None) -> dict:
    best = float(values.max())
    row = {
        "found": abs(best - optimum) <= TOLERANCE * optimum,
        "covered": False,
        "width": None,
        "error": None,
        "wrong": False,
        "old_wrong": False,
        "verdict": "unanalysable",
    }
    try:
        result = evt.analyze(values, gof_bootstrap=0)
    except evt.EVTError:
        return row
    decision = decide(
        Evidence(
            plan_value=best,
            minimize=False,
            target_gap=TARGET,
            n=values.size,
            estimate=result.estimate,
            lower=result.lower,
            upper=result.upper,
            flags=result.flags,
            known=[("best sampled plan", best)] + ([("probe", probed)] if probed is not None else []),
            oracle="des",
        )
    )
    finite = np.isfinite(result.upper)
    slack = TOLERANCE * abs(optimum)  # a boundary fit puts a limit on the optimum itself
    row.update(
        covered=bool(result.lower - slack <= optimum <= result.upper + slack),
        width=(result.upper - result.lower) / optimum if finite else float("inf"),
        error=(result.estimate - optimum) / optimum if np.isfinite(result.estimate) else float("inf"),
        verdict=decision.verdict,
        wrong=decision.verdict == "certified" and (optimum - best) / optimum > TARGET,
        old_wrong=bool(
            finite and (result.upper - best) / result.upper <= TARGET and (optimum - best) / optimum > TARGET
        ),
    )
    return row


def probes(spec, rep: int, restarts: int) -> float | None:
    """What `certify` adds as a known plan: the best of a few local-search restarts (0: none)."""
    if not restarts:
        return None
    found = probe(spec, make_oracle(spec, "analytic"), spec.objective, 1000 + rep, restarts)
    return None if found is None else found[0]


def local_pool(spec, size: int, seed: int, workers: int) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        service = SamplingService(
            spec,
            Path(tmp) / "s.jsonl",
            seed=seed,
            oracle_kind="analytic",
            design="local-optima",
            workers=workers,
            max_samples=size,
        )
        service.start_fresh()
        service.ensure(size)
        return service.values(size)


def summary(rows: list[dict]) -> str:
    widths = [r["width"] for r in rows if r["width"] is not None]
    errors = [r["error"] for r in rows if r["error"] is not None]

    def med(xs: list[float], sign: str = "") -> str:
        if not xs:
            return "-"
        value = statistics.median(xs)
        return "inf" if not np.isfinite(value) else f"{value:{sign}.2%}"

    return (
        f"{sum(r['covered'] for r in rows)}/{len(rows)} | {med(widths)} | {med(errors, '+')} | "
        f"{sum(r['wrong'] for r in rows)} | {sum(r['old_wrong'] for r in rows)} | "
        f"{sum(r['found'] for r in rows)}/{len(rows)} | "
        f"{sum(r['verdict'] == 'certified' for r in rows)}"
    )


def width_time(spec, design: str, cap: int, workers: int) -> str:
    """Seconds (and samples) until (upper - lower) / estimate <= 1%, checked every 200 samples."""
    begin = time.perf_counter()
    model = BatchModel(spec)
    values = np.empty(0)
    with tempfile.TemporaryDirectory() as tmp:
        service = SamplingService(
            spec,
            Path(tmp) / "s.jsonl",
            seed=99,
            oracle_kind="analytic",
            design=design,
            workers=workers,
            max_samples=cap,
        )
        service.start_fresh()
        n = 0
        while n < cap:
            n += 200
            if design == "random":  # the same stream, evaluated in a batch (the service measures plan by plan)
                batch = np.array([service.contexts(i) for i in range(n - 200, n)])
                values = np.concatenate([values, model.evaluate(batch).values(spec.objective)])
            else:
                service.ensure(n)
                values = service.values(n)
            try:
                result = evt.analyze(values, gof_bootstrap=0)
            except evt.EVTError:
                continue
            if np.isfinite(result.upper) and (result.upper - result.lower) <= 0.01 * abs(result.estimate):
                return f"{time.perf_counter() - begin:.1f} s ({n} samples)"
    return f"not reached in {cap} samples ({time.perf_counter() - begin:.1f} s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--pool", type=int, default=2000)
    parser.add_argument("--sizes", default="200,1000,5000")
    parser.add_argument("--specs", default=",".join(SPECS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--probes", type=int, default=PROBES, help="local-search restarts as a known plan (0: none)")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--width-spec", default="t2-ipfwd-l1-x8")
    parser.add_argument("--width-cap", type=int, default=4000, help="0: skip the timing")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    print(
        "| spec | design | n | covered | median width | median error | wrong certified | old rule: wrong |"
        " optimum found | certified |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.specs.split(","):
        spec = load_spec(name)
        proof = closed_form_bound(spec, time_limit=args.time_limit, workers=args.workers)
        if proof.proven_optimum is None:
            print(f"| {name} | (no proven optimum within {args.time_limit:g} s: skipped) |")
            continue
        model = BatchModel(spec)
        optimum = float(model.evaluate(np.array([proof.contexts])).values(spec.objective)[0])
        pool = local_pool(spec, args.pool, seed=1, workers=args.workers)
        for n in sizes:
            rows = [
                judge(
                    model.evaluate(uniform_plans(spec, n, np.random.default_rng([7, rep]))).values(spec.objective),
                    optimum,
                    probes(spec, rep, args.probes),
                )
                for rep in range(args.reps)
            ]
            print(f"| {name} | random | {n} | {summary(rows)} |", flush=True)
            chunks = min(args.reps, len(pool) // n)
            if chunks >= 2:
                rows = [judge(pool[k * n : (k + 1) * n], optimum, probes(spec, k, args.probes)) for k in range(chunks)]
                print(f"| {name} | local-optima | {n} | {summary(rows)} |", flush=True)
    if not args.width_cap:
        return
    spec = load_spec(args.width_spec)
    for design in ("random", "local-optima"):
        cap = args.width_cap if design == "local-optima" else 5 * args.width_cap
        print(
            f"time to a 1% interval on {args.width_spec}, {design}: {width_time(spec, design, cap, args.workers)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
