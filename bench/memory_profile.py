"""Where the main job's memory goes: ``tasksolve run`` on `bench/scale_specs.py`'s servers, per phase.

For each size two fresh child processes run the job in process (``solver.cli.main(["run", SPEC,
"--time-limit", T, "--out", DIR, "--force", "--json"])``), each under ``/usr/bin/time``:

- a plain one: the peak resident memory of each phase of `solver.job.Job` (solve, certify,
  report; ``VmHWM``, reset at each phase's start through ``/proc/self/clear_refs``), the job's
  whole peak (the largest of the phases' and of ``/usr/bin/time``'s maximum RSS, which the
  resets make the peak since the last one) and the largest worker's (``RUSAGE_CHILDREN``);
- a traced one (``tracemalloc``, `--frames` frames a trace): each phase's peak of the memory
  Python allocated (numpy's arrays included, not scipy's, HiGHS's or OR-Tools' native memory)
  and what it held at the phase's end; a watcher thread takes a snapshot each time the traced
  memory grows 10% past the last one (polled every 0.2 s: the short peaks of one batch evaluation
  slip between polls, so memray's high-water mark is the better view of a peak's top lines); its
  top lines by line (``statistics('lineno')``), and by traceback with ``--frames`` above 1.
  Tracing slows the job (the time limit is the job's, so the traced run does less certify work)
  and adds its own memory: its RSS figures are not the job's.

A third child imports what the job imports (the CLI, the job, the DES, the certify run, numpy,
scipy, OR-Tools) and reports its resident memory: the floor every size stands on.

    nice python bench/memory_profile.py --sizes 64 128 256 512 --traced 256 512 --time-limit 60 > /tmp/mem.txt

``--traced`` names the sizes also run traced (default: all).  For the allocations alive at the
heap's high-water mark, native ones included, memray (not a dependency of the project):
``memray run --aggregate -o OUT.bin -m tasksolve run SPEC --time-limit 60 --out DIR --force``.

Prints a table (contexts, threads, threads x contexts, traced peak per phase, RSS per phase)
and the top lines per size; ``--json PATH`` writes every figure.  Worker processes (the
certify phase's samples) are not traced: their peak is the ``worker RSS`` column.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from scale_specs import server_data  # noqa: E402

MB = 2**20
PHASES = ("solve", "certify", "report")
IMPORTS = """
import numpy, scipy.optimize, scipy.sparse, simpy, ortools.sat.python.cp_model
import tasksolve.solver.cli, tasksolve.solver.job.job, tasksolve.solver.certify.run
import tasksolve.simulate.des, tasksolve.solver.binding.local_search, tasksolve.solver.report.html
"""


def _status(field: str) -> float:
    """A ``/proc/self/status`` memory field (``VmRSS``, ``VmHWM``) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _reset_hwm() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _short(filename: str) -> str:
    for root in (str(ROOT) + "/", "site-packages/", "lib/python3"):
        if root in filename:
            return filename.split(root, 1)[1]
    return filename


def _top(snapshot: tracemalloc.Snapshot, key: str, n: int) -> list[dict]:
    """The `n` largest lines (`key` ``lineno``) or tracebacks (``traceback``) of `snapshot`."""
    rows = []
    for stat in snapshot.statistics(key)[:n]:
        frames = [f"{_short(f.filename)}:{f.lineno}" for f in stat.traceback]
        if key == "traceback":  # the innermost frame and the project's own frames above it
            frames = frames[-1:] + [f for f in frames[:-1] if not f.startswith(("lib", "/"))][-4:]
        rows.append({"where": frames if key == "traceback" else frames[0], "mb": stat.size / MB, "count": stat.count})
    return rows


class Watch:
    """Per phase of the job: RSS peak, and with tracing the traced peak and the snapshot nearest to it."""

    def __init__(self, trace: bool, top: int) -> None:
        self.trace = trace
        self.top = top
        self.phase: str | None = None
        self.phases: dict[str, dict] = {}
        self._snap: tracemalloc.Snapshot | None = None
        self._snap_size = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def begin(self, phase: str) -> None:
        with self._lock:
            self.phase = phase
            _reset_hwm()
            if self.trace:
                tracemalloc.reset_peak()
                self._snap, self._snap_size = None, 0
            self.phases[phase] = {"rss_start_mb": _status("VmRSS"), "start": time.perf_counter()}

    def end(self, phase: str) -> None:
        with self._lock:
            row = self.phases[phase]
            row["seconds"] = time.perf_counter() - row.pop("start")
            row["rss_peak_mb"] = _status("VmHWM")
            row["rss_end_mb"] = _status("VmRSS")
            if self.trace:
                current, peak = tracemalloc.get_traced_memory()
                row.update(traced_peak_mb=peak / MB, traced_end_mb=current / MB)
                end = _snapshot()
                row["top_end"] = _top(end, "lineno", self.top)
                if self._snap is not None:
                    row["snapshot_mb"] = self._snap_size / MB
                    row["top_peak"] = _top(self._snap, "lineno", self.top)
                    if tracemalloc.get_traceback_limit() > 1:
                        row["top_peak_tracebacks"] = _top(self._snap, "traceback", 5)
            self.phase = None

    def watch(self, every: float = 0.2) -> None:
        """The watcher thread: a snapshot each time the phase's traced memory grows 10% past the last."""
        while not self._stop.wait(every):
            with self._lock:
                if not self.trace or self.phase is None:
                    continue
                current = tracemalloc.get_traced_memory()[0]
                if current > 1.1 * self._snap_size and current > 8 * MB:
                    self._snap, self._snap_size = _snapshot(), current

    def stop(self) -> None:
        self._stop.set()


def _snapshot() -> tracemalloc.Snapshot:
    return tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])


@contextmanager
def _watched_phases(watch: Watch):
    """`solver.job.Job._timed`, wrapped so that each phase also begins and ends in `watch`."""
    from tasksolve.solver.job.job import Job

    timed = Job._timed

    @contextmanager
    def wrapped(self, phase):
        watch.begin(phase)
        try:
            with timed(self, phase):
                yield
        finally:
            watch.end(phase)

    Job._timed = wrapped
    try:
        yield
    finally:
        Job._timed = timed


def run_one(contexts: int, time_limit: float, trace: bool, frames: int, top: int, out: Path) -> None:
    """The child: one job on the server of `contexts` contexts, its per-phase figures into `out`."""
    if trace:
        tracemalloc.start(frames)
    from tasksolve.solver.cli import main

    watch = Watch(trace, top)
    threading.Thread(target=watch.watch, daemon=True).start()
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / f"server-{contexts}.yaml"
        spec.write_text(yaml.safe_dump(server_data(contexts), sort_keys=False))
        argv = ["run", str(spec), "--time-limit", str(time_limit), "--out", f"{folder}/out", "--force", "--json"]
        with _watched_phases(watch):
            code = main(argv)
        certificate = json.loads((Path(folder) / "out" / "certificate.json").read_text())
    watch.stop()
    result = {
        "contexts": contexts,
        "exit": code,
        "verdict": certificate.get("verdict"),
        "phases": watch.phases,
        "rss_self_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_worker_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }
    if trace:
        result["traced_peak_mb"] = max(p.get("traced_peak_mb", 0) for p in watch.phases.values())
    out.write_text(json.dumps(result, indent=1))


def _child(args: list[str], folder: Path, name: str) -> dict:
    """A child of this script under ``/usr/bin/time``: its result file plus its whole peak RSS."""
    out, usage = folder / f"{name}.json", folder / f"{name}.time"
    command = ["/usr/bin/time", "-o", str(usage), "-f", "%M %e", sys.executable, __file__, *args, "--result", str(out)]
    load = os.getloadavg()[0]
    done = subprocess.run(command, capture_output=True, text=True)
    peak, wall = usage.read_text().split()[-2:]
    if not out.exists():
        return {"error": done.stderr.strip().splitlines()[-5:], "load": load}
    result = json.loads(out.read_text())
    # the phases' resets of VmHWM reset the kernel's peak that ``time`` reads too: the job's peak is
    # the largest of the phases' and of what ``time`` saw after the last reset
    phases = [p["rss_peak_mb"] for p in result.get("phases", {}).values()]
    return {**result, "rss_job_mb": max([int(peak) / 1024, *phases]), "wall_s": float(wall), "load": load}


def imports_rss(out: Path) -> None:
    """The child that only imports what the job imports: its resident memory."""
    started = time.perf_counter()
    exec(IMPORTS)
    out.write_text(
        json.dumps({"rss_mb": _status("VmRSS"), "hwm_mb": _status("VmHWM"), "seconds": time.perf_counter() - started})
    )


def table(rows: list[dict]) -> str:
    """The growth table, one line per size (traced and plain runs of the same size side by side)."""
    lines = [
        "| contexts | threads | threads x contexts | traced peak solve / certify / report (MB) "
        "| RSS peak solve / certify / report (MB) | job RSS (MB) | worker RSS (MB) | wall plain / traced (s) | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for plain, traced in rows:
        n = plain["contexts"]
        threads = 3 * n // 4

        def phases(run, key):
            return " / ".join(f"{run['phases'].get(p, {}).get(key, 0):.0f}" for p in PHASES)

        lines.append(
            f"| {n} | {threads} | {threads * n} | {phases(traced, 'traced_peak_mb')} | {phases(plain, 'rss_peak_mb')} "
            f"| {plain['rss_job_mb']:.0f} | {plain['rss_worker_mb']:.0f} | {plain['wall_s']:.0f} / {traced['wall_s']:.0f} "
            f"| {plain['verdict']} |"
        )
    return "\n".join(lines)


def tops(traced: dict, phases=("solve", "certify")) -> str:
    """The traced run's top lines at each phase's peak snapshot and end."""
    lines = [f"## {traced['contexts']} contexts (load {traced['load']:.1f})"]
    for phase in phases:
        row = traced["phases"].get(phase, {})
        lines.append(
            f"{phase}: traced peak {row.get('traced_peak_mb', 0):.0f} MB, largest snapshot "
            f"{row.get('snapshot_mb', 0):.0f} MB, at the end {row.get('traced_end_mb', 0):.0f} MB"
        )
        for key in ("top_peak", "top_end"):
            lines.append(f"  {key}:")
            lines += [f"    {r['mb']:7.1f} MB {r['count']:>8} {r['where']}" for r in row.get(key, [])]
        lines.append("  top_peak_tracebacks:")
        for r in row.get("top_peak_tracebacks", []):
            lines.append(f"    {r['mb']:7.1f} MB {r['count']:>8} " + " <- ".join(r["where"]))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 512])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--frames", type=int, default=1, help="frames a trace (tracemalloc.start; more is slower)")
    parser.add_argument("--traced", type=int, nargs="*", help="the sizes also run traced (default: every size)")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--imports", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.imports:
        return imports_rss(args.result)
    if args.one:
        return run_one(args.one, args.time_limit, args.trace, args.frames, args.top, args.result)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        base = _child(["--imports"], folder, "imports")
        print(f"imports: {base['rss_mb']:.0f} MB RSS ({base['seconds']:.1f} s)", flush=True)
        rows = []
        for n in args.sizes:
            common = ["--one", str(n), "--time-limit", str(args.time_limit), "--top", str(args.top)]
            plain = _child(common, folder, f"plain-{n}")
            traced = plain
            if args.traced is None or n in args.traced:
                traced = _child([*common, "--trace", "--frames", str(args.frames)], folder, f"traced-{n}")
            for run in (plain, traced):
                if "error" in run:
                    sys.exit(f"{n} contexts: {run['error']}")
            rows.append((plain, traced))
            print(tops(traced) if traced is not plain else table(rows[-1:]), flush=True)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps({"imports": base, "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
