"""HiGHS's MIP solve (SciPy's `milp`) in one place for every model of `solver`, its stray output
kept off standard output.

The HiGHS inside SciPy (1.17.1 here) prints a debug line, ``HighsMipSolverData::transformNewIntegerFeasibleSolution
tmpSolver.run();``, from C++ to the process's standard output whenever it repairs an integer
solution found for its presolved model (reported upstream as HiGHS issue 2783; ``disp`` does not stop it): it landed in
the middle of `tasksolve run --json`'s output on a 24-context SMT tree and broke the JSON.  So
`milp` runs with file descriptor 1 pointed at descriptor 2 (standard error), both C and Python
buffers flushed on the way in and out: what the solver prints goes to stderr, beside the progress
lines, and stdout carries only what the command prints as its result.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterator


def milp(*args, **kwargs):
    """`scipy.optimize.milp` with anything the solver writes to stdout sent to stderr."""
    from scipy.optimize import milp as scipy_milp

    with stdout_to_stderr():
        return scipy_milp(*args, **kwargs)


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 duplicated from descriptor 2 for the block, then put back.  Python's
    `sys.stdout` and the C library's buffers are flushed before the switch (what was printed
    before goes where it was meant to) and before the return (what the block printed goes to
    stderr).  Where a descriptor cannot be duplicated (closed, or not a process with descriptors),
    the block runs as it is."""
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
    try:
        yield
    finally:
        _flush()
        os.dup2(saved, 1)
        os.close(saved)


def _flush() -> None:
    """Python's stdout and every C stdio stream (``fflush(NULL)``) written out."""
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stdout.flush()
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).fflush(None)
