"""The one error path of the CLI: every exception becomes one message and an exit code.

The table below is the only place where exception classes meet exit codes (docs/design.md,
"Errors and exit codes"). A bad input exits 2, a failing oracle or solver 3, an interruption
130 (SIGTERM 143), and anything not in the table is a bug: exit 70 (EX_SOFTWARE), a one-line
message saying where to report it, and the traceback written to a file instead of the screen.
With ``--json`` the error is printed as a JSON object on stdout as well, so scripts that parse
stdout always get JSON.
"""

from __future__ import annotations

import errno
import os
import tempfile
import traceback
from dataclasses import dataclass

from tasksolve.solver.cli import common

EXIT_INTERNAL = 70
EXIT_TERMINATED = 143
REPORT_TO = "the tasksolve issue tracker"


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: finished work is kept, workers are stopped."""


@dataclass
class ErrorReport:
    code: int
    message: str
    problems: list[dict] | None = None

    def to_dict(self) -> dict:
        data = {"error": {"message": self.message, "exit_code": self.code}}
        if self.problems:
            data["error"]["problems"] = self.problems
        return data


def _internal(exc: BaseException) -> ErrorReport:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        fd, path = tempfile.mkstemp(prefix="tasksolve-crash-", suffix=".txt")
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        where = f"; the traceback is in {path}"
    except OSError:
        where = ""
    return ErrorReport(
        EXIT_INTERNAL,
        f"internal error (a bug in tasksolve): {type(exc).__name__}: "
        f"{common.shorten(str(exc))}{where}; please report it to {REPORT_TO} "
        "with the command line and the spec",
    )


def classify(exc: BaseException) -> ErrorReport:
    """The exit code and message of any exception (the table of docs/design.md)."""
    from tasksolve import evt
    from tasksolve.simulate.errors import InvalidPlanError, OracleError, SimulateError
    from tasksolve.solver.errors import SolverError
    from tasksolve.specs.errors import SpecError

    if isinstance(exc, common.CliError):
        return ErrorReport(exc.code, exc.message)
    if isinstance(exc, Terminated):
        return ErrorReport(EXIT_TERMINATED, "terminated; finished work has been kept")
    if isinstance(exc, KeyboardInterrupt):  # `SamplingInterrupted` says how many samples are kept
        said = getattr(exc, "command_line", None)
        return ErrorReport(common.EXIT_INTERRUPTED, said or "interrupted; finished work has been kept")
    if isinstance(exc, SpecError):
        return ErrorReport(common.EXIT_BAD_INPUT, common.spec_error_text(exc), common.spec_error_json(exc))
    if isinstance(exc, InvalidPlanError):
        return ErrorReport(common.EXIT_BAD_INPUT, f"invalid plan: {exc}")
    if isinstance(exc, OracleError):
        return ErrorReport(common.EXIT_FAILURE, f"the oracle failed: {exc}")
    if isinstance(exc, SimulateError):  # a bad setting is a ValueError too; anything else failed
        return ErrorReport(common.EXIT_BAD_INPUT if isinstance(exc, ValueError) else common.EXIT_FAILURE, str(exc))
    if isinstance(exc, SolverError):  # in the command line's words (`SolverError.worded`)
        return ErrorReport(exc.exit_code, exc.for_command_line())
    if isinstance(exc, evt.EVTError):
        return ErrorReport(common.EXIT_BAD_INPUT, str(exc))
    if isinstance(exc, OSError):
        name = exc.filename if exc.filename is not None else ""
        reason = exc.strerror or str(exc)
        if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):  # the machine, not the input
            if "--resume" not in reason:
                reason += "; free some space, then continue the run with --resume"
            return ErrorReport(common.EXIT_FAILURE, f"{name}: {reason}" if name and name not in reason else reason)
        return ErrorReport(common.EXIT_BAD_INPUT, f"{name}: {reason}" if name else reason)
    if isinstance(exc, MemoryError):
        return ErrorReport(common.EXIT_FAILURE, "out of memory; try a smaller problem or fewer workers")
    return _internal(exc)


def report(exc: BaseException, as_json: bool) -> int:
    """Print `exc` as one message (stderr, and JSON on stdout with --json); return the exit code."""
    found = classify(exc)
    common.err_console.print(f"error: {found.message}", soft_wrap=True, markup=False)
    if as_json:
        common.emit_json(found.to_dict())
    return found.code
