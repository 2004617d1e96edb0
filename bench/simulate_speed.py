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
from pathlib import Path

import numpy as np
from results import markdown_table, write_results

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


MODULES_BATCH = ["simulate/analytic.py", "simulate/model.py", "simulate/locks.py"]
MODULES_DES = ["simulate/oracle.py", "simulate/measurement.py", "simulate/model.py", "simulate/service.py"] + [
    f"simulate/des/{p.name}" for p in sorted((Path(__file__).resolve().parents[1] / "simulate" / "des").glob("*.py"))
]
MODULES_SAMPLERS = ["solver/binding/samplers.py"]
BATCH_SPECS = ("t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8", "t2-ipfwd-intadd-x2", "t2-ipfwd-x20")
DES_SPECS = ("t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8", "t2-asplos12-mix", "t2-ipfwd-intadd-x2", "t2-ipfwd-x20")
SAMPLER_SPECS = ("t2-ipfwd-l1-x8", "t2-ipfwd-x20", "t2-constrained")


def _command(data: dict) -> str:
    a = data["args"]
    return (
        f"`python bench/simulate_speed.py --seed {a['seed']} --batch-plans {a['batch_plans']} "
        f"--repeats {a['repeats']} --des-plans {a['des_plans']}`"
    )


def render_batch(data: dict) -> str:
    rows = [
        [r["spec"], r["threads"], f"{r['median']:,.0f}", f"{r['best']:,.0f}", f"{r['worst']:,.0f}"]
        for r in data["rows"]
    ]
    return (
        f"{_command(data)}: `BatchModel.evaluate` on {data['args']['batch_plans']:,} uniformly drawn plans per "
        f"repeat, all figures per plan (total, per-instance and minimum throughput, latencies), "
        f"{data['args']['repeats']} repeats; load average {data['load']:.1f} at the start:\n\n"
        + markdown_table(["spec", "threads", "median plans/s", "best plans/s", "worst plans/s"], rows)
    )


def render_des(data: dict) -> str:
    rows = [
        [
            r["spec"],
            r["threads"],
            f"{r['wall_median']:.1f}",
            f"{r['cpu_median']:.1f}",
            f"{r['cpu_p90']:.1f}",
            f"{r['cpu_mean']:.1f}",
            f"{r['packets_median']:.0f}",
            f"{100 * r['max_half_width']:.2f}%",
        ]
        for r in data["rows"]
    ]
    columns = [
        "spec",
        "threads",
        "median ms/plan (wall)",
        "median ms/plan (CPU)",
        "p90 ms/plan (CPU)",
        "mean ms/plan (CPU)",
        "median packets",
        "max rel. half-width",
    ]
    return (
        f"{_command(data)}: `SimulationOracle.evaluate`, the spec's settings (saturated sources, deterministic "
        f"service, queues of 16, 1% precision), {data['args']['des_plans']} uniformly drawn plans per spec; "
        f"load average {data['load']:.1f} at the start:\n\n" + markdown_table(columns, rows)
    )


def render_samplers(data: dict) -> str:
    rows = [[r["spec"], r["threads"], f"{r['uniform']:,.0f}", f"{r['balanced']:,.0f}"] for r in data["rows"]]
    return "Samplers (100,000 plans):\n\n" + markdown_table(
        ["spec", "threads", "uniform plans/s", "balanced plans/s"], rows
    )


RENDERERS = {"oracle-batch-speed": render_batch, "simulation-speed": render_des, "sampler-speed": render_samplers}


def render_markdown(data: dict) -> str:
    return RENDERERS[data["section"]](data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-plans", type=int, default=1_000_000, help="plans per closed-form repeat")
    parser.add_argument("--repeats", type=int, default=7, help="closed-form repeats")
    parser.add_argument("--des-plans", type=int, default=60, help="plans simulated per spec")
    args = parser.parse_args(argv)
    common = {"args": vars(args), "python": platform.python_version(), "numpy": np.__version__}
    batch = []
    for name in BATCH_SPECS:
        load = os.getloadavg()[0]
        rates = batch_speed(name, args.batch_plans, args.repeats, args.seed)
        row = {"spec": name, "threads": len(load_spec(name).threads), "median": statistics.median(rates)}
        batch.append({**row, "best": max(rates), "worst": min(rates), "load": load})
        print(batch[-1], flush=True)
    data = {**common, "section": "oracle-batch-speed", "rows": batch, "load": batch[0]["load"]}
    write_results("oracle-batch-speed", data, modules=MODULES_BATCH)
    des = []
    load = os.getloadavg()[0]
    for name in DES_SPECS:
        times, cpu, packets, widths = des_speed(name, args.des_plans, args.seed)
        des.append(
            {
                "spec": name,
                "threads": len(load_spec(name).threads),
                "wall_median": statistics.median(times),
                "cpu_median": statistics.median(cpu),
                "cpu_p90": float(np.percentile(cpu, 90)),
                "cpu_mean": statistics.mean(cpu),
                "packets_median": statistics.median(packets),
                "max_half_width": max(widths),
            }
        )
        print(des[-1], flush=True)
    write_results(
        "simulation-speed", {**common, "section": "simulation-speed", "rows": des, "load": load}, modules=MODULES_DES
    )
    samplers = []
    for name in SAMPLER_SPECS:
        uniform, balanced = sampler_speed(name, 100_000, args.seed)
        samplers.append(
            {"spec": name, "threads": len(load_spec(name).threads), "uniform": uniform, "balanced": balanced}
        )
    write_results("sampler-speed", {**common, "section": "sampler-speed", "rows": samplers}, modules=MODULES_SAMPLERS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
