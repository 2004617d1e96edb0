"""Adversarial run, more attacks: a frozen Dask worker, threads of one process, a spec's command
oracle (its folder, its opt-in, its figures), hostile hwloc XML and probe CSVs, and scale (a 60k-PU
host, 10,000 threads), a number of tries each, counting the tries where tasksolve misbehaved.

The helpers and the judgement are `bench/adversarial.py`'s (`run_cli`: no traceback, no internal
error; `expect`: the exit code and the words asked for); an attack here also records figures (a
wall time, a peak RSS from ``/usr/bin/time``), the median over its tries is shown beside its goal.

    python bench/adversarial_more.py --tries 3        # all attacks, 3 tries each
    python bench/adversarial_more.py --only dask,xml  # attacks whose name contains a word

Writes ``bench/results/adversarial-more.json`` (`bench/results.py`); `render_markdown` gives the
BENCHMARKS.md section between ``<!-- BEGIN adversarial-more -->`` and ``<!-- END adversarial-more -->``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import attack_cli
from bench.adversarial import ALLOW, EXAMPLE, ROOT, command_spec, expect, run_cli, spec
from bench.scale_specs import huge_data

Attack = Callable[[Path, dict], None]
ATTACKS: dict[str, Attack] = {}
GOALS: dict[str, tuple[list[str], str]] = {}  # attack -> (the figures shown, its goal in words)
CLI = [sys.executable, "-m", "tasksolve.solver.cli"]
GIB = 1024  # MiB


def attack(name: str, shown: tuple[str, ...] = (), goal: str = ""):
    """Register an attack; `shown` names the figures it records that the table shows beside `goal`."""

    def register(fn: Attack) -> Attack:
        ATTACKS[name] = fn
        GOALS[name] = (list(shown), goal)
        return fn

    return register


def timed(argv: list, cwd: Path = ROOT, timeout: float = 300) -> tuple[int, str, float, float]:
    """Exit code, stdout+stderr, wall seconds and peak RSS (MiB) of one CLI call in a child
    process, measured by ``/usr/bin/time``; a traceback in its output is a failure."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as usage:
        done = subprocess.run(
            ["/usr/bin/time", "-o", usage.name, "-f", "%e %M", *CLI, *map(str, argv)],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        wall, peak = usage.read().split()[-2:]
    text = done.stdout + done.stderr
    assert "Traceback" not in text and "internal error" not in text, text[-400:]
    return done.returncode, text, float(wall), int(peak) / 1024


def records(samples: Path, strict: bool = True) -> int:
    """Finished measurements in a samples file: every line must be whole JSON (`strict`), or the
    whole lines are counted (the file is being appended to)."""
    text = samples.read_text() if samples.exists() else ""
    if not strict:
        return max(0, text.count("\n") - 1)  # the header is the first line
    return sum("index" in json.loads(line) for line in text.splitlines())


# ------------------------------------------------------------------ Dask
@attack("frozen Dask worker (SIGSTOP), then SIGTERM of certify --scheduler", ("exit_s",), "ends < 6 s after SIGTERM")
def _frozen_worker(folder: Path, figures: dict) -> None:
    import distributed

    out = folder / "out"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            victim = next(iter(client.run(os.getpid).values()))
        argv = ["certify", EXAMPLE, "--out", out, "--oracle", "des", "--samples", "400", "--design", "random"]
        argv += ["--compare-samples", "0", "--scheduler", cluster.scheduler_address]
        run = subprocess.Popen(
            [*CLI, *map(str, argv)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        stopped = False
        try:
            deadline = time.monotonic() + 120
            while records(out / "samples.jsonl", False) < 5 and run.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert run.poll() is None, f"certify ended before the worker was stopped (exit {run.returncode})"
            os.kill(victim, signal.SIGSTOP)
            stopped = True
            time.sleep(1.0)
            kept = records(out / "samples.jsonl", False)
            clock = time.monotonic()
            run.send_signal(signal.SIGTERM)
            try:
                stdout, stderr = run.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                raise AssertionError("certify still running 60 s after SIGTERM") from None
            figures["exit_s"] = time.monotonic() - clock
        finally:
            if stopped:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(victim, signal.SIGCONT)
            if run.poll() is None:
                run.kill()
                run.wait()
    text = stdout + stderr
    assert "Traceback" not in text, text[-400:]
    assert run.returncode == 143 or (run.returncode == 3 and "worker" in text), f"exit {run.returncode}: {text[-300:]}"
    assert figures["exit_s"] < 6, f"ended {figures['exit_s']:.1f} s after SIGTERM"
    final = records(out / "samples.jsonl")
    assert final >= kept and f"{final} finished measurements" in text and "--resume" in text, text[-300:]


# ------------------------------------------------------------------ threads of one process
@attack("two threads: tasksolve.run into one output folder")
def _two_threads(folder: Path, figures: dict) -> None:
    import tasksolve

    path, out = spec(folder), folder / "out"
    results: dict = {}
    holding, go_on = threading.Event(), threading.Event()

    def hold(line: str) -> None:  # the first job's first phase: the folder is taken, the job waits
        holding.set()
        go_on.wait(60)

    def job(name: str, say) -> None:
        try:
            options = dict(oracle_kind="analytic", samples=40, design="random", workers=1, time_limit=2)
            results[name] = tasksolve.run(path, out, say=say, **options)
        except Exception as exc:
            results[name] = exc

    first = threading.Thread(target=job, args=("first", hold))
    first.start()
    try:
        assert holding.wait(60), "the first job never started"
        second = threading.Thread(target=job, args=("second", None))
        second.start()
        second.join(60)
    finally:
        go_on.set()
        first.join(120)
    refused = results.get("second")
    assert isinstance(refused, Exception), f"the second job was not refused: {refused!r}"
    assert "in use by another tasksolve job in this process" in str(refused) and str(out) in str(refused), refused
    assert not isinstance(results.get("first"), Exception), results.get("first")
    assert (out / "certificate.json").exists() and results["first"].verdict


@attack("tasksolve.run and certify from a non-main thread")
def _non_main_thread(folder: Path, figures: dict) -> None:
    import io
    import warnings

    import tasksolve

    path = spec(folder)
    (folder / "command").mkdir()
    program = command_spec(folder / "command", "print('{\"rate\": 1000.0}')")
    results: dict = {}

    def body() -> None:
        try:
            fast = dict(oracle_kind="analytic", samples=40, design="random", time_limit=2)
            results["analytic, 2 workers"] = tasksolve.run(path, folder / "o1", workers=2, **fast).verdict
            results["command oracle"] = tasksolve.certify(program, folder / "o2", samples=20, design="random").verdict
            des = dict(samples=20, design="random", workers=1, time_limit=2)
            results["simulation"] = tasksolve.run(path, folder / "o3", **des).verdict
        except BaseException as exc:
            results["error"] = "".join(traceback.format_exception(exc))

    err = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        thread = threading.Thread(target=body)
        thread.start()
        thread.join(300)
    said = err.getvalue() + "".join(str(w.message) for w in caught) + results.get("error", "")
    assert "main thread" not in said and "error" not in results, said[-400:]
    assert len(results) == 3, results


# ------------------------------------------------------------------ a spec's command oracle
PROGRAM = '#!/bin/sh\necho ran > "$(dirname "$0")/../{marker}"\necho \'{{"rate": {rate}}}\'\n'


@attack("relative oracle.command run from another folder")
def _relative_command(folder: Path, figures: dict) -> None:
    from tests.solver.test_failure_paths import SPEC as SPIN

    for where, marker, rate in (("specdir", "ran-spec", 1000.0), ("elsewhere", "ran-decoy", 5000.0)):
        (folder / where / "bin").mkdir(parents=True)
        program = folder / where / "bin" / "prog"
        program.write_text(PROGRAM.format(marker=marker, rate=rate))
        program.chmod(0o755)
    oracle = {"kind": "command", "command": ["./bin/prog", "{lcores}"], "metric": {"json": "rate"}, "repeats": 1}
    (folder / "specdir" / "spec.yaml").write_text(SPIN + "oracle: " + json.dumps({**oracle, "timeout": "5s"}) + "\n")
    argv = ["certify", "../specdir/spec.yaml", "--out", "out", "--samples", "20", "--design", "random", ALLOW]
    code, text, _, _ = timed(argv, cwd=folder / "elsewhere", timeout=120)
    expect(code, text, 0, "best found")
    assert (folder / "specdir" / "ran-spec").exists(), "the spec folder's program did not run"
    assert not (folder / "elsewhere" / "ran-decoy").exists(), "the program of the working directory ran"


@attack("spec's command oracle without --allow-commands (6 commands)")
def _no_opt_in(folder: Path, figures: dict) -> None:
    marker = folder / "marker"
    code = f"open({str(marker)!r}, 'w').write('ran'); print('{{\"rate\": 1000.0}}')"
    path = command_spec(folder, code)
    for argv in (
        ["run", path, "--out", folder / "o1", "--time-limit", "2"],
        ["certify", path, "--out", folder / "o2", "--samples", "20"],
        ["solve", path, "--time-limit", "2"],
        ["simulate", path],
        ["calibrate", path, "--output", folder / "calibrated.yaml"],
        ["pipeline", path],
    ):
        expect(*run_cli(*argv), 2, "oracle.kind is command", "--allow-commands")
        assert not marker.exists(), f"`{argv[0]}` ran the program"
    expect(*run_cli("certify", path, "--out", folder / "o3", "--samples", "20", "--design", "random", ALLOW), 0)
    assert marker.exists(), "with --allow-commands the program should have run (the marker is the test's)"


def _metric_spec(folder: Path, printed: str, metric: dict) -> Path:
    folder.mkdir()
    path = command_spec(folder, f"print({printed!r})")
    path.write_text(path.read_text().replace('{"json": "rate"}', json.dumps(metric)))
    return path


@attack('command metric "12.5abc" refused, "1.2e6" read whole')
def _metric_text(folder: Path, figures: dict) -> None:
    regex = {"regex": "rate=([-+0-9.eE]+)"}
    for i, (printed, metric, wanted) in enumerate(
        (
            ("rate=12.5abc", regex, "followed by 'abc'"),
            ('{"rate": "12.5abc"}', {"json": "rate"}, "not a number"),
            ("rate=1.2e6", regex, None),
            ('{"rate": 1.2e6}', {"json": "rate"}, None),
        )
    ):
        path, out = _metric_spec(folder / str(i), printed, metric), folder / str(i) / "out"
        code, text = run_cli("certify", path, "--out", out, "--samples", "20", "--design", "random", ALLOW)
        if wanted:
            expect(code, text, 3, "all 20 measurements failed", wanted)
        else:
            expect(code, text, 0)
            values = {json.loads(line).get("value") for line in (out / "samples.jsonl").read_text().splitlines()[1:]}
            assert values == {1.2e6}, values


# ------------------------------------------------------------------ hostile hwloc XML and probe CSVs
def _mask(cpus) -> str:
    """hwloc's bitmap of `cpus`: 32-bit words, most significant first, empty words left empty."""
    words: dict[int, int] = {}
    for cpu in cpus:
        words[cpu // 32] = words.get(cpu // 32, 0) | 1 << cpu % 32
    order = sorted(words, reverse=True)
    text = f"0x{words[order[0]]:08x}"
    for above, index in zip(order, order[1:]):
        text += "," * (above - index) + f"0x{words[index]:08x}"
    return text + "," * order[-1]


def lstopo_xml(path: Path, pus: int) -> None:
    """An hwloc 2 XML as ``lstopo --of xml`` writes it (a cpuset on every object): 2 packages of
    `pus / 4` cores of 2 PUs (Linux's numbering: core i's second PU is CPU i + pus / 2), an L2 per
    core, an L3 and a NUMA node per package."""
    cores = pus // 4
    with path.open("w") as xml:
        xml.write('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n')
        xml.write(f'<topology version="2.0">\n <object type="Machine" os_index="0" cpuset="{_mask(range(pus))}">\n')
        for package in range(2):
            mine = range(package * cores, (package + 1) * cores)
            sets = f'cpuset="{_mask([c for core in mine for c in (core, core + 2 * cores)])}"'
            xml.write(f'  <object type="Package" os_index="{package}" {sets}>\n')
            xml.write(f'   <object type="NUMANode" os_index="{package}" {sets} local_memory="68719476736"/>\n')
            xml.write(f'   <object type="L3Cache" {sets} cache_size="33554432" depth="3" cache_type="0">\n')
            for core in mine:
                pair = f'cpuset="{_mask((core, core + 2 * cores))}"'
                xml.write(f'    <object type="L2Cache" {pair} cache_size="1048576" depth="2" cache_type="0">\n')
                xml.write(f'     <object type="Core" os_index="{core}" {pair}>\n')
                for cpu in (core, core + 2 * cores):
                    xml.write(f'      <object type="PU" os_index="{cpu}" cpuset="{_mask([cpu])}"/>\n')
                xml.write("     </object>\n    </object>\n")
            xml.write("   </object>\n  </object>\n")
        xml.write(" </object>\n</topology>\n")


@attack("hwloc XML: two PU objects of one CPU")
def _duplicate_pus(folder: Path, figures: dict) -> None:
    path = folder / "dup.xml"
    lstopo_xml(path, 16)
    text = path.read_text().replace('os_index="9" cpuset="0x00000200"', 'os_index="1" cpuset="0x00000002"')
    path.write_text(text)
    first = text.index('"PU" os_index="1"')
    line = text[: text.index('"PU" os_index="1"', first + 1)].count("\n") + 1  # the second PU 1's
    expect(*run_cli("topology", "import", path), 2, f"dup.xml:{line}:", "a second PU object with os_index 1")


@attack("hwloc XML: 2,000,000-deep nesting (60 MB)", ("wall_s", "peak_mib"), "< 10 s, < 300 MiB")
def _nesting_bomb(folder: Path, figures: dict) -> None:
    path, depth = folder / "deep.xml", 2_000_000
    path.write_text("<topology>" + '<object type="Group">' * depth + "</object>" * depth + "</topology>")
    code, text, figures["wall_s"], figures["peak_mib"] = timed(["topology", "import", path])
    expect(code, text, 2, "deep.xml:1:", "nested more than 200 deep")
    assert figures["wall_s"] < 10 and figures["peak_mib"] < 300, figures


@attack("hwloc XML over the 256 MiB cap (300 MB)", ("wall_s", "peak_mib"), "< 30 s")
def _huge_xml(folder: Path, figures: dict) -> None:
    path = folder / "huge.xml"
    with path.open("wb") as handle:
        handle.truncate(300 << 20)
    code, text, figures["wall_s"], figures["peak_mib"] = timed(["topology", "import", path])
    expect(code, text, 2, "huge.xml", "the input is too large")
    assert "not readable" not in text and figures["wall_s"] < 30, (text[-200:], figures)


@attack("FIFO as the hwloc XML")
def _fifo_xml(folder: Path, figures: dict) -> None:
    from tasksolve.specs import files

    os.mkfifo(folder / "topology.xml")
    wait, files.FIFO_WAIT = files.FIFO_WAIT, 1.0
    try:
        for argv in (["topology", "import"], ["topology", "show"]):
            expect(*run_cli(*argv, folder / "topology.xml"), 2, "topology.xml", "FIFO")
    finally:
        files.FIFO_WAIT = wait


CSV_HEAD = "cpu_i,cpu_j,latency_ns\n0,1,50\n"
CSVS = {  # file: (text, line:column of the fault)
    "nan.csv": (CSV_HEAD + "0,2,NaN\n1,2,60\n", "3:5"),
    "negative.csv": (CSV_HEAD + "0,2,-40\n1,2,60\n", "3:5"),
    "arabic-digits.csv": (CSV_HEAD + "0,2,\u0664\u0660\n1,2,60\n", "3:5"),
    "fullwidth-cpu.csv": (CSV_HEAD + "0,\uff12,40\n1,2,60\n", "3:3"),
    "matrix-nan.csv": (",,\n50,,\nnan,60,\n", "3:1"),
    "matrix-devanagari.csv": (",,\n50,,\n\u0969,60,\n", "3:1"),
}


@attack("probe CSVs: NaN, negative, non-ASCII digits (6 files)")
def _probe_csvs(folder: Path, figures: dict) -> None:
    for name, (text, where) in CSVS.items():
        (folder / name).write_text(text, encoding="utf-8")
        expect(*run_cli("topology", "probe", "--load", folder / name), 2, f"{name}:{where}:")


# ------------------------------------------------------------------ scale
@attack("60k PUs: topology import of a 158 MB lstopo-style XML", ("wall_s", "peak_mib"), "<= 20 s (seconds)")
def _sixty_k(folder: Path, figures: dict) -> None:
    path = folder / "host.xml"
    lstopo_xml(path, 61440)
    code, text, figures["wall_s"], figures["peak_mib"] = timed(
        ["topology", "import", path, "--output", folder / "t.yaml"]
    )
    expect(code, text, 0, "(61440 contexts)")
    assert figures["wall_s"] <= 20, f"{figures['wall_s']:.1f} s"


def _threads_spec(folder: Path, cores: int) -> Path:
    """10,000 threads: 20 instances of a 500-task chain (`scale_specs.huge_data`), `cores` x 8 contexts."""
    import yaml

    path = folder / f"threads-{cores}.yaml"
    path.write_text(yaml.safe_dump(huge_data(instances=20, tasks=500, cores=cores, threads=8), sort_keys=False))
    return path


@attack(
    "10,000 threads on 256 contexts: validate, solve",
    ("validate_s", "validate_mib", "solve_s", "solve_mib"),
    "refused (exit 2); < 2 GiB, < 33 s",
)
def _ten_k_on_256(folder: Path, figures: dict) -> None:
    path = _threads_spec(folder, 32)
    for command, extra in (("validate", []), ("solve", ["--oracle", "analytic", "--time-limit", "30"])):
        code, text, figures[f"{command}_s"], figures[f"{command}_mib"] = timed([command, path, *extra])
        expect(code, text, 2, "10000 threads but only 256 hardware contexts", "each thread needs its own context")
    assert max(figures["validate_mib"], figures["solve_mib"]) < 2 * GIB and figures["solve_s"] < 33, figures


@attack(
    "10,000 threads on 10,240 contexts: validate, solve 30 s",
    ("validate_s", "validate_mib", "solve_s", "solve_mib"),
    "<= 2 GiB, <= 33 s (30 s + 10%)",
)
def _ten_k_threads(folder: Path, figures: dict) -> None:
    path = _threads_spec(folder, 1280)
    code, text, figures["validate_s"], figures["validate_mib"] = timed(["validate", path])
    expect(code, text, 0, "10000 threads")
    argv = ["solve", path, "--oracle", "analytic", "--time-limit", "30"]
    code, text, figures["solve_s"], figures["solve_mib"] = timed(argv, timeout=180)
    expect(code, text, 0)
    problems = [f"peak RSS {figures['solve_mib']:,.0f} MiB over 2 GiB"] * (figures["solve_mib"] > 2 * GIB)
    problems += [f"{figures['solve_s']:.1f} s over 33 s"] * (figures["solve_s"] > 33)
    assert not problems, "; ".join(problems)


# ------------------------------------------------------------------ the run
def run(names: list[str], tries: int) -> dict:
    rows = []
    for name in names:
        failures, seconds, why, figures = 0, [], "", {}
        for _ in range(tries):
            found: dict = {}
            with tempfile.TemporaryDirectory(prefix="adversarial-more-") as tmp:
                clock = time.perf_counter()
                try:
                    ATTACKS[name](Path(tmp), found)
                except Exception as exc:  # an AssertionError, or anything unexpected: a failure
                    failures += 1
                    why = f"{type(exc).__name__}: {exc}"[:300] or traceback.format_exc(limit=2)
                seconds.append(time.perf_counter() - clock)
            for key, value in found.items():
                figures.setdefault(key, []).append(value)
        row = {"attack": name, "tries": tries, "failures": failures, "median_s": statistics.median(seconds)}
        row |= {"why": why, "figures": {key: statistics.median(v) for key, v in figures.items()}, "each": figures}
        row["shown"], row["goal"] = GOALS[name]
        rows.append(row)
        print(f"{name:60s} {tries:3d} {failures:3d}  {row['median_s']:6.1f} s  {row['figures']}  {why}", flush=True)
    return {"rows": rows, "tries": tries}


def _figure(key: str, value: float) -> str:
    return f"{value:,.0f} MiB" if key.endswith("mib") else f"{value:.1f} s"


def render_markdown(data: dict) -> str:
    rows = data["rows"]
    total = sum(r["failures"] for r in rows)
    lines = [
        f"`bench/adversarial_more.py --tries {data['tries']}`: {len(rows)} attacks, "
        f"{sum(r['tries'] for r in rows)} tries, **{total} failures** (a failure as in the run above, or a figure "
        "beyond its goal). Figures: the median over the tries (wall time, peak RSS from `/usr/bin/time`).",
        "",
        "| attack | tries | failures | median time (s) | figures | goal |",
        "|---|---:|---:|---:|---|---|",
    ]
    for r in rows:
        parts: dict[str, list[str]] = {}  # "validate 1.2 s / 47 MiB": one figure's time and memory together
        for key in (key for key in r["shown"] if key in r["figures"]):
            parts.setdefault(key.rsplit("_", 1)[0], []).append(_figure(key, r["figures"][key]))
        shown = ", ".join(f"{name} {' / '.join(values)}" for name, values in parts.items())
        lines.append(
            f"| {r['attack']} | {r['tries']} | {r['failures']} | {r['median_s']:.1f} | {shown} | {r['goal']} |"
        )
    failing = [r for r in rows if r["failures"]]
    if failing:
        lines += ["", "Failures (the last try's reason):", ""]
        lines += [f"- {r['attack']}: {r['why']}" for r in failing]
    return "\n".join(lines) + "\n"


MODULES = (  # the files whose code the figures measure
    "simulate/executor.py simulate/command.py solver/certify/samples_file.py solver/certify/outdir.py "
    "solver/cli/common.py solver/cli/__init__.py specs/files.py specs/importers/hwloc.py "
    "specs/importers/hwloc_sets.py specs/importers/host.py specs/exporters/topology_text.py "
    "simulate/probe/loading.py simulate/analytic.py solver/binding/local_search.py solver/binding/compare.py"
).split()


def main() -> None:
    attack_cli.main(__doc__, list(ATTACKS), run, render_markdown, "adversarial-more", MODULES, width=60)


if __name__ == "__main__":
    main()
