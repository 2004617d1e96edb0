"""Standard output kept for what a command prints as its result: what libraries print there
from C or C++ (HiGHS's debug lines) goes to standard error instead.

`stdout_to_stderr` points file descriptor 1 at descriptor 2 for a block: `tasksolve --json` runs
its whole command in one (docs/design.md, "Errors": stdout is always JSON), and `solver.highs`
runs each MIP solve in one.  `result_stdout`, inside it, points descriptor 1 back at the real
standard output for the command's own result (`solver.cli.common.emit_json`).  Descriptors are
per process, so blocks are counted, not stacked: the first to begin (in any thread) saves the real
stdout and the last to end puts it back, however blocks of several threads interleave.  Python's
and the C library's buffers are flushed at every switch, so each line goes where it was meant to
when it was printed.  Where a descriptor cannot be duplicated (closed), a block runs as it is.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
import threading
from collections.abc import Iterator

_lock = threading.RLock()
_open_blocks = 0
_real_stdout: int | None = None  # the descriptor saved by the first block still open


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 duplicated from descriptor 2 for the block, then put back."""
    with _lock:
        entered = _enter()
    try:
        yield
    finally:
        if entered:
            with _lock:
                _leave()


@contextlib.contextmanager
def result_stdout() -> Iterator[None]:
    """Inside a `stdout_to_stderr` block: descriptor 1 pointed back at the real standard output
    for this block only (other threads' output meanwhile goes there too; the block is short);
    outside one, nothing changes."""
    with _lock:
        if _real_stdout is None:
            yield
            return
        _flush()
        current = os.dup(1)
        os.dup2(_real_stdout, 1)
        try:
            yield
        finally:
            _flush()
            os.dup2(current, 1)
            os.close(current)


def _enter() -> bool:
    """One more block open: the first saves the real stdout and points descriptor 1 at
    descriptor 2; False where that cannot be done."""
    global _open_blocks, _real_stdout
    if _open_blocks == 0:
        _flush()
        try:
            saved = os.dup(1)
        except OSError:
            return False
        try:
            os.dup2(2, 1)
        except OSError:
            os.close(saved)
            return False
        _real_stdout = saved
    _open_blocks += 1
    return True


def _leave() -> None:
    """One block fewer: the last puts the real stdout back."""
    global _open_blocks, _real_stdout
    _open_blocks -= 1
    _flush()
    if _open_blocks == 0 and _real_stdout is not None:
        os.dup2(_real_stdout, 1)
        os.close(_real_stdout)
        _real_stdout = None


def _flush() -> None:
    """Python's stdout and every C stdio stream (``fflush(NULL)``) written out."""
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stdout.flush()
    with contextlib.suppress(OSError, AttributeError, TypeError):
        _libc().fflush(None)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None)
