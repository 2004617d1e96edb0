"""Standard output kept for what a command prints as its result: what libraries print there
from C or C++ (HiGHS's debug lines) goes to standard error instead.

`stdout_to_stderr` points file descriptor 1 at descriptor 2 for a block: `tasksolve --json` runs
its whole command in one (docs/design.md, "Errors": stdout is always JSON), and `solver.highs`
runs each MIP solve in one.  `result_stdout`, inside it, points descriptor 1 back at the real
standard output for the command's own result (`solver.cli.common.emit_json`).  Python's and the C
library's buffers are flushed at every switch, so each line goes where it was meant to when it
was printed.  Where a descriptor cannot be duplicated (closed), a block runs as it is.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterator

#: the descriptors that held standard output when each enclosing `stdout_to_stderr` began
_saved: list[int] = []


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 duplicated from descriptor 2 for the block, then put back."""
    _flush()
    try:
        saved = os.dup(1)
    except OSError:
        yield
        return
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(saved)
        yield
        return
    _saved.append(saved)
    try:
        yield
    finally:
        _flush()
        _saved.pop()
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def result_stdout() -> Iterator[None]:
    """Inside `stdout_to_stderr`: descriptor 1 pointed back at the standard output the outermost
    block began with, for this block only; outside one, nothing changes."""
    if not _saved:
        yield
        return
    _flush()
    current = os.dup(1)
    os.dup2(_saved[0], 1)
    try:
        yield
    finally:
        _flush()
        os.dup2(current, 1)
        os.close(current)


def _flush() -> None:
    """Python's stdout and every C stdio stream (``fflush(NULL)``) written out."""
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stdout.flush()
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).fflush(None)
