"""The one exception base of `solver`, and the errors every room of it shares.

Every exception the package raises on purpose derives from `SolverError`. Each class says what
kind of failure it is through ``exit_code`` (docs/design.md, "Errors and exit codes"): 2 when
the input cannot be solved as given (infeasible constraints, a malformed task graph), 3 when a
solver or an oracle failed on a valid input. The CLI maps errors to exit codes in one place
(`solver.cli.errors`) and never shows a traceback for them.
"""

from __future__ import annotations

EXIT_BAD_INPUT = 2
EXIT_FAILURE = 3


class SolverError(Exception):
    """Something `solver` cannot do with this input; the message is one line for a person."""

    exit_code = EXIT_FAILURE


class BadProblemError(SolverError, ValueError):
    """The problem as stated cannot be solved (bad input, not a solver failure)."""

    exit_code = EXIT_BAD_INPUT


class Infeasible(BadProblemError):
    """No plan satisfies the spec's constraints; the message names the conflicting ones."""


class SolverFailed(SolverError):
    """A solver step failed on a valid input (the message names the step and the reason)."""
