"""`tasksolve pipeline SPEC` as a user runs it (spec defaults: L0, CP-SAT time limit, the
comparison with LATA and the baselines, each plan simulated), its comparison table as a results
file, and LATA's latency against Random's (DAC'10 §5.2's headline: 36.5% lower on average).

    python bench/pipeline_summary.py xeon-lata-dag
"""

from __future__ import annotations

import argparse

from npire_runs import tasksolve
from results import markdown_table, write_results

MODULES = [
    "solver/pipeline/lata.py",
    "solver/pipeline/lata_premap.py",
    "solver/pipeline/baselines.py",
    "solver/pipeline/cpsat.py",
    "solver/pipeline/compare.py",
    "solver/pipeline/problem.py",
    "solver/pipeline/evaluation.py",
]


def render_markdown(data: dict) -> str:
    rows = [
        [
            r["method"],
            r["status"],
            f"{r['latency_cycles']:.0f}",
            f"{r['mpps']:.3f}",
            "-" if r["sim_mpps"] is None else f"{r['sim_mpps']:.3f}",
            "yes" if r["meets_bound"] else "no",
            r["threads"],
        ]
        for r in data["rows"]
    ]
    by = {r["method"]: r for r in data["rows"]}
    cut = 100 * (1 - by["lata"]["latency_cycles"] / by["random"]["latency_cycles"])
    return (
        f"`python bench/pipeline_summary.py {data['spec']}` (`tasksolve pipeline {data['spec']} --json --seed 0 "
        f"--workers 1`: L0 = {data['latency_max_cycles']:.0f} cycles, {data['contexts']} contexts; closed-form "
        "latency and throughput, the simulated throughput with a saturated source):\n\n"
        + markdown_table(["method", "status", "latency cycles", "Mpps", "sim Mpps", "meets L0", "threads"], rows)
        + f"\n\nLATA's latency against Random's: {cut:.1f}% lower (Random keeps its highest-throughput draw)."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", nargs="?", default="xeon-lata-dag")
    args = parser.parse_args()
    out = tasksolve("pipeline", args.spec, "--seed", "0", "--workers", "1")
    rows = [
        {
            "method": r["method"],
            "status": r["status"],
            "latency_cycles": r["latency_cycles"],
            "mpps": r["throughput"] / 1e6,
            "sim_mpps": (r.get("simulated") or {}).get("throughput", 0) / 1e6 if r.get("simulated") else None,
            "meets_bound": r["meets_bound"],
            "threads": r["threads"],
        }
        for r in out["comparison"]
    ]
    data = {
        "spec": args.spec,
        "contexts": out["contexts"],
        "latency_max_cycles": out["latency_max_cycles"],
        "rows": rows,
    }
    write_results(f"pipeline-{args.spec}", data, modules=MODULES)
    print(render_markdown(data))


if __name__ == "__main__":
    main()
