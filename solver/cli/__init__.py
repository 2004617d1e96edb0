"""The `tasksolve` command line (Typer).

Each command lives in its own module under `solver.cli` and exposes ``register(app)``; this
module assembles them and turns every `CliError` (and Ctrl-C) into one message and an exit code,
as `solver.cli.common` documents.
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

import typer

from solver.cli import common

app = typer.Typer(
    name="tasksolve",
    help=(
        "Place multithreaded, software-pipelined programs on processors with shared resources: "
        "validate YAML specs, count and search placements, measure them, certify them."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def tasksolve_version() -> str:
    try:
        return version("tasksolve")
    except PackageNotFoundError:  # running from a source tree without installation
        return "0+unknown"


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"tasksolve {tasksolve_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version_: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """tasksolve: which placement, how good is it, how good could it be."""


def _register_commands() -> None:
    from solver.cli import (
        certify_command,
        evt_command,
        makespan_command,
        pipeline_command,
        simulate_command,
        solve_command,
        spec_commands,
    )

    spec_commands.register(app)        # validate, schema, examples, count
    certify_command.register(app)      # certify, run
    solve_command.register(app)
    simulate_command.register(app)
    pipeline_command.register(app)
    makespan_command.register(app)
    evt_command.register(app)


_register_commands()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code.

    Usage errors (unknown command, missing argument) are Typer's own messages with exit code 2.
    """
    try:
        app(args=argv, prog_name="tasksolve")
    except common.CliError as exc:
        common.err_console.print(f"error: {exc.message}", soft_wrap=True, markup=False)
        return exc.code
    except KeyboardInterrupt:
        common.err_console.print("interrupted; finished work has been kept")
        return common.EXIT_INTERRUPTED
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return common.EXIT_OK
        return code if isinstance(code, int) else common.EXIT_FAILURE
    return common.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
