"""The watchdog between tasksolve and a measured program: nothing the program starts outlives it.

Run as a script, never imported by the package at start-up (`simulate.process` starts it with
``python -I -S reaper.py REPORT_FD TIMEOUT -- PROGRAM ARGS...``, so it imports only the
standard library)::

    tasksolve --stdin pipe--> reaper (child subreaper) --> program --> children, setsid grandchildren
               <--stdout/stderr pipes (the program's) ----------------'
               <--REPORT_FD: one JSON line {returncode, timed_out, elapsed, aborted, error}

1. The reaper marks itself a *child subreaper* (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): every
   process the program starts, however it detaches (a double fork, ``setsid``), is re-parented to
   the reaper when its own parent exits instead of to init, so it stays findable.
2. It starts the program (``posix_spawnp``, standard input ``/dev/null``, a new session) and
   waits for the first of: the program exits; ``TIMEOUT`` seconds of the program's own wall time
   pass; its standard input -- a pipe whose only writer is tasksolve -- reaches end of file,
   which happens when tasksolve closes it (interrupted, the service's alarm) *or dies*, even by
   ``kill -9`` (the kernel closes a dead process's descriptors; unlike ``PR_SET_PDEATHSIG`` this
   does not depend on which thread started the reaper).
3. It then kills every descendant (a walk of ``/proc`` from its own PID, repeated until none is
   left, reaping the zombies), reports, and exits.  The program's output pipes close with the
   last holder, so tasksolve stops reading as soon as the program has exited and its leftovers
   are killed: a grandchild holding standard output cannot make a run wait for the timeout.

Without ``/proc`` and ``prctl`` (not Linux) the fallback kills the program's process group.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
_POLL = 0.05  # seconds between checks when pidfd_open is missing


def _subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Every live or zombie process below `root` (from ``/proc/*/stat``)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(name))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_all(program: int) -> None:
    """Kill the program's process group and every descendant of this process, until none is left."""
    try:
        os.killpg(program, signal.SIGKILL)
    except OSError:
        pass
    me = os.getpid()
    for _ in range(400):  # a fork bomb is outpaced: each pass kills what the last one missed
        found = descendants(me)
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap()
        time.sleep(0.005)


def _wait(pid: int, control: int, timeout: float) -> tuple[int | None, bool, bool]:
    """(exit status or None, timed out, aborted by tasksolve)."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        handle = None
    deadline = time.monotonic() + timeout
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return os.waitstatus_to_exitcode(status), False, False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None, True, False
            watched = [control] + ([handle] if handle is not None else [])
            ready, _, _ = select.select(watched, [], [], remaining if handle is not None else min(remaining, _POLL))
            if control in ready:
                return None, False, True
    finally:
        if handle is not None:
            os.close(handle)


class _Stop(Exception):
    """SIGTERM while waiting: kill everything and report."""


def _stop(signum, frame):
    raise _Stop


def main(argv: list[str]) -> int:
    report_fd, timeout, program = int(argv[1]), float(argv[2]), argv[4:]
    os.set_inheritable(report_fd, False)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # tasksolve handles Ctrl-C and closes our stdin
    signal.signal(signal.SIGTERM, _stop)
    control = os.dup(0)
    _subreaper()
    devnull = os.open(os.devnull, os.O_RDONLY)
    result = {"returncode": None, "timed_out": False, "aborted": False, "elapsed": 0.0, "error": None}
    start = time.monotonic()
    try:
        pid = os.posix_spawnp(
            program[0], program, dict(os.environ), file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 0)], setsid=True
        )
    except OSError as exc:
        result["error"] = exc.strerror or str(exc)
        pid = None
    if pid is not None:
        try:
            result["returncode"], result["timed_out"], result["aborted"] = _wait(pid, control, timeout)
        except _Stop:
            result["aborted"] = True
        result["elapsed"] = time.monotonic() - start
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        kill_all(pid)
    with os.fdopen(report_fd, "w") as report:
        report.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
