"""Speed of the cost oracles: closed-form batch plans/s and simulation time per plan.

* Closed form: `simulate.analytic.BatchModel.evaluate` on uniformly drawn plans (all figures:
  total, per-instance and minimum throughput, latencies), repeated; plans/s per repeat.
* Simulation: `SimulationOracle.evaluate` (one process, the spec's settings: saturated sources,
  deterministic service, 1% precision) on uniformly drawn plans; milliseconds per plan.
* Samplers: uniform and balanced plans/s.

Timings are wall-clock on whatever machine runs it; the medians are the figures to quote.

    python bench/simulate_speed.py --seed 0
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

from tasksolve.simulate import BatchModel, SimulationOracle
from tasksolve.solver.binding.samplers import balanced_plans, uniform_plans
from tasksolve.specs import load_spec


def batch_speed(name: str, plans: int, repeats: int, seed: int) -> list[float]:
    spec = load_spec(name)
    model = BatchModel(spec)
    rows = uniform_plans(spec, plans, seed)
    model.evaluate(rows[:1000])  # warm caches
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        model.evaluate(rows)
        rates.append(plans / (time.perf_counter() - start))
    return rates


def des_speed(name: str, plans: int, seed: int) -> tuple[list[float], list[float], list[int], list[float]]:
    spec = load_spec(name)
    oracle = SimulationOracle(spec)
    rows = uniform_plans(spec, plans + 1, seed)
    oracle.evaluate(rows[-1])  # imports, first-call costs
    times, cpu, packets, widths = [], [], [], []
    for row in rows[:-1]:
        start, start_cpu = time.perf_counter(), time.process_time()
        m = oracle.evaluate(row)
        times.append(1e3 * (time.perf_counter() - start))
        cpu.append(1e3 * (time.process_time() - start_cpu))
        packets.append(m.packets)
        widths.append(m.half_width / m.throughput)
    return times, cpu, packets, widths


def sampler_speed(name: str, plans: int, seed: int) -> tuple[float, float]:
    spec = load_spec(name)
    start = time.perf_counter()
    uniform_plans(spec, plans, seed)
    uniform = plans / (time.perf_counter() - start)
    start = time.perf_counter()
    balanced_plans(spec, plans, seed)
    return uniform, plans / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-plans", type=int, default=1_000_000, help="plans per closed-form repeat")
    parser.add_argument("--repeats", type=int, default=7, help="closed-form repeats")
    parser.add_argument("--des-plans", type=int, default=60, help="plans simulated per spec")
    args = parser.parse_args(argv)
    print("## Cost-oracle speed\n")
    print(
        f"`python bench/simulate_speed.py --seed {args.seed} --batch-plans {args.batch_plans} "
        f"--repeats {args.repeats} --des-plans {args.des_plans}`  \n"
        f"Python {platform.python_version()}, NumPy {np.__version__}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs (shared, noisy); one process.\n"
    )
    print("### Closed form, batch (`BatchModel.evaluate`, all figures per plan)\n")
    print("| spec | threads | plans per repeat | median plans/s | best plans/s | worst plans/s |")
    print("|---|---|---|---|---|---|")
    for name in ("t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8", "t2-ipfwd-intadd-x2", "t2-ipfwd-x20"):
        rates = batch_speed(name, args.batch_plans, args.repeats, args.seed)
        threads = len(load_spec(name).threads)
        print(
            f"| {name} | {threads} | {args.batch_plans} | {statistics.median(rates):,.0f} | "
            f"{max(rates):,.0f} | {min(rates):,.0f} |"
        )
    print("\n### Simulation (SimPy, 1% precision, saturated, deterministic service)\n")
    print(
        "| spec | threads | plans | median ms/plan (wall) | median ms/plan (CPU) | p90 ms/plan (CPU) | "
        "mean ms/plan (CPU) | median packets | max rel. half-width |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in ("t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8", "t2-asplos12-mix", "t2-ipfwd-intadd-x2", "t2-ipfwd-x20"):
        times, cpu, packets, widths = des_speed(name, args.des_plans, args.seed)
        threads = len(load_spec(name).threads)
        print(
            f"| {name} | {threads} | {len(times)} | {statistics.median(times):.1f} | {statistics.median(cpu):.1f} | "
            f"{np.percentile(cpu, 90):.1f} | {statistics.mean(cpu):.1f} | "
            f"{statistics.median(packets):.0f} | {100 * max(widths):.2f}% |"
        )
    print("\n### Samplers\n")
    print("| spec | threads | uniform plans/s | balanced plans/s |")
    print("|---|---|---|---|")
    for name in ("t2-ipfwd-l1-x8", "t2-ipfwd-x20", "t2-constrained"):
        uniform, balanced = sampler_speed(name, 100_000, args.seed)
        print(f"| {name} | {len(load_spec(name).threads)} | {uniform:,.0f} | {balanced:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
