"""`tasksolve topology probe` on this machine: runtime, the costs it writes, stability, and its
latencies against an independent compiled reference (bench/probe_reference.c); the Python
fallback against the same reference (how coarse it is); and the analysis of the real 16-core
KVM guest's saved matrices (tests/data/realhost).

The script waits (up to --wait-s) for the 1-minute load average to fall below --max-load, then
interleaves --runs probe runs (compiled helper, --repeats repetitions each), reference runs and
fallback runs pair by pair, and reports medians.

    python bench/probe.py --runs 5 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.results import write_results  # noqa: E402
from tasksolve.simulate.probe.analysis import analyse  # noqa: E402
from tasksolve.simulate.probe.measure import probe  # noqa: E402
from tasksolve.simulate.probe.report import read_csv  # noqa: E402
from tasksolve.specs.loader import load_topology  # noqa: E402

REAL = ROOT / "tests" / "data" / "realhost"
TOLERANCE = 0.20


def wait_for_quiet(max_load: float, wait_s: float) -> list[float]:
    deadline = time.time() + wait_s
    while os.getloadavg()[0] >= max_load and time.time() < deadline:
        time.sleep(5)
    return [round(x, 2) for x in os.getloadavg()]


def build_reference(folder: Path) -> Path:
    out = folder / "probe_reference"
    subprocess.run(["cc", "-O2", "-pthread", "-o", str(out), str(ROOT / "bench" / "probe_reference.c")], check=True)
    return out


def reference_latency(binary: Path, a: int, b: int, *mode: str) -> float:
    argv = [str(binary), str(a), str(b), "2000", "9", *mode]
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    return statistics.median(float(x) for x in out.stdout.split())


def measure_here(runs: int, repeats: int, cpus: list[int]) -> dict:
    topology = load_topology("host")
    with tempfile.TemporaryDirectory() as folder:
        reference = build_reference(Path(folder))
        pairs = [(a, b) for i, a in enumerate(cpus) for b in cpus[i + 1 :]]
        ref = {p: [] for p in pairs}
        probe_lat = {p: [] for p in pairs}
        python_lat = {p: [] for p in pairs}
        ring = {p: [] for p in pairs}
        seconds, costs, stable = [], [], []
        for run in range(runs):
            for p in pairs:
                ref[p].append(reference_latency(reference, *p))
                ring[p].append(reference_latency(reference, *p, "two-lines"))
            data = probe(cpus, repeats, "compiled", seed=run)
            seconds.append(data.seconds)
            analysis = analyse(data.repetitions, topology)
            costs.append({c.level: c.cycles for c in analysis.costs})
            stable.append(analysis.stable_share)
            for p in pairs:
                probe_lat[p] += [rep[p].latency_ns for rep in data.repetitions]
            fallback = probe(cpus, 1, "python", seed=run)
            for p in pairs:
                python_lat[p].append(fallback.repetitions[0][p].latency_ns)
                ref[p].append(reference_latency(reference, *p))
    rows = []
    for p in pairs:
        r, c, py = statistics.median(ref[p]), statistics.median(probe_lat[p]), statistics.median(python_lat[p])
        rows.append(
            {
                "pair": list(p),
                "reference_ns": round(r, 1),
                "reference_range_ns": [round(min(ref[p]), 1), round(max(ref[p]), 1)],
                "probe_ns": round(c, 1),
                "probe_range_ns": [round(min(probe_lat[p]), 1), round(max(probe_lat[p]), 1)],
                "probe_over_reference": round(c / r, 3),
                "within_20pct": abs(c / r - 1) <= TOLERANCE,
                "two_lines_ns": round(statistics.median(ring[p]), 1),
                "python_ns": round(py, 1),
                "python_over_reference": round(py / r, 2),
            }
        )
    levels = sorted({k for c in costs for k in c})
    return {
        "cpus": cpus,
        "runs": runs,
        "repeats": repeats,
        "runtime_s_median": round(statistics.median(seconds), 2),
        "runtime_s": [round(s, 2) for s in seconds],
        "costs_cycles": {k: [c.get(k) for c in costs] for k in levels},
        "stable_share": stable,
        "pairs": rows,
    }


def synthetic_tree(cpus: list[int]) -> dict:
    """One probe of this machine analysed against a synthetic sysfs tree (tests/data/sysfs/vm-2core)."""
    from tasksolve.specs.importers.sysfs import import_sysfs

    topology = import_sysfs(ROOT / "tests" / "data" / "sysfs" / "vm-2core").topology
    data = probe(cpus, 3, "compiled", seed=99)
    analysis = analyse(data.repetitions, topology)
    return {
        "tree": "tests/data/sysfs/vm-2core",
        "seconds": round(data.seconds, 2),
        "notes": data.notes,
        "costs": [c.to_dict() for c in analysis.costs],
        "findings": analysis.findings,
    }


def real_guest() -> dict:
    topology = load_topology(REAL / "topology-host.yaml")
    runs = [read_csv(REAL / f"latency-interference-run{i}.csv") for i in (1, 2)]
    began = time.perf_counter()
    analysis = analyse(runs, topology)
    return {
        "analysis_s": round(time.perf_counter() - began, 3),
        "costs": [c.to_dict() for c in analysis.costs],
        "unstable": [r.pair for r in analysis.unstable],
        "stable_share": analysis.stable_share,
        "findings": analysis.findings,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-load", type=float, default=1.0)
    parser.add_argument("--wait-s", type=float, default=300)
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    load_before = wait_for_quiet(args.max_load, args.wait_s)
    data = {"load_before": load_before, "here": measure_here(args.runs, args.repeats, cpus)}
    data["load_after"] = [round(x, 2) for x in os.getloadavg()]
    data["synthetic_tree"] = synthetic_tree(cpus)
    data["real_guest"] = real_guest()
    write_results(
        "probe",
        data,
        modules=[
            "simulate/probe/pingpong.c",
            "simulate/probe/measure.py",
            "simulate/probe/analysis.py",
            "bench/probe.py",
        ],
    )
    print(render_markdown(data))


def render_markdown(data: dict) -> str:
    here = data["here"]
    lines = [
        f"This machine ({len(here['cpus'])} CPUs, load average {data['load_before'][0]} before, "
        f"{data['load_after'][0]} after): {here['runs']} probe runs of {here['repeats']} repetitions, "
        f"interleaved with the reference (bench/probe_reference.c: compare-and-swap on one line; and its "
        f"two-line mode) and the Python fallback; "
        f"medians over all runs, ranges in brackets.",
        "",
        "| pair | reference, CAS (ns) | probe, compiled (ns) | probe / reference | within 20% | two lines, ring pattern (ns) "
        "| Python fallback (ns) | fallback / reference |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in here["pairs"]:
        lo, hi = row["reference_range_ns"]
        plo, phi = row["probe_range_ns"]
        lines.append(
            f"| {row['pair'][0]}-{row['pair'][1]} | {row['reference_ns']} [{lo}-{hi}] | {row['probe_ns']} [{plo}-{phi}] | "
            f"{row['probe_over_reference']} | {'yes' if row['within_20pct'] else 'no'} | {row['two_lines_ns']} | "
            f"{row['python_ns']} | "
            f"{row['python_over_reference']}x |"
        )
    costs = "; ".join(f"{k}: {', '.join(str(v) for v in vs)} cycles" for k, vs in here["costs_cycles"].items())
    lines += [
        "",
        f"Probe runtime (compiled, {here['repeats']} repetitions): median {here['runtime_s_median']} s "
        f"({', '.join(map(str, here['runtime_s']))}). Costs written per run: {costs}. "
        f"Share of pairs keeping their latency class across repetitions, per run: {here['stable_share']}.",
        "",
    ]
    tree = data["synthetic_tree"]
    lines += [
        f"The same probe against the synthetic sysfs tree `{tree['tree']}` ({tree['seconds']} s, 3 repetitions): "
        + "; ".join(f"`{c['level']}` {c['latency_ns']} ns = {c['cycles']} cycles" for c in tree["costs"])
        + ". Notes: "
        + " ".join(tree["notes"][1:] or ["none"])
        + " Findings: "
        + " ".join(tree["findings"]),
        "",
    ]
    real = data["real_guest"]
    cost = real["costs"][0]
    lines += [
        f"The real 16-core KVM guest's two saved runs (tests/data/realhost, analysis {real['analysis_s']} s): "
        f"`{cost['level']}` costs {cost['latency_ns']} ns = {cost['cycles']} cycles at 2.1 GHz "
        f"(range {cost['low_ns']}-{cost['high_ns']} ns over {cost['pairs']} regular pairs, {cost['left_out']} left out); "
        f"{len(real['unstable'])} unstable pairs {real['unstable']}; {real['stable_share']:.1%} of pairs stable.",
        "",
        *[f"- {text}" for text in real["findings"]],
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
