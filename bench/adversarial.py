"""Adversarial run: every attack of issue 25 ("nothing lost, nothing leaked"), a number of tries
each, counting the tries where tasksolve lost, leaked, hung, crashed or was unclear.

Each attack is a function that raises `AssertionError` (a failure) when tasksolve misbehaves;
they drive the CLI in this process (or a subprocess where it must be killed) on small specs with
the analytic oracle or a tiny command oracle, so the whole run takes minutes.

    python bench/adversarial.py --tries 3            # all attacks, 3 tries each
    python bench/adversarial.py --only fifo,dask     # attacks whose name contains a word

Writes ``bench/results/adversarial.json`` (`bench/results.py`); `render_markdown` gives the
BENCHMARKS.md section between ``<!-- BEGIN adversarial -->`` and ``<!-- END adversarial -->``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import attack_cli
from tasksolve.solver.cli import main as cli
from tests.solver.test_failure_paths import SPEC as SPIN
from tests.solver.test_outdir import FAST, SPEC_TEXT
from tests.solver.test_sample_log import HOLDER

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "specs" / "examples" / "t2-ipfwd-intadd-x2.yaml"
ATTACKS: dict[str, Callable[[Path], None]] = {}


def attack(name: str):
    def register(fn):
        ATTACKS[name] = fn
        return fn

    return register


def run_cli(*argv: str) -> tuple[int, str]:
    """Exit code and stdout+stderr of one CLI call in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli([str(a) for a in argv])
    text = out.getvalue() + err.getvalue()
    assert "Traceback" not in text and "internal error" not in text, text[-400:]
    return code, text


def expect(code: int, text: str, wanted: int, *words: str) -> None:
    assert code == wanted, f"exit {code}, wanted {wanted}: {text[-300:]}"
    for word in words:
        assert word in text, f"{word!r} not in: {text[-300:]}"


def spec(folder: Path, text: str = SPEC_TEXT) -> Path:
    path = folder / "spec.yaml"
    path.write_text(text)
    return path


ALLOW = "--allow-commands"  # a spec's own command oracle runs its program only when asked


def command_spec(folder: Path, code: str, timeout: str = "2s") -> Path:
    oracle = {"kind": "command", "command": [sys.executable, "-c", code], "metric": {"json": "rate"}}
    return spec(folder, SPIN + "oracle: " + json.dumps({**oracle, "repeats": 1, "timeout": timeout}) + "\n")


def finished_run(folder: Path) -> tuple[Path, Path]:
    path, out = spec(folder), folder / "out"
    code, text = run_cli("run", path, "--out", out, *FAST, "--time-limit", "2")
    assert code in (0, 1), text[-300:]
    return path, out


# ------------------------------------------------------------------ the output directory
@attack("refused --resume keeps the finished run")
def _resume_keeps(folder: Path) -> None:
    path, out = finished_run(folder)
    before = {n: (out / n).read_bytes() for n in ("plan.yaml", "pinning.txt", "certificate.json")}
    path.write_text(SPEC_TEXT.replace("instances: 2", "instances: 3"))
    expect(*run_cli("run", path, "--out", out, *FAST, "--time-limit", "2", "--resume"), 2, "spec changed")
    assert {n: (out / n).read_bytes() for n in before} == before, "a file of the finished run changed"


@attack("second run into a locked --out writes nothing")
def _second_run(folder: Path) -> None:
    out = folder / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        expect(*run_cli("run", spec(folder), "--out", out, *FAST, "--time-limit", "2"), 2, f"PID {holder.pid}")
        assert [p.name for p in out.iterdir()] == [".tasksolve.lock"], sorted(p.name for p in out.iterdir())
    finally:
        holder.kill()
        holder.wait()


def _link_attack(folder: Path, name: str, *extra: str) -> None:
    out = folder / "out"
    out.mkdir()
    victim = folder / "victim"
    victim.write_text("precious\nno newline")
    (out / name).symlink_to(victim)
    expect(*run_cli("certify", spec(folder), "--out", out, *FAST, *extra), 2, "symbolic link")
    assert victim.read_text() == "precious\nno newline", "the link's target was written"


for _name, _extra in (
    (".tasksolve.lock", ()),
    ("samples.jsonl.tmp", ()),
    ("samples.jsonl", ("--resume",)),
    ("certificate.json", ("--force",)),
):
    attack(f"link at OUT/{_name} {' '.join(_extra)}".strip())(
        lambda folder, n=_name, e=_extra: _link_attack(folder, n, *e)
    )


@attack("FIFO at OUT/samples.jsonl (also --force)")
def _fifo_samples(folder: Path) -> None:
    out = folder / "out"
    out.mkdir()
    os.mkfifo(out / "samples.jsonl")
    for extra in ((), ("--resume",), ("--force",)):
        expect(*run_cli("certify", spec(folder), "--out", out, *FAST, *extra), 2, "FIFO")


@attack("--out naming a regular file")
def _out_file(folder: Path) -> None:
    (folder / "outfile").write_text("x")
    code, text = run_cli("certify", spec(folder), "--out", folder / "outfile", *FAST)
    expect(code, text, 2, "is a regular file, not a directory")
    assert "File exists" not in text


@attack("full disk while appending samples")
def _full_disk(folder: Path) -> None:
    import errno

    real = os.write

    def full(fd, data):
        if "samples.jsonl" in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    os.write = full
    try:
        expect(*run_cli("certify", spec(folder), "--out", folder / "out", *FAST), 3, "samples.jsonl", "--resume")
    finally:
        os.write = real


# ------------------------------------------------------------------ names
@attack("newline in the spec's name")
def _name_newline(folder: Path) -> None:
    text = EXAMPLE.read_text().replace("name: t2-ipfwd-intadd-x2", 'name: "x\\ntouch PWNED #"')
    expect(*run_cli("validate", spec(folder, text)), 2, "line break")


@attack("ANSI escape and bidi control in names")
def _name_escapes(folder: Path) -> None:
    for name in ("\\e[2J\\e[31mred", "abc\\u202edcba"):
        text = EXAMPLE.read_text().replace("name: t2-ipfwd-intadd-x2", f'name: "{name}"')
        code, out = run_cli("validate", spec(folder, text))
        expect(code, out, 2, "is not allowed")
        assert "\x1b" not in out and "\u202e" not in out


# ------------------------------------------------------------------ figures and records
@attack("command printing a negative, zero or 1e308 figure")
def _bad_figures(folder: Path) -> None:
    for figure in ("-5.0", "0", "1e308"):
        path = command_spec(folder, f"print('{{\"rate\": {figure}}}')")
        out = folder / f"out{figure}"
        expect(*run_cli("certify", path, "--out", out, "--samples", "20", "--design", "random", ALLOW), 3, "all 20")
        assert not (out / "certificate.json").exists()


def _edited_record(folder: Path, edit: Callable[[dict], str], *words: str) -> None:
    path, out = spec(folder), folder / "out"
    code, text = run_cli("certify", path, "--out", out, *FAST)
    assert code in (0, 1), text[-300:]
    lines = (out / "samples.jsonl").read_text().splitlines()
    lines[3] = edit(json.loads(lines[3]))
    (out / "samples.jsonl").write_text("\n".join(lines) + "\n")
    expect(*run_cli("certify", path, "--out", out, *FAST, "--resume"), 2, "samples.jsonl:4:", *words)


@attack('samples record edited: value 1e300, "abc", null, "1.5", NaN')
def _bad_values(folder: Path) -> None:
    for i, value in enumerate(("1e300", '"abc"', "null", '"1.5"', "NaN")):
        sub = folder / str(i)
        sub.mkdir()
        _edited_record(sub, lambda r, v=value: json.dumps(r).replace(json.dumps(r["value"]), v, 1), "`value`")


@attack("samples record with an unknown status")
def _unknown_status(folder: Path) -> None:
    _edited_record(folder, lambda r: json.dumps({**r, "status": "pending"}), "unknown status")


# ------------------------------------------------------------------ processes
LEAVER = """
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
print('{"rate": 1000.0}', flush=True)
"""


def _descendants_of_all_sleepers() -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmd = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if b"import time; time.sleep(300)" in cmd and Path(f"/proc/{name}/stat").read_text().split()[2] != "Z":
                found.append(int(name))
    return found


@attack("children and setsid grandchildren left by the program")
def _leftovers(folder: Path) -> None:
    before = set(_descendants_of_all_sleepers())
    clock = time.monotonic()
    path = command_spec(folder, LEAVER, timeout="20s")
    expect(
        *run_cli("certify", path, "--out", folder / "out", "--samples", "20", "--design", "random", ALLOW),
        0,
        "best found",
    )
    assert time.monotonic() - clock < 120, "runs waited for the grandchild holding stdout"
    time.sleep(0.5)
    left = set(_descendants_of_all_sleepers()) - before
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{len(left)} processes left running"


@attack("kill -9 of tasksolve while a program runs")
def _kill_9(folder: Path) -> None:
    pids = folder / "pids"
    code = (
        "import os, subprocess, sys, time\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], start_new_session=True)\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{g.pid}}')\n"
        "time.sleep(300)\n"
    )
    path = command_spec(folder, code, timeout="300s")
    tasksolve = subprocess.Popen(
        [sys.executable, "-m", "tasksolve.solver.cli", "certify", str(path), "--out", str(folder / "out")]
        + ["--samples", "20", ALLOW],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (pids.exists() and len(pids.read_text().split()) == 2) and time.monotonic() < deadline:
        time.sleep(0.1)
    running = [int(p) for p in pids.read_text().split()]
    tasksolve.kill()
    tasksolve.wait()
    time.sleep(2)
    left = [p for p in running if Path(f"/proc/{p}").exists() and Path(f"/proc/{p}/stat").read_text().split()[2] != "Z"]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{len(left)} of the program's processes outlived tasksolve"


@attack("700 MB of stdout")
def _big_output(folder: Path) -> None:
    from tasksolve.simulate.process import run_program

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    done = run_program(["sh", "-c", "head -c 700000000 /dev/zero; echo; echo rate=1"], dict(os.environ), 120, 4 << 20)
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert done.stdout.endswith("rate=1\n") and done.discarded.get("stdout", 0) > 690_000_000
    assert grown < 64, f"resident memory grew by {grown:.0f} MB"


FAILING = {
    "exit 1": "import sys; sys.exit(1)",
    "no output": "pass",
    "no number": 'print(\'{"rate": "fast"}\')',
    "NaN": "print('{\"rate\": NaN}')",
    "signal": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
    "timeout": "import time; time.sleep(30)",
    "missing key": "print('{\"speed\": 1}')",
}


@attack("every sample failing (7 kinds of program)")
def _all_failed(folder: Path) -> None:
    for i, code in enumerate(FAILING.values()):
        path = command_spec(folder, code, timeout="0.5s")
        expect(
            *run_cli("certify", path, "--out", folder / f"o{i}", "--samples", "20", "--design", "random", ALLOW),
            3,
            "all 20 measurements failed",
        )


# ------------------------------------------------------------------ Dask
@attack("Dask scheduler lost during sampling")
def _dask_lost(folder: Path) -> None:
    import distributed

    from tasksolve.simulate.executor import Executor, SchedulerLost
    from tests.solver.test_failure_paths import slow_chunk

    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)
    address = cluster.scheduler_address
    try:
        with Executor(scheduler=address, chunk_size=1).map(slow_chunk, list(range(4))) as stream:
            for _ in stream:
                cluster.close()
        raise AssertionError("no error after the scheduler was closed")
    except SchedulerLost as exc:
        assert address in str(exc) and "--resume" in str(exc)


@attack("Dask workers killed while running a chunk")
def _dask_workers_killed(folder: Path) -> None:
    import dask
    import distributed

    from tasksolve.simulate.executor import Executor, SchedulerLost
    from tests.solver.test_executor import dying_chunk

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as c:
            try:
                with Executor(scheduler=c.scheduler_address, chunk_size=1).map(dying_chunk, [1, 13]) as stream:
                    list(stream)
                raise AssertionError("no error after the workers died")
            except SchedulerLost as exc:
                assert "--resume" in str(exc)


@attack("--scheduler pointing at a port that is not Dask")
def _not_dask(folder: Path) -> None:
    from tests.solver.test_failure_paths import _server

    for answer in (None, b"SSH-2.0-OpenSSH_9.6\r\n"):
        server, address = _server(answer)
        clock = time.monotonic()
        try:
            code, text = run_cli("certify", spec(folder), "--out", folder / "out", *FAST, "--scheduler", address)
        finally:
            server.close()
        assert code in (2, 3) and "Dask scheduler" in text, text[-300:]
        assert time.monotonic() - clock < 30, "took longer than the connect timeout"


# ------------------------------------------------------------------ input files
@attack("/dev/zero as spec, --plan and evt input")
def _dev_zero(folder: Path) -> None:
    for argv in (
        ["validate", "/dev/zero"],
        ["certify", spec(folder), "--plan", "/dev/zero", "--out", folder / "out"],
        ["evt", "/dev/zero"],
    ):
        clock = time.monotonic()
        expect(*run_cli(*argv), 2, "not a regular file")
        assert time.monotonic() - clock < 30


@attack("FIFO as SPEC without a writer")
def _fifo_spec(folder: Path) -> None:
    from tasksolve.specs import files

    os.mkfifo(folder / "spec.yaml")
    wait, files.FIFO_WAIT = files.FIFO_WAIT, 1.0
    try:
        expect(*run_cli("validate", folder / "spec.yaml"), 2, "FIFO")
    finally:
        files.FIFO_WAIT = wait


@attack("endless pipe as SPEC (`yes` into `validate -`)")
def _endless_pipe(folder: Path) -> None:
    source = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tasksolve.solver.cli", "validate", "-"],
            stdin=source.stdout,
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    finally:
        source.kill()
        source.wait()
    assert done.returncode == 2 and "too large" in done.stdout + done.stderr, done.stderr[-300:]


@attack("FIFO or device as a reference")
def _fifo_reference(folder: Path) -> None:
    os.mkfifo(folder / "box.yaml")
    text = EXAMPLE.read_text().replace("topology: ultrasparc-t2", "topology: box.yaml")
    expect(*run_cli("validate", spec(folder, text)), 2, "is a FIFO (named pipe), not a regular file")


@attack("1499-deep base: chain")
def _deep_chain(folder: Path) -> None:
    top = (ROOT / "specs" / "examples" / "topologies" / "ultrasparc-t2.yaml").read_text()
    (folder / "t1499.yaml").write_text(top)
    for i in range(1499):
        (folder / f"t{i}.yaml").write_text(f"base: t{i + 1}.yaml\n")
    text = EXAMPLE.read_text().replace("topology: ultrasparc-t2", "topology: t0.yaml")
    code, out = run_cli("validate", spec(folder, text))
    expect(code, out, 2, "chain of `base:` references")
    assert "nested too deeply" not in out


# ------------------------------------------------------------------ the run
def run(names: list[str], tries: int) -> dict:
    rows = []
    for name in names:
        failures, seconds, why = 0, [], ""
        for _ in range(tries):
            with tempfile.TemporaryDirectory(prefix="adversarial-") as tmp:
                clock = time.perf_counter()
                try:
                    ATTACKS[name](Path(tmp))
                except Exception as exc:  # an AssertionError, or anything unexpected: a failure
                    failures += 1
                    why = f"{type(exc).__name__}: {exc}"[:300] or traceback.format_exc(limit=2)
                seconds.append(time.perf_counter() - clock)
        seconds.sort()
        rows.append(
            {"attack": name, "tries": tries, "failures": failures, "median_s": seconds[len(seconds) // 2], "why": why}
        )
        print(f"{name:55s} {tries:3d} {failures:3d}  {seconds[len(seconds) // 2]:6.1f} s  {why}", flush=True)
    return {"rows": rows, "tries": tries}


def render_markdown(data: dict) -> str:
    rows = data["rows"]
    total = sum(r["failures"] for r in rows)
    lines = [
        f"`bench/adversarial.py --tries {data['tries']}`: {len(rows)} attacks of issue 25, "
        f"{sum(r['tries'] for r in rows)} tries, **{total} failures** (a failure: a file outside the output "
        "folder written, a process left behind, a hang, a traceback or exit 70, or a message without the "
        "file or hint asked for).",
        "",
        "| attack | tries | failures | median time (s) |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {r['attack']} | {r['tries']} | {r['failures']} | {r['median_s']:.1f} |" for r in rows]
    return "\n".join(lines) + "\n"


MODULES = (  # the files whose code the figures measure
    "specs/files.py specs/yamlio.py specs/loader.py specs/fields.py specs/exporters/pinning.py "
    "simulate/command.py simulate/process.py simulate/reaper.py simulate/screening.py simulate/executor.py "
    "solver/certify/outdir.py solver/certify/records.py solver/certify/service.py evt/io.py "
    "solver/certify/run.py solver/job/job.py"
).split()


def main() -> None:
    attack_cli.main(__doc__, list(ATTACKS), run, render_markdown, "adversarial", MODULES, width=55)


if __name__ == "__main__":
    main()
