"""Run one measured program under the watchdog (`simulate.reaper`), its output capped.

`run_program(argv, env, timeout, max_output)` starts ``python -I -S reaper.py`` which starts the
program; it returns a `Finished`: the exit status (None if it could not start or was killed),
whether the *program* ran past `timeout` (its own wall time, measured by the reaper, not the
time its leftovers hold the output open), the last `max_output` bytes of standard output and of
standard error, and how many bytes were discarded beyond them.  Whatever happens -- the program
exits, times out, this process is interrupted (Ctrl-C, the sampling service's alarm) or killed --
the program and everything it started are killed (`simulate.reaper`'s docstring says how).

Only the *last* `max_output` bytes are kept: the figure is read from the last match or the last
JSON line of the output, so the tail is what matters, and a program printing 700 MB costs at most
``2 * max_output`` bytes of memory here.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REAPER = Path(__file__).with_name("reaper.py")
_READ = 1 << 16


@dataclass
class Finished:
    """What one run of a program left (module docstring)."""

    returncode: int | None
    timed_out: bool
    elapsed: float
    stdout: str
    stderr: str
    discarded: dict[str, int]  # "stdout"/"stderr" -> bytes discarded beyond max_output
    error: str | None = None  # why the program could not start


class _Tail:
    """The last `cap` bytes of a stream, and how many came before them."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > 2 * self.cap:  # trim in batches: amortised linear time
            del self.data[: len(self.data) - self.cap]

    def text(self) -> str:
        return bytes(self.data[-self.cap :]).decode("utf-8", errors="replace")

    @property
    def discarded(self) -> int:
        return max(0, self.total - self.cap)


def run_program(argv: list[str], env: dict[str, str], timeout: float, max_output: int) -> Finished:
    """Run `argv` under the reaper (module docstring)."""
    report_r, report_w = os.pipe()
    try:
        reaper = subprocess.Popen(
            [sys.executable, "-I", "-S", str(REAPER), str(report_w), repr(float(timeout)), "--", *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            pass_fds=(report_w,),
        )
    finally:
        os.close(report_w)
    tails = {"stdout": _Tail(max_output), "stderr": _Tail(max_output)}
    try:
        _drain(reaper, tails)
        report = _read_all(report_r)
        reaper.wait()
    finally:
        os.close(report_r)
        if reaper.poll() is None:  # interrupted: closing its stdin makes it kill everything
            reaper.stdin.close()
            try:
                reaper.wait(timeout=10)
            except subprocess.TimeoutExpired:
                reaper.kill()
                reaper.wait()
        for stream in (reaper.stdin, reaper.stdout, reaper.stderr):
            if stream is not None and not stream.closed:
                stream.close()
    try:
        result = json.loads(report)
    except json.JSONDecodeError:
        result = {"error": f"the watchdog failed (status {reaper.returncode})"}
    return Finished(
        returncode=result.get("returncode"),
        timed_out=bool(result.get("timed_out")),
        elapsed=float(result.get("elapsed") or 0.0),
        stdout=tails["stdout"].text(),
        stderr=tails["stderr"].text(),
        discarded={name: tail.discarded for name, tail in tails.items() if tail.discarded},
        error=result.get("error"),
    )


def _drain(reaper: subprocess.Popen, tails: dict[str, _Tail]) -> None:
    """Read the program's stdout and stderr until both close (the reaper closes them at the latest
    when it has killed the program's leftovers)."""
    with selectors.DefaultSelector() as selector:
        selector.register(reaper.stdout, selectors.EVENT_READ, "stdout")
        selector.register(reaper.stderr, selectors.EVENT_READ, "stderr")
        open_streams = 2
        while open_streams:
            for key, _ in selector.select():
                chunk = os.read(key.fileobj.fileno(), _READ)
                if chunk:
                    tails[key.data].add(chunk)
                else:
                    selector.unregister(key.fileobj)
                    open_streams -= 1


def _read_all(fd: int) -> str:
    parts = []
    while part := os.read(fd, _READ):
        parts.append(part)
    return b"".join(parts).decode("utf-8", errors="replace")
