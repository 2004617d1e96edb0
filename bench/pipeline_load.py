"""What latency at an offered load costs and shows, and what pipeline samples cost, on xeon-lata-dag.

For every pipeline method's plan: the saturated latency, the maximum rate (bisection), the
latency at `--load` of it with constant-rate and with Poisson arrivals, the simulations run and
the wall time of each.  Then the cost of one random pipeline plan (`solver.pipeline.sampling`:
draws per valid plan) and of one local optimum (`solver.pipeline.local_search.climb`).  Prints
Markdown.

    python bench/pipeline_load.py --load 0.9 --samples 200
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tasksolve.simulate.experiments import latency_at_load
from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.pipeline.compare import compare
from tasksolve.solver.pipeline.job import build_problem
from tasksolve.solver.pipeline.local_search import climb
from tasksolve.solver.pipeline.plans import to_plan
from tasksolve.solver.pipeline.sampling import draw_plan, is_valid
from tasksolve.specs import load_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="xeon-lata-dag")
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--time-limit", type=float, default=10.0)
    args = parser.parse_args()
    spec = load_spec(args.spec)
    problem = build_problem(spec)
    results = compare(
        problem, ["lata", "parallel", "list", "greedy", "random", "bipar", "cpsat"], time_limit=args.time_limit
    )
    oracle = make_oracle(spec, "des")
    bound = problem.seconds(problem.latency_max) * 1e6 if problem.latency_max else float("nan")
    print(f"### {args.spec}: latency at {args.load:.0%} of the maximum rate (bound {bound:.3f} us)\n")
    print(
        "| method | model us | saturated us | max rate Mpps | at load, constant us | runs | s | at load, Poisson us | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, result in results.items():
        plan = to_plan(problem, result.candidate, name)
        saturated = oracle.evaluate(plan, seed=0)
        t0 = time.perf_counter()
        fixed = latency_at_load(spec, plan, args.load, arrival="deterministic", seed=0)
        t1 = time.perf_counter()
        poisson = latency_at_load(spec, plan, args.load, arrival="poisson", seed=0)
        t2 = time.perf_counter()
        print(
            f"| {name} | {result.evaluation.latency_seconds * 1e6:.3f} | {saturated.latency_mean * 1e6:.3f} | "
            f"{fixed.max_rate.rate / 1e6:.4f} | {fixed.measurement.latency_mean * 1e6:.3f} | "
            f"{len(fixed.max_rate.runs) + 2} | {t1 - t0:.2f} | {poisson.measurement.latency_mean * 1e6:.3f} | {t2 - t1:.2f} |"
        )
    rng = np.random.default_rng(0)
    draws = valid = 0
    starts = []
    t0 = time.perf_counter()
    while valid < args.samples:
        cand = draw_plan(problem, rng)
        draws += 1
        if is_valid(problem, cand):
            valid += 1
            starts.append(cand)
    t1 = time.perf_counter()
    steps = [climb(problem, s)[2] for s in starts]
    t2 = time.perf_counter()
    print(
        f"\nRandom pipeline plans: {draws} draws for {valid} valid ({valid / draws:.2%}), "
        f"{(t1 - t0) / valid * 1e3:.1f} ms per valid plan; local search: {np.mean(steps):.1f} improving moves "
        f"on average, {(t2 - t1) / valid * 1e3:.1f} ms per climb."
    )


if __name__ == "__main__":
    main()
