"""Start-up time of the command line (issue 22): ``tasksolve --version``, ``--help`` and
``validate t2-ipfwd-intadd-x2``, each a fresh process, median of N runs.

Goals: ``--version`` and ``--help`` under 0.3 s, ``validate`` of an example under 1 s.  The
machine is shared: the load average before and after the runs is recorded with the figures, the
spread (lowest, highest) is given beside each median wall time, and the processor time the child
used (user + system, from ``getrusage``) is given too -- it depends far less on the other jobs
than the wall time does.  A bare ``python -c pass`` is timed the same way: the floor no command can
go under.  The runs are interleaved (one of each case per round), so a change of load hits every
case alike.

With ``--baseline-site DIR`` the same commands are also run on an older tasksolve installed into
DIR (``pip install --no-deps --target DIR <a checkout of the older commit>``), found first on
``PYTHONPATH``; both are then started as ``python -m tasksolve``.

    python bench/startup.py [--repeats 10] [--baseline-site DIR --baseline-label 98082d3]

Writes ``bench/results/startup.json`` (bench/results.py); `render_markdown` gives the section of
BENCHMARKS.md between ``<!-- BEGIN startup -->`` and ``<!-- END startup -->``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

from results import write_results  # bench/results.py: the script's folder is first on sys.path

GOALS = {"--version": 0.3, "--help": 0.3, "validate t2-ipfwd-intadd-x2": 1.0}
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


def _run(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child processor seconds) of one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cases(baseline_site: str | None, label: str) -> dict[tuple[str, str], tuple[list[str], dict[str, str]]]:
    """(version, command) -> (argv, environment)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cases = {("", "python -c pass"): ([sys.executable, "-c", "pass"], env)}
    versions = [("this commit", env)]
    if baseline_site is not None:
        versions.append((label, {**env, "PYTHONPATH": baseline_site}))
    for version, version_env in versions:
        for name in GOALS:
            cases[(version, f"tasksolve {name}")] = ([sys.executable, "-m", "tasksolve", *name.split()], version_env)
    return cases


def measure(repeats: int, baseline_site: str | None = None, label: str = "baseline") -> dict:
    """Median, lowest and highest wall time and the median processor time of each case."""
    cases = _cases(baseline_site, label)
    load_before = list(os.getloadavg())
    for command, env in cases.values():  # warm the file cache; not counted
        _run(command, env)
    walls: dict = {key: [] for key in cases}
    cpus: dict = {key: [] for key in cases}
    for _ in range(repeats):
        for key, (command, env) in cases.items():
            wall, cpu = _run(command, env)
            walls[key].append(wall)
            cpus[key].append(cpu)
    rows = [
        {
            "version": version,
            "command": name,
            "median_s": statistics.median(walls[(version, name)]),
            "min_s": min(walls[(version, name)]),
            "max_s": max(walls[(version, name)]),
            "cpu_median_s": statistics.median(cpus[(version, name)]),
            "goal_s": GOALS.get(name.removeprefix("tasksolve ")),
        }
        for version, name in cases
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
        f"Fresh processes, median of {data['repeats']} runs each (interleaved); wall time with its "
        f"range, and the processor time (user + system) the process used. Load average (1, 5, 15 "
        f"min) {_load(data['load_before'])} before and {_load(data['load_after'])} after, on "
        f"{data['cpus']} cores.",
        "",
        "| code | command | wall, median | wall, range | processor | goal (wall) | met |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in data["rows"]:
        goal = row["goal_s"]
        met = "--" if goal is None or row["version"] != "this commit" else "yes" if row["median_s"] < goal else "no"
        lines.append(
            f"| {row['version'] or '--'} | `{row['command']}` | {row['median_s']:.3f} s | "
            f"{row['min_s']:.3f} - {row['max_s']:.3f} s | {row['cpu_median_s']:.3f} s | "
            f"{'--' if goal is None else f'< {goal:g} s'} | {met} |"
        )
    return "\n".join(lines) + "\n"


def _load(values: list[float]) -> str:
    return "/".join(f"{v:.2f}" for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--baseline-site", help="a folder holding an older tasksolve (pip install --target)")
    parser.add_argument("--baseline-label", default="baseline", help="how the table names the older code")
    args = parser.parse_args()
    data = measure(args.repeats, args.baseline_site, args.baseline_label)
    path = write_results("startup", data, modules=MODULES)
    print(render_markdown(data))
    print(f"written: {path}")


if __name__ == "__main__":
    main()
