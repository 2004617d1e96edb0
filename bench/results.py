"""Results files: every figure BENCHMARKS.md shows comes from one of these.

A bench script measures, then calls `write_results(name, data, modules=[...])`, which writes
``bench/results/<name>.json``::

    {"name": ..., "command": "python bench/<script>.py ...", "commit": "<sha>[+dirty]",
     "machine": {"platform", "python", "cpus", "cpu_model"}, "load": [1, 5, 15 min],
     "date": "2026-11-26T13:00:00+00:00", "modules": {"solver/binding/cpsat.py": "<sha256>", ...},
     "data": {...}}

`modules` names the files (relative to the repository root) whose code the figures measure;
their hashes tell `bench/render.py --check` when a figure is older than the code it measures.
The script also defines ``render_markdown(data: dict) -> str``: the section of BENCHMARKS.md
between ``<!-- BEGIN <name> -->`` and ``<!-- END <name> -->`` is that function's output on the
results file's ``data``, so the text can only say what the file holds.

``TASKSOLVE_BENCH_RESULTS`` (an environment variable) sends the file to another folder: that is
how ``bench/render.py --rerun-quick`` re-runs a script without touching the recorded figures.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def commit_now() -> str:
    """HEAD's hash, with ``+dirty`` when tracked files have uncommitted changes."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("+dirty" if dirty else "")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    """What ran the figures: platform, Python, CPU count and model."""
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
    }


def module_hashes(modules: list[str]) -> dict[str, str]:
    """SHA-256 of each named file (relative to the repository root)."""
    return {m: hashlib.sha256((ROOT / m).read_bytes()).hexdigest() for m in sorted(modules)}


def results_dir() -> Path:
    """Where results files go: ``bench/results`` or ``$TASKSOLVE_BENCH_RESULTS``."""
    return Path(os.environ.get("TASKSOLVE_BENCH_RESULTS") or RESULTS)


def write_results(name: str, data: dict[str, Any], *, modules: list[str], command: str | None = None) -> Path:
    """Write ``bench/results/<name>.json`` (see the module docstring) and return its path."""
    # imported here: `bench/mutation.py`'s workers must not import tasksolve (their children import a copy)
    from tasksolve.specs.files import plain

    folder = results_dir()
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "name": name,
        "command": command or "python " + " ".join([os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]),
        "commit": commit_now(),
        "machine": machine(),
        "load": list(os.getloadavg()),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "modules": module_hashes(modules),
        "data": plain(data),
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(record, indent=2, allow_nan=False) + "\n")
    return path


def read_results(name: str) -> dict[str, Any]:
    """The results file ``bench/results/<name>.json`` as written by `write_results`."""
    return json.loads((RESULTS / f"{name}.json").read_text())


def markdown_table(columns: list[str], rows: list[list[Any]]) -> str:
    """A markdown table: a header row, a separator and one line per row (cells as str)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def run_measured(command: list[str], **options: Any) -> tuple[subprocess.CompletedProcess, float, float | None]:
    """`command` in a child process under ``/usr/bin/time``: the finished process (output
    captured as text; `options` go to `subprocess.run`), its wall time in seconds and its peak
    resident memory in MB (None when ``time`` wrote none)."""
    import tempfile
    import time

    with tempfile.NamedTemporaryFile("r", suffix=".time") as usage:
        start = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-o", usage.name, "-f", "%M", *command], capture_output=True, text=True, **options
        )
        wall = time.perf_counter() - start
        peak = usage.read().split()
    return done, wall, int(peak[-1]) / 1024 if peak and peak[-1].isdigit() else None
