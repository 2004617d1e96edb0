"""kill -9 a 2-worker `certify` at seeded random points, resume it: the certificate is the one of
the uninterrupted run (the samples file loses at most the running chunks and a cut line)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = 600


def _command(out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tasksolve.solver.cli",
        "certify",
        "t2-ipfwd-intadd-x2",
        "--oracle",
        "analytic",
        "--samples",
        str(SAMPLES),
        "--workers",
        "2",
        "--seed",
        "1",
        "--out",
        str(out),
        "--json",
        *extra,
    ]


def _run(command: list[str]) -> None:
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert done.returncode in (0, 1), done.stderr


def _certificate(out: Path) -> dict:
    data = json.loads((out / "certificate.json").read_text())
    data["samples"].pop("file")
    return data


def _records(path: Path) -> int:
    try:
        return max(0, path.read_bytes().count(b"\n") - 1)
    except FileNotFoundError:
        return -1


def _kill_after(out: Path, records: int) -> int:
    """Start the run, SIGKILL it once the file holds `records` records (-1: before the file
    exists); returns how many finished records the file held when the run was killed."""
    process = subprocess.Popen(
        _command(out),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 60
    path = out / "samples.jsonl"
    while process.poll() is None and _records(path) < records and time.monotonic() < deadline:
        time.sleep(0.002)
    process.kill()
    process.wait()
    return _records(path)


def test_kill_9_and_resume_gives_the_uninterrupted_certificate(tmp_path):
    _run(_command(tmp_path / "whole"))
    expected = _certificate(tmp_path / "whole")
    rng = random.Random(20240611)
    killed_at = []
    for k in range(10):
        out = tmp_path / f"killed{k}"
        killed_at.append(_kill_after(out, rng.randrange(-1, SAMPLES - 50)))
        if (out / "samples.jsonl").exists():
            _run(_command(out, "--resume"))
        else:  # killed before it wrote anything: start again
            _run(_command(out))
        assert _certificate(out) == expected, f"kill {k} after {killed_at[-1]} records"
        lines = (out / "samples.jsonl").read_text().splitlines()
        assert sorted(json.loads(line)["index"] for line in lines[1:]) == list(range(SAMPLES))
    print("killed after", killed_at)
    assert sum(0 <= n < SAMPLES for n in killed_at) >= 3, killed_at  # most kills cut the sampling
