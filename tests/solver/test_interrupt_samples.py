"""Ctrl-C while sampling keeps every finished measurement: each chunk's records reach the samples
file as the chunk finishes (`solver.certify.service.CHUNK` plans; fsync'ed at most every
`SYNC_SECONDS`), the interruption says how many the file holds, and ``--resume`` continues
from them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.certify.service import CHUNK, SamplingInterrupted, SamplingService
from tasksolve.solver.cli.errors import classify
from tasksolve.specs import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPEC = "t2-ipfwd-intadd-x2"


def _records(path: Path) -> list[str]:
    return path.read_text().splitlines()[1:]  # the header first


class _InterruptedOracle:
    """The closed form, and Ctrl-C at its `STOP`-th plan (the sampling service's factory)."""

    STOP = 2 * 5 * CHUNK + 1  # in the sixth chunk: five chunks (ten plans) finished before it
    calls = 0

    def __init__(self, spec):
        self.oracle = make_oracle(spec, "analytic")

    def evaluate(self, plan, seed=None):
        type(self).calls += 1
        if type(self).calls == self.STOP:
            raise KeyboardInterrupt
        return self.oracle.evaluate(plan, seed=seed)


def test_an_interruption_says_how_many_finished_measurements_the_file_holds(tmp_path):
    spec, path = load_spec(SPEC), tmp_path / "samples.jsonl"
    options = {"seed": 3, "design": "random", "oracle_factory": _InterruptedOracle, "workers": 1}
    service = SamplingService(spec, path, **options)
    service.open()
    _InterruptedOracle.calls = 0
    try:
        service.ensure(60)
    except SamplingInterrupted as exc:
        caught = exc
    kept = _records(path)
    assert caught.kept == len(kept) == len(service.records) > 0
    assert str(caught) == f"interrupted: {len(kept)} finished measurements in {path}; continue them with resume=True"
    assert classify(caught).message == caught.command_line and "continue them with --resume" in caught.command_line
    resumed = SamplingService(spec, path, **options)
    resumed.open(resume=True)
    assert len(resumed.records) == len(kept)
    _InterruptedOracle.calls = -(10**9)  # no second interruption
    resumed.ensure(60)
    assert _records(path)[: len(kept)] == kept and len(_records(path)) == 60
    whole = SamplingService(spec, tmp_path / "whole.jsonl", **options)
    whole.open()
    whole.ensure(60)
    assert [resumed.records[i].value for i in range(60)] == [whole.records[i].value for i in range(60)]


def _certify(out: Path, *extra: str) -> subprocess.Popen:
    """`tasksolve certify` on the simulation of a 30-thread example (a chunk of plans a few tenths
    of a second), its progress bar on stderr."""
    command = [sys.executable, "-m", "tasksolve.solver.cli", "certify", "t2-asplos12-mix", "--oracle", "des"]
    command += ["--design", "random", "--workers", "2", "--compare-samples", "0", "--seed", "1", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    return subprocess.Popen([*command, *extra], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)


def test_ctrl_c_keeps_what_finished_and_resume_continues_from_it(tmp_path):
    out = tmp_path / "out"
    samples = out / "samples.jsonl"
    running = _certify(out, "--samples", "400")
    deadline = time.monotonic() + 240
    while running.poll() is None and time.monotonic() < deadline:  # some samples finished, not all
        if samples.exists() and len(_records(samples)) >= 2 * CHUNK:
            break
        time.sleep(0.05)
    running.send_signal(signal.SIGINT)
    _, err = running.communicate(timeout=120)
    assert running.returncode == 130, err
    kept = _records(samples)
    shown = re.findall(r"sampling\b.*?(\d+)/400", err)  # the sampling bar's count as it stopped
    assert shown and int(shown[-1]) == len(kept) > 0 and len(kept) < 400
    said = f"interrupted: {len(kept)} finished measurements in {samples}; continue them with --resume"
    assert said in " ".join(err.split())  # the message counts what the file keeps
    assert all(json.loads(line)["status"] == "ok" for line in kept)
    wanted = max(20, len(kept) + 2 * CHUNK)  # a few more than were kept (--samples is at least 20)
    resumed = _certify(out, "--samples", str(wanted), "--resume", "--json")
    _, err = resumed.communicate(timeout=240)
    assert resumed.returncode in (0, 1), err
    after = _records(samples)
    assert after[: len(kept)] == kept  # continued from them, none measured again
    assert sorted(json.loads(line)["index"] for line in after) == list(range(wanted))
