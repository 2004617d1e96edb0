"""The one exception base of `solver`, and the errors every room of it shares.

Every exception the package raises on purpose derives from `SolverError`. Each class says what
kind of failure it is through ``exit_code`` (docs/design.md, "Errors and exit codes"): 2 when
the input cannot be solved as given (infeasible constraints, a malformed task graph), 3 when a
solver or an oracle failed on a valid input. The CLI maps errors to exit codes in one place
(`solver.cli.errors`) and never shows a traceback for them.
"""

from __future__ import annotations

from typing import NamedTuple

EXIT_BAD_INPUT = 2
EXIT_FAILURE = 3


class Words(NamedTuple):
    """How a message names the settings it suggests."""

    resume: str
    force: str
    out: str


#: the library's words (`solver.api`'s keywords, `solver.job.JobSettings`) and the command line's
LIBRARY_WORDS = Words("resume=True", "force=True", "out_dir")
COMMAND_LINE_WORDS = Words("--resume", "--force", "--out")


class SolverError(Exception):
    """Something `solver` cannot do with this input; the message is one line for a person.

    A message that suggests a setting is made by `worded`: ``str(error)`` names it as the library
    takes it (``resume=True``), ``command_line`` as the command line does (``--resume``): the
    message `solver.cli.errors` shows."""

    exit_code = EXIT_FAILURE

    def __init__(self, *args: object, command_line: str | None = None) -> None:
        super().__init__(*args)
        self.command_line = command_line

    @classmethod
    def worded(cls, template: str, **values: object) -> SolverError:
        """The error whose message is ``template.format(**values)`` with ``{resume}``, ``{force}``
        and ``{out}`` in `LIBRARY_WORDS` (``str(error)``) and `COMMAND_LINE_WORDS`
        (``error.command_line``)."""
        library = template.format(**LIBRARY_WORDS._asdict(), **values)
        return cls(library, command_line=template.format(**COMMAND_LINE_WORDS._asdict(), **values))

    def for_command_line(self) -> str:
        """The message in the command line's words."""
        return str(self) if self.command_line is None else self.command_line


class BadProblemError(SolverError, ValueError):
    """The problem as stated cannot be solved (bad input, not a solver failure)."""

    exit_code = EXIT_BAD_INPUT


class Infeasible(BadProblemError):
    """No plan satisfies the spec's constraints; the message names the conflicting ones."""


class SolverFailed(SolverError):
    """A solver step failed on a valid input (the message names the step and the reason)."""
