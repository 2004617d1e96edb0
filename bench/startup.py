"""Start-up time of the command line (issue 22): ``tasksolve --version``, ``--help`` and
``validate t2-ipfwd-intadd-x2``, each the wall time of a fresh process, median of N runs.

Goals: ``--version`` and ``--help`` under 0.3 s, ``validate`` of an example under 1 s.  The
machine is shared: the load average before and after the runs is recorded with the figures, and
the spread (lowest, highest) is given beside each median.  A bare ``python -c pass`` is timed
the same way as the floor no command can go under.

    python bench/startup.py [--repeats 10]

Writes ``bench/results/startup.json`` (bench/results.py); `render_markdown` gives the section of
BENCHMARKS.md between ``<!-- BEGIN startup -->`` and ``<!-- END startup -->``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from results import write_results  # bench/results.py: the script's folder is first on sys.path

GOALS = {"--version": 0.3, "--help": 0.3, "validate t2-ipfwd-intadd-x2": 1.0}
_SCRIPT = Path(sys.executable).with_name("tasksolve")  # the console script a user runs
_PROGRAM = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "tasksolve"]
CASES = {"python -c pass": [sys.executable, "-c", "pass"]}
CASES.update({f"tasksolve {name}": [*_PROGRAM, *name.split()] for name in GOALS})
MODULES = [
    "api/__init__.py",
    "solver/cli/__init__.py",
    "solver/cli/options.py",
    "solver/cli/common.py",
    "specs/__init__.py",
    "simulate/__init__.py",
    "evt/__init__.py",
    "solver/__init__.py",
]


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def measure(repeats: int) -> dict:
    """Median, lowest and highest wall time of each case, the runs interleaved (one of each case
    per round) so that a change of the machine's load hits every case alike."""
    load_before = list(os.getloadavg())
    for command in CASES.values():  # warm the file cache; not counted
        _wall(command)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(repeats):
        for name, command in CASES.items():
            times[name].append(_wall(command))
    rows = [
        {
            "command": name,
            "median_s": statistics.median(values),
            "min_s": min(values),
            "max_s": max(values),
            "goal_s": GOALS.get(name.removeprefix("tasksolve ")),
        }
        for name, values in times.items()
    ]
    return {
        "repeats": repeats,
        "load_before": load_before,
        "load_after": list(os.getloadavg()),
        "cpus": os.cpu_count(),
        "rows": rows,
    }


def render_markdown(data: dict) -> str:
    """The BENCHMARKS.md section for `data` (see the module docstring)."""
    lines = [
        f"Wall time of a fresh process, median of {data['repeats']} runs (lowest - highest), "
        f"load average (1, 5, 15 min) {_load(data['load_before'])} before and "
        f"{_load(data['load_after'])} after on {data['cpus']} cores.",
        "",
        "| command | median | range | goal | met |",
        "|---|---|---|---|---|",
    ]
    for row in data["rows"]:
        goal = row["goal_s"]
        met = "--" if goal is None else "yes" if row["median_s"] < goal else "no"
        lines.append(
            f"| `{row['command']}` | {row['median_s']:.3f} s | {row['min_s']:.3f} - {row['max_s']:.3f} s | "
            f"{'--' if goal is None else f'< {goal:g} s'} | {met} |"
        )
    return "\n".join(lines) + "\n"


def _load(values: list[float]) -> str:
    return "/".join(f"{v:.2f}" for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    data = measure(args.repeats)
    path = write_results("startup", data, modules=MODULES)
    print(render_markdown(data))
    print(f"written: {path}")


if __name__ == "__main__":
    main()
