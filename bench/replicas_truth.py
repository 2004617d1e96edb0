"""Workers that share packets against queueing theory (docs/design.md, "Replicas in binding specs").

R -> W (2000 cycles, `replicas: N`) -> T on the UltraSPARC T2 (1.4 GHz):

* saturated, CP-SAT's best plan: the workers are the bottleneck, so the throughput is
  ``N * clock / w`` with ``w`` a worker's cycles per packet (2000 plus its incoming message), on
  the closed form and on the simulation;
* Poisson arrivals at 2 Mpps, each thread on its own core (R and T of 1 cycle): random splitting
  (``dispatch: hash``) makes every worker an M/D/1 queue at ``lambda / N`` (Pollaczek-Khinchine:
  mean wait ``rho S / (2 (1 - rho))``); round robin feeds it Erlang-N gaps, whose mean wait comes
  from Lindley's recursion on 400,000 draws (numpy, independent of the simulation).

    python bench/replicas_truth.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import markdown_table, write_results

CLOCK = 1.4e9
RATE = 2.0e6
MODULES = [
    "simulate/messages.py",
    "simulate/des/dispatch.py",
    "simulate/des/dynamics.py",
    "simulate/analytic.py",
    "solver/binding/model.py",
]


def spec_text(replicas: int, dispatch: str, rx: int, tx: int) -> str:
    return f"""
tasksolve: 1
name: rx-workers
topology: ultrasparc-t2
applications:
  fwd:
    tasks:
      R: {{cycles: {rx}}}
      W: {{cycles: 2000, replicas: {replicas}, dispatch: {dispatch}}}
      T: {{cycles: {tx}}}
    edges:
      - {{from: R, to: W, bytes: 64B}}
      - {{from: W, to: T, bytes: 64B}}
workload:
  - {{app: fwd, instances: 1}}
"""


def saturated(replicas: int) -> dict:
    from tasksolve.simulate.analytic import evaluate
    from tasksolve.simulate.des import simulate
    from tasksolve.solver.binding.cpsat import solve_binding
    from tasksolve.solver.binding.problem import BindingProblem
    from tasksolve.specs import Plan, load_spec_text

    spec = load_spec_text(spec_text(replicas, "round_robin", 200, 200))
    best = solve_binding(BindingProblem(spec), time_limit=30, seed=0).best
    plan = Plan.from_contexts(spec, best.contexts)
    closed, simulated = evaluate(spec, plan), simulate(spec, plan, seed=1)
    work = max(row["work"] for row in closed.threads if ".W" in row["thread"])
    return {
        "replicas": replicas,
        "status": best.status,
        "theory": replicas * CLOCK / work,
        "worker_cycles": work,
        "closed": closed.throughput,
        "simulated": simulated.throughput,
        "half_width": simulated.half_width,
    }


def lindley(gaps: np.ndarray, service: float) -> float:
    wait, total = 0.0, 0.0
    for gap in gaps:
        wait = max(0.0, wait + service - gap)
        total += wait
    return total / len(gaps)


def waits(replicas: int, dispatch: str) -> dict:
    from tasksolve.simulate.des import simulate
    from tasksolve.specs import Plan, load_spec_text

    spec = load_spec_text(spec_text(replicas, dispatch, 1, 1))
    plan = Plan.from_contexts(spec, [8 * k for k in range(replicas + 2)])
    m = simulate(spec, plan, seed=3, arrival="poisson", rate=RATE, queue_capacity=None, packets=120_000)
    workers = [row for row in m.threads if ".W" in row["thread"]]
    service = workers[0]["work"] / CLOCK
    if dispatch == "hash":
        rho = RATE / replicas * service
        theory = rho * service / (2 * (1 - rho))
    else:
        gaps = np.random.default_rng(7).exponential(1 / RATE, (400_000, replicas)).sum(axis=1)
        theory = lindley(gaps, service)
    measured = [row["queue_wait"] for row in workers]
    return {
        "replicas": replicas,
        "dispatch": dispatch,
        "rho": RATE / replicas * service,
        "theory_us": theory * 1e6,
        "measured_us": float(np.mean(measured)) * 1e6,
        "spread_us": [min(measured) * 1e6, max(measured) * 1e6],
        "throughput": m.throughput,
    }


def render_markdown(data: dict) -> str:
    rows = [
        [
            r["replicas"],
            r["status"],
            f"{r['worker_cycles']:.0f}",
            f"{r['theory'] / 1e6:.4f}",
            f"{r['closed'] / 1e6:.4f} ({100 * (r['closed'] / r['theory'] - 1):+.2f}%)",
            f"{r['simulated'] / 1e6:.4f} ± {r['half_width'] / 1e6:.4f} ({100 * (r['simulated'] / r['theory'] - 1):+.2f}%)",
        ]
        for r in data["saturated"]
    ]
    first = markdown_table(
        ["workers", "CP-SAT", "worker cycles", "N x clock / cycles (Mpps)", "closed form", "simulation"], rows
    )
    rows = [
        [
            r["replicas"],
            r["dispatch"],
            f"{r['rho']:.3f}",
            f"{r['theory_us']:.3f}",
            f"{r['measured_us']:.3f} ({100 * (r['measured_us'] / r['theory_us'] - 1):+.1f}%)",
            f"{r['spread_us'][0]:.3f}-{r['spread_us'][1]:.3f}",
        ]
        for r in data["waits"]
    ]
    second = markdown_table(
        ["workers", "dispatch", "rho", "theory (us)", "simulated mean wait (us)", "range over workers"], rows
    )
    return (
        f"`{data['command']}` ({data['seconds']:.0f} s wall). Saturated, CP-SAT's best plan:\n\n{first}\n\n"
        "Poisson arrivals at 2 Mpps, each thread on its own core: a worker's mean wait (hash: M/D/1 at "
        "lambda / N; round robin: Erlang-N/D/1 by Lindley's recursion):\n\n"
        f"{second}\n"
    )


def main() -> None:
    start = time.perf_counter()
    data = {
        "saturated": [saturated(n) for n in (2, 4, 6)],
        "waits": [waits(n, d) for n in (4, 6) for d in ("hash", "round_robin")],
        "command": "python bench/replicas_truth.py",
    }
    data["seconds"] = time.perf_counter() - start
    write_results("replicas-truth", data, modules=MODULES)
    print(render_markdown(data))


if __name__ == "__main__":
    main()
