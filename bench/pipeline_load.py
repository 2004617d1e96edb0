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
import os
import time

import numpy as np
from results import markdown_table, write_results

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
    bound = problem.seconds(problem.latency_max) * 1e6 if problem.latency_max else None
    rows = []
    for name, result in results.items():
        plan = to_plan(problem, result.candidate, name)
        saturated = oracle.evaluate(plan, seed=0)
        t0 = time.perf_counter()
        fixed = latency_at_load(spec, plan, args.load, arrival="deterministic", seed=0)
        t1 = time.perf_counter()
        poisson = latency_at_load(spec, plan, args.load, arrival="poisson", seed=0)
        t2 = time.perf_counter()
        rows.append(
            {
                "method": name,
                "model_us": result.evaluation.latency_seconds * 1e6,
                "saturated_us": saturated.latency_mean * 1e6,
                "max_rate_mpps": fixed.max_rate.rate / 1e6,
                "constant_us": fixed.measurement.latency_mean * 1e6,
                "runs": len(fixed.max_rate.runs) + 2,
                "constant_s": t1 - t0,
                "poisson_us": poisson.measurement.latency_mean * 1e6,
                "poisson_s": t2 - t1,
            }
        )
        print(rows[-1], flush=True)
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
    sampling = {
        "draws": draws,
        "valid": valid,
        "ms_per_valid": (t1 - t0) / valid * 1e3,
        "moves": float(np.mean(steps)),
        "ms_per_climb": (t2 - t1) / valid * 1e3,
    }
    data = {"spec": args.spec, "load": args.load, "samples": args.samples, "time_limit": args.time_limit}
    data.update({"bound_us": bound, "rows": rows, "sampling": sampling, "load_average": os.getloadavg()[0]})
    write_results("pipeline-load", data, modules=MODULES)
    print(render_markdown(data))


MODULES = [
    "simulate/experiments.py",
    "solver/pipeline/compare.py",
    "solver/pipeline/sampling.py",
    "solver/pipeline/local_search.py",
    "specs/examples/xeon-lata-dag.yaml",
]
COLUMNS = ["method", "model us", "saturated us", "max rate Mpps", "at load, constant us", "runs", "s"]
COLUMNS += ["at load, Poisson us", "s"]


def render_markdown(data: dict) -> str:
    rows = [
        [
            r["method"],
            f"{r['model_us']:.3f}",
            f"{r['saturated_us']:.3f}",
            f"{r['max_rate_mpps']:.4f}",
            f"{r['constant_us']:.3f}",
            r["runs"],
            f"{r['constant_s']:.2f}",
            f"{r['poisson_us']:.3f}",
            f"{r['poisson_s']:.2f}",
        ]
        for r in data["rows"]
    ]
    smp = data["sampling"]
    return (
        f"`python bench/pipeline_load.py --load {data['load']:g} --samples {data['samples']}` (`{data['spec']}`, L0 = "
        f"{data['bound_us']:.3f} us, CP-SAT {data['time_limit']:g} s; load average {data['load_average']:.1f} at the "
        "end):\n\n"
        + markdown_table(COLUMNS, rows)
        + f"\n\nRandom pipeline plans: {smp['draws']} draws for {smp['valid']} valid ({smp['valid'] / smp['draws']:.2%}), "
        f"{smp['ms_per_valid']:.1f} ms per valid plan; local search: {smp['moves']:.1f} improving moves on average, "
        f"{smp['ms_per_climb']:.1f} ms per climb."
    )


if __name__ == "__main__":
    main()
