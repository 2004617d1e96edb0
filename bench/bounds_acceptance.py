"""Bounds beside the plans they are reported with, on the cases where they were once false.

Cases (issue "Bounds that are never false"):

* ``epyc-dpdk``: a 2-socket EPYC-like server (2 sockets x 12 core complexes x 8 cores x 2 SMT =
  384 contexts), 4 instances of RX -> 4 workers visited by a quarter of the packets each
  (``frequency: 0.25``) -> TX: the configuration LP read 7.887 Mpps beside a 23.41 Mpps plan;
* ``t2-rss-half``: the T2, 2 instances of RX -> 2 workers at ``frequency: 0.5`` -> TX (8.94
  against 17.14 Mpps);
* ``capacity-<c>``: a 4-context machine whose core resource has capacity c from 1e-3 down to
  1e-300 (CP-SAT's "proven optimum" was 19.05 kpps at every c <= 1e-3).

Per case: CP-SAT's plan (`solve_binding`, deterministic time), its value measured with the
closed-form oracle (what ``tasksolve simulate --oracle analytic`` prints), and every bound --
CP-SAT's, the configuration LP's, the level LP's -- with ``bound / plan - 1`` (never negative) or
the reason it refused.

    nice python bench/bounds_acceptance.py
    python bench/bounds_acceptance.py --render
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.results import read_results, write_results
from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.binding.configuration_lp import configuration_bound
from tasksolve.solver.binding.configurations import NotApplicable
from tasksolve.solver.binding.cpsat import solve_binding
from tasksolve.solver.binding.level_lp import level_bound
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import Plan, load_spec_text

NAME = "bounds-acceptance"
MODULES = [
    "solver/binding/configurations.py",
    "solver/binding/configuration_lp.py",
    "solver/binding/level_lp.py",
    "solver/binding/model.py",
    "solver/binding/cpsat.py",
    "simulate/analytic.py",
]

EPYC = """
name: EPYC-like 2S
clock: 2.4GHz
levels: [{name: socket, count: 2}, {name: ccx, count: 12}, {name: core, count: 8}, {name: smt, count: 2}]
resources:
  - {name: ports, level: core, capacity: 1.0}
  - {name: l3, level: ccx, capacity: 1.0}
  - {name: mem, level: socket, capacity: 1.0}
communication: {core: 10, ccx: 40, socket: 120, machine: 250}
"""


def _rss_spec(name: str, topology: str, workers: int, frequency: float, instances: int, demand: str) -> str:
    lines = ["tasksolve: 1", f"name: {name}", f"topology: {topology}", "applications:", "  app:", "    tasks:"]
    lines.append(f"      R: {{cycles: 180, demand: {demand}}}")
    for k in range(workers):
        lines.append(f"      W{k}: {{cycles: {round(500 / frequency)}, frequency: {frequency}, demand: {demand}}}")
    lines.append(f"      T: {{cycles: 170, demand: {demand}}}")
    edges = [f"{{from: R, to: W{k}, bytes: 64B}}" for k in range(workers)]
    edges += [f"{{from: W{k}, to: T, bytes: 64B}}" for k in range(workers)]
    lines.append("    edges: [" + ", ".join(edges) + "]")
    lines.append(f"workload: [{{app: app, instances: {instances}}}]")
    return "\n".join(lines) + "\n"


CAPACITY = """
tasksolve: 1
name: capacity-{c}
topology:
  name: small
  clock: 1GHz
  levels: [{{name: core, count: 2}}, {{name: strand, count: 2}}]
  resources:
    - {{name: a, level: core, capacity: {c}}}
    - {{name: b, level: machine, capacity: 2.0}}
  communication: {{core: 3, machine: 40}}
applications:
  app:
    tasks:
      X: {{cycles: 300, demand: {{a: 0.5, b: 0.4}}}}
      Y: {{cycles: 200, demand: {{a: 0.4}}}}
    edges: [{{from: X, to: Y, bytes: 64B}}]
workload: [{{app: app, instances: 2}}]
"""


def cases() -> dict[str, str]:
    epyc = "\n  ".join(EPYC.strip().splitlines())
    found = {
        "epyc-dpdk": _rss_spec("epyc-dpdk", "\n  " + epyc, 4, 0.25, 4, "{ports: 0.6, l3: 0.1, mem: 0.05}"),
        "t2-rss-half": _rss_spec("t2-rss-half", "ultrasparc-t2", 2, 0.5, 2, "{ifu: 0.5, l1: 0.1}"),
    }
    for c in ["1e-3", "1e-4", "1e-12", "1e-100", "1e-300"]:
        found[f"capacity-{c}"] = CAPACITY.format(c=c)
    return found


def _bound(compute) -> dict:
    begin = time.perf_counter()
    try:
        value = compute()
    except NotApplicable as exc:
        return {"value": None, "why": str(exc), "seconds": time.perf_counter() - begin}
    return {"value": value, "why": None, "seconds": time.perf_counter() - begin}


def one_case(name: str, text: str, seconds: float) -> dict:
    spec = load_spec_text(text, f"<{name}>")
    problem = BindingProblem(spec)
    result = solve_binding(
        problem, time_limit=4 * seconds, workers=1, seed=0, deterministic_time=seconds, configuration=False
    )
    best = result.best
    plan = Plan.from_contexts(spec, best.contexts)
    measured = make_oracle(spec, "analytic").evaluate(plan).throughput
    cpsat_refused = next((n for n in result.notes if n.startswith("no CP-SAT run")), None)
    if cpsat_refused is None and not math.isfinite(best.bound):
        cpsat_refused = f"CP-SAT proved no finite bound in its time ({result.status})"
    bounds = {
        "CP-SAT": {"value": None, "why": cpsat_refused, "seconds": result.wall_time}
        if cpsat_refused
        else {"value": best.bound, "why": None, "seconds": result.wall_time},
        "configuration LP": _bound(lambda: configuration_bound(problem).value),
        "level LP": _bound(lambda: level_bound(problem).value),
    }
    return {
        "case": name,
        "threads": problem.n_threads,
        "contexts": spec.topology.n_contexts,
        "status": result.status,
        "found_by": best.found_by,
        "plan": measured,
        "bounds": bounds,
        "holds": all(b["value"] is None or b["value"] >= measured * (1 - 1e-9) for b in bounds.values()),
    }


def _pps(value: float) -> str:
    for unit, scale in (("Mpps", 1e6), ("kpps", 1e3), ("pps", 1.0)):
        if value >= scale:
            return f"{value / scale:.4g} {unit}"
    return f"{value:.4g} pps"


def render_markdown(data: dict) -> str:
    lines = [
        "Plan: CP-SAT's (or, where its model cannot hold the spec, the local search's) plan, measured"
        " with the closed-form oracle. Each bound: its value and `bound / plan - 1` (a bound below"
        " its plan would be negative), or why it claims nothing.",
        "",
        "| case | threads / contexts | plan (status) | CP-SAT bound | configuration LP | level LP | every bound >= plan |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in data["rows"]:
        cells = []
        for key in ("CP-SAT", "configuration LP", "level LP"):
            b = r["bounds"][key]
            if b["value"] is None:
                cells.append(f"none: {b['why']}")
            else:
                cells.append(f"{_pps(b['value'])} ({b['value'] / r['plan'] - 1:+.2e})")
        lines.append(
            f"| {r['case']} | {r['threads']} / {r['contexts']} | {_pps(r['plan'])} ({r['status']}, "
            f"{r['found_by']}) | {' | '.join(cells)} | {'yes' if r['holds'] else '**no**'} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="CP-SAT's deterministic time per case")
    parser.add_argument("--render", action="store_true", help="print the section of the results file and stop")
    args = parser.parse_args()
    if args.render:
        print(render_markdown(read_results(NAME)["data"]))
        return
    rows = []
    for name, text in cases().items():
        row = one_case(name, text, args.seconds)
        rows.append(row)
        print(f"{name}: plan {_pps(row['plan'])}, holds {row['holds']}", flush=True)
    write_results(NAME, {"rows": rows, "seconds": args.seconds}, modules=MODULES)


if __name__ == "__main__":
    main()
