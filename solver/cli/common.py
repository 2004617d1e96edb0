"""Conventions shared by every `tasksolve` command.

Exit codes (scripts can rely on them):

* 0 -- success;
* 1 -- the command ran but the answer is negative (e.g. a plan is not certified);
* 2 -- bad input: a malformed spec, an impossible constraint, unreadable data;
* 3 -- a failure outside the input: an oracle or solver failed;
* 130 -- interrupted (Ctrl-C); finished work has been kept.
* 143 -- terminated (SIGTERM); finished work has been kept.

Results a person reads go to stdout (as text, or as JSON with ``--json``); errors go to stderr as
one message, never a traceback.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

from rich.console import Console

EXIT_OK = 0
EXIT_NEGATIVE = 1
EXIT_BAD_INPUT = 2
EXIT_FAILURE = 3
EXIT_INTERRUPTED = 130

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


class CliError(Exception):
    """An error to report as one line on stderr, with an exit code."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """Stop the command with `message` on stderr and exit `code`."""
    raise CliError(message, code)


def to_json_text(obj: Any) -> str:
    """Serialise a result for ``--json`` (strict JSON: an infinity or NaN is null, its reason under ``nulls``)."""
    from tasksolve.specs.files import json_text

    return json_text(obj)


def write_json_atomic(path, data: Any) -> None:
    """Write a result as JSON (as ``--json`` prints it), atomically."""
    from tasksolve.specs.files import write_json_atomic as write

    write(path, data)


def emit_json(obj: Any) -> None:
    """Print a result as JSON on stdout (the real one, where `main` sent the rest of a ``--json``
    command's stdout to stderr: `solver.stdout_guard`)."""
    from tasksolve.solver.stdout_guard import result_stdout

    text = to_json_text(obj) + "\n"
    with result_stdout():
        sys.stdout.write(text)
        sys.stdout.flush()


def load_spec_or_fail(path: str):
    """Load a spec (a file, or a built-in example's name) or stop with its located errors."""
    from tasksolve.specs import SpecError, load_spec

    try:
        return load_spec(path)
    except SpecError as exc:
        fail(spec_error_text(exc))


def spec_error_text(exc, most: int = 10) -> str:
    """The located problems of a SpecError, one per line (at most `most`)."""
    lines = exc.lines()
    text = "\n".join(lines[:most])
    if len(lines) > most:
        text += f"\n... and {len(lines) - most} more problem(s)"
    return text


def spec_error_json(exc) -> list[dict]:
    from tasksolve.specs.errors import format_path

    return [
        {"file": file, "line": line, "column": col, "field": format_path(path), "message": message}
        for file, line, col, path, message in exc.problems
    ]


def load_binding_spec_or_fail(path: str):
    """A spec whose problem is `binding` (one thread per task), or stop with a pointer to `pipeline`."""
    spec = load_spec_or_fail(path)
    if spec.problem != "binding":
        fail(f"{path}: `problem: {spec.problem}` -- use `tasksolve pipeline` for pipeline problems")
    return spec


def choices_or_fail(text: str, allowed: tuple[str, ...], what: str = "method") -> list[str]:
    """``all`` or a comma-separated list of names from `allowed`, in `allowed` order."""
    requested = list(allowed) if text == "all" else [item.strip() for item in text.split(",")]
    for item in requested:
        if item not in allowed:
            from tasksolve.specs.errors import did_you_mean

            fail(f"unknown {what} `{item}` (one of {', '.join(allowed)}, all){did_you_mean(item, allowed)}")
    return [item for item in allowed if item in requested]


def check_oracle_kind(kind: str) -> str:
    """`kind` if the oracle registry (`simulate.registry`) knows it, else stop (exit 2)."""
    from tasksolve.simulate import registry

    if kind not in registry.KINDS:
        fail(registry.unknown_message(kind))
    return kind


def chosen_oracle(option: str | None, spec, allow_commands: bool) -> str:
    """The oracle a command measures with: `option` (``--oracle``), else the spec's ``oracle.kind``.
    A spec's own ``kind: command`` runs its program only when the command line opts in
    (``--allow-commands``, or ``--oracle command``): a spec from elsewhere never runs a program
    unasked (exit 2, naming the program)."""
    kind = check_oracle_kind(option or spec.oracle.kind)
    if kind == "command" and option is None and not allow_commands:
        from tasksolve.simulate.command import resolve_program

        argv = spec.oracle.command or []
        program = resolve_program(spec, str(argv[0])) if argv else "(none named)"
        fail(
            f"{spec.source or spec.name}: oracle.kind is command: measuring would run the program "
            f"{shorten(program)} (oracle.command); add --allow-commands (or --oracle command) to run it"
        )
    return kind


def shorten(text: str, most: int = 300) -> str:
    """`text` cut to `most` characters (error messages never carry unbounded values)."""
    return text if len(text) <= most else text[: most - 3] + "..."
