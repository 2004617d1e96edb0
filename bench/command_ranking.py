"""Does the command oracle rank placements as the hardware does?  And what does one run cost?

The spec of `tests/simulate/test_command.py`: two spinning workers (`tests/data/workload.py`) on
a topology of 2 cores x 2 strands whose strands of one core are pinned to one OS CPU
(``--per-cpu 2``).  Every distinct placement class (same core: the workers share one CPU; other
core: one CPU each) is measured `--rounds` times, interleaved, by the command oracle (median of
`--repeats` runs of `--seconds` each) and once by the simulation; the script prints the median
rate per class, their ratio, and the wall time per command measurement.

    python bench/command_ranking.py --rounds 5 --repeats 3 --seconds 0.3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tasksolve.simulate.oracle import make_oracle  # noqa: E402
from tasksolve.specs import Plan  # noqa: E402
from tasksolve.specs.loader import load_spec_text  # noqa: E402
from tests.simulate.test_command import TOPOLOGY, WORKLOAD  # noqa: E402

PLANS = {"same core (one CPU)": [0, 1], "two cores (two CPUs)": [0, 2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=0.3)
    args = parser.parse_args()
    argv = [sys.executable, str(WORKLOAD), "--contexts", "{cpus}", "--per-cpu", "2", "--seconds", str(args.seconds)]
    spec = load_spec_text(
        TOPOLOGY
        + "oracle: "
        + json.dumps({"kind": "command", "command": argv, "metric": {"json": "rate"}, "repeats": args.repeats})
        + "\n",
        "bench.yaml",
    )
    command, des = make_oracle(spec, "command"), make_oracle(spec, "des")
    rates: dict[str, list[float]] = {name: [] for name in PLANS}
    walls: list[float] = []
    for _ in range(args.rounds):
        for name, contexts in PLANS.items():
            began = time.perf_counter()
            rates[name].append(command.evaluate(Plan.from_contexts(spec, contexts)).throughput)
            walls.append(time.perf_counter() - began)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end")
    for name, contexts in PLANS.items():
        simulated = des.evaluate(Plan.from_contexts(spec, contexts)).throughput
        print(
            f"{name:22s} command median {statistics.median(rates[name]):12.0f} it/s "
            f"(min {min(rates[name]):.0f}, max {max(rates[name]):.0f})   des {simulated:12.0f} pkt/s"
        )
    together, spread = (statistics.median(rates[name]) for name in PLANS)
    wins = sum(s > t for t, s in zip(*rates.values()))
    print(f"spread / together: {spread / together:.2f} (median); spread won {wins} of {args.rounds} rounds")
    print(
        f"wall time per command measurement ({args.repeats} runs of {args.seconds:g} s): "
        f"median {statistics.median(walls):.2f} s"
    )


if __name__ == "__main__":
    main()
