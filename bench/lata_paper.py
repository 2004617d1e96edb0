"""LATA's evaluation (Kuang & Bhuyan, DAC'10 §5) on a LATA-like graph: the shape of Figure 14
(throughput and latency against the latency bound L0, from 75% to 100% of the sequential time)
and of the latency reduction against Random (§5.1-5.2, Figures 10-13), on the closed form.

Two settings, as in the paper's two groups (§4): without an instruction cache (LATA against
Parallel and List), and with a 4k-instruction i-cache per context (LATA against Greedy, Random and
Bipar, the network-processor systems; `topology.icache: 4096`, the tasks' `code_size`).  LATA is
reported twice: the paper's run alone (Eq. 2 estimate, L0 as given: ``lata-paper``) and with our
stated additions (``lata``, `solver.pipeline.lata`).  Random is the best of its draws for seeds
0..R-1 (median reported).  Prints Markdown and writes ``bench/results/lata-paper.json``; ``--jsonl`` appends one line per (setting, L0, method).

    python bench/lata_paper.py --random-seeds 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import yaml
from results import write_results

from tasksolve.solver.pipeline import baselines
from tasksolve.solver.pipeline.lata import lata
from tasksolve.solver.pipeline.problem import PipelineProblem
from tasksolve.specs import dump_spec, load_spec, load_spec_text

BOUNDS = ["75%", "80%", "85%", "90%", "95%", "100%"]
GROUPS = {
    "no i-cache (Parallel group)": (None, ["lata-paper", "lata", "parallel", "list"]),
    "4k i-cache (NP group)": (4096, ["lata-paper", "lata", "greedy", "random", "bipar"]),
}


def spec_with_icache(name: str, icache: int | None):
    spec = load_spec(name)
    if icache is None:
        return spec
    data = yaml.safe_load(dump_spec(spec))
    data["topology"]["icache"] = icache
    return load_spec_text(yaml.safe_dump(data, sort_keys=False), file=f"{name}+icache")


def run(problem: PipelineProblem, method: str, seeds: int) -> dict:
    t0 = time.perf_counter()
    if method == "lata-paper":
        results = [lata(problem, profiles=["eq2"], tighten=0)]
    elif method == "lata":
        results = [lata(problem)]
    elif method == "random":
        results = [baselines.random_pipeline(problem, seed) for seed in range(seeds)]
    else:
        results = [baselines.METHODS[method](problem)]
    evs = [r.evaluation for r in results]
    return {
        "method": method,
        "throughput_mpps": statistics.median(ev.throughput for ev in evs) / 1e6,
        "latency_cycles": statistics.median(ev.latency_cycles for ev in evs),
        "meets": all(ev.feasible for ev in evs),
        "threads": statistics.median(ev.threads for ev in evs),
        "seconds": (time.perf_counter() - t0) / len(results),
    }


MODULES = [
    "solver/pipeline/lata.py",
    "solver/pipeline/lata_premap.py",
    "solver/pipeline/baselines.py",
    "solver/pipeline/problem.py",
    "solver/pipeline/evaluation.py",
    "solver/pipeline/mapping.py",
    "solver/pipeline/sync.py",
    "specs/examples/xeon-lata-dag.yaml",
]
IGNORE = ["*.seconds"]  # not shown: the heuristics take milliseconds on a shared machine


def measure(spec_name: str, seeds: int) -> dict:
    """Every (group, L0, method) run: the data of the results file."""
    groups = []
    for title, (icache, methods) in GROUPS.items():
        spec = spec_with_icache(spec_name, icache)
        rows = {}
        for bound in BOUNDS:
            problem = PipelineProblem.from_spec(spec, latency_max=bound)
            rows[bound] = {m: run(problem, m, seeds) for m in methods}
        groups.append({"title": title, "icache": icache, "methods": methods, "rows": rows})
    return {"spec": spec_name, "random_seeds": seeds, "bounds": BOUNDS, "groups": groups}


def reduction_vs_random(group: dict, bound: str) -> dict[str, float]:
    """Latency reduction (%) of each method against Random at `bound` (the group must hold Random)."""
    at = group["rows"][bound]
    ref = at["random"]["latency_cycles"]
    return {m: 100 * (1 - at[m]["latency_cycles"] / ref) for m in group["methods"] if m != "random"}


def render_group(data: dict, group: dict) -> list[str]:
    bounds, methods = data["bounds"], group["methods"]
    lines = [f"#### {data['spec']}, {group['title']}: throughput (Mpps) / latency (cycles) by L0", ""]
    lines.append("| L0 | " + " | ".join(methods) + " |")
    lines.append("|---|" + "---|" * len(methods))
    for bound in bounds:
        cells = []
        for m in methods:
            r = group["rows"][bound][m]
            cells.append(f"{r['throughput_mpps']:.3f} / {r['latency_cycles']:.0f}" + ("" if r["meets"] else "*"))
        lines.append(f"| {bound} | " + " | ".join(cells) + " |")
    lines += ["", "\\* misses L0 (closed-form latency after mapping).", ""]
    if "random" in methods:
        cut = reduction_vs_random(group, bounds[0])
        lines += [
            f"Latency reduction against Random at L0 = {bounds[0]}: "
            + ", ".join(f"{m} {v:.1f}%" for m, v in cut.items()),
            "",
        ]
    for m in methods:
        series = [group["rows"][b][m]["throughput_mpps"] for b in bounds]
        rising = all(a <= b + 1e-9 for a, b in zip(series, series[1:]))
        lines.append(
            f"- {m}: throughput {'non-decreasing' if rising else 'NOT monotone'} in L0; {series[0]:.3f} -> {series[-1]:.3f} Mpps"
        )
    return lines + [""]


def render_markdown(data: dict) -> str:
    lines = [
        f"Command: `python bench/lata_paper.py --random-seeds {data['random_seeds']}` (closed form only, "
        "deterministic: re-run by `bench/render.py --rerun-quick`).",
        "",
    ]
    for group in data["groups"]:
        lines += render_group(data, group)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="xeon-lata-dag")
    parser.add_argument("--random-seeds", type=int, default=5)
    parser.add_argument("--jsonl", help="append one JSON line per run here")
    args = parser.parse_args(argv)
    data = measure(args.spec, args.random_seeds)
    if args.jsonl:
        with open(args.jsonl, "a") as log:
            for group in data["groups"]:
                for bound, row in group["rows"].items():
                    for r in row.values():
                        log.write(
                            json.dumps({"spec": args.spec, "icache": group["icache"], "bound": bound, **r}) + "\n"
                        )
    print(render_markdown(data))
    write_results("lata-paper", data, modules=MODULES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
