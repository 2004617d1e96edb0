"""The `tasksolve` command line (Typer).

Each command lives in its own module under `solver.cli` and exposes ``register(app)``; this
module assembles them and turns every `CliError` (and Ctrl-C) into one message and an exit code,
as `solver.cli.common` documents.
"""

from __future__ import annotations

import contextlib
import signal
import sys

import typer

from tasksolve.solver import stdout_guard
from tasksolve.solver.cli import common, errors

app = typer.Typer(
    name="tasksolve",
    help=(
        "Place multithreaded, software-pipelined programs on processors with shared resources: "
        "validate YAML specs, count and search placements, measure them, certify them."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # Click's plain help: paragraphs re-wrapped to the terminal, no type metavars on flags
    # a terminal's width up to 100 columns (Click's default stops at 80)
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def tasksolve_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # only for --version

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
    allow_outside: bool = typer.Option(
        False,
        "--allow-outside-references",
        help="Let specs refer to topology and application files outside their own folder (off: a spec "
        "can name built-ins and files under its folder only).",
    ),
) -> None:
    """tasksolve: which placement, how good is it, how good could it be."""
    from tasksolve.specs.loader import ALLOW_OUTSIDE

    _allow_tokens.append(ALLOW_OUTSIDE.set(allow_outside))  # main() resets it after this invocation


_allow_tokens: list = []  # what the root option set, undone when the invocation ends


def _register_commands() -> None:
    from tasksolve.solver.cli import (
        calibrate_command,
        certify_command,
        evt_command,
        makespan_command,
        pin_command,
        pipeline_command,
        simulate_command,
        solve_command,
        spec_commands,
        topology_command,
    )

    spec_commands.register(app)  # validate, schema, examples, count
    certify_command.register(app)  # certify, run
    solve_command.register(app)
    simulate_command.register(app)
    pipeline_command.register(app)
    makespan_command.register(app)
    evt_command.register(app)
    topology_command.register(app)  # topology host, import, show
    pin_command.register(app)
    calibrate_command.register(app)
    _whole_sentences(app)
    _whole_sentences(topology_command.topology_app)


def _whole_sentences(typer_app: typer.Typer) -> None:
    """Each command's line in the command list is the first paragraph of its help, whole (Click
    would cut it at 45-65 characters, mid-sentence), re-wrapped to the terminal by Click."""
    import inspect

    def first_paragraph(text: str) -> str:
        return " ".join(inspect.cleandoc(text).split("\n\n")[0].split())

    for info in typer_app.registered_commands:
        text = info.help or (info.callback.__doc__ if info.callback else None) or ""
        if info.short_help is None and text:
            info.short_help = first_paragraph(text)
    for group in typer_app.registered_groups:  # unset fields of a group are Typer's placeholders
        text = group.typer_instance.info.help if group.typer_instance else None
        if not isinstance(group.short_help, str) and isinstance(text, str):
            group.short_help = first_paragraph(text)


_register_commands()


def _click_exceptions():
    """Click's exception classes, as the installed Typer uses them (recent Typer vendors Click)."""
    try:
        from typer._click import exceptions
    except ImportError:  # Typer that depends on Click itself
        from click import exceptions
    return exceptions


_signals: list[int] = []


def _raise_terminated(signum, frame) -> None:
    _signals.append(signum)
    raise errors.Terminated()


def _reset_allow_outside() -> None:
    """Undo the root option's ``--allow-outside-references`` (set for one invocation only); the
    spec loader is imported only if a command loaded it, so ``--version`` stays light."""
    while _allow_tokens:
        from tasksolve.specs.loader import ALLOW_OUTSIDE

        ALLOW_OUTSIDE.reset(_allow_tokens.pop())


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (see `solver.cli.common`).

    Usage errors (unknown command, missing argument) are Click's own messages with exit code 2;
    every other failure goes through `solver.cli.errors`, the CLI's one error path.  With
    ``--json`` the command runs with stdout pointed at stderr and only its JSON printed on the real
    stdout (`solver.stdout_guard`), so a library's stray line cannot break the JSON.  SIGTERM
    exits 143 however the command reported the interruption (a command that catches
    KeyboardInterrupt to say how to resume reports 130, Ctrl-C's code).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    _signals.clear()
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    # with --json, stdout is the JSON alone: what anything else prints there goes to stderr
    guard = stdout_guard.stdout_to_stderr() if "--json" in args else contextlib.nullcontext()
    try:
        with guard:
            code = _invoke(args)
    finally:
        signal.signal(signal.SIGTERM, previous)
        _reset_allow_outside()
    if code == common.EXIT_INTERRUPTED and _signals:
        return errors.EXIT_TERMINATED
    return code


def _invoke(args: list[str]) -> int:
    """Run the command line `args`; every outcome becomes an exit code."""
    exceptions = _click_exceptions()
    try:
        result = app(args=args, prog_name="tasksolve", standalone_mode=False)
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:  # Click turns a KeyboardInterrupt (SIGTERM's too) or an end of input into Abort
        return errors.report(errors.Terminated() if _signals else KeyboardInterrupt(), "--json" in args)
    except exceptions.ClickException as exc:
        exc.show()
        return exc.exit_code
    except BaseException as exc:
        if isinstance(exc, SystemExit):
            return exc.code if isinstance(exc.code, int) else common.EXIT_OK if exc.code is None else 1
        return errors.report(exc, "--json" in args)
    if result == common.EXIT_INTERRUPTED:  # Typer returns 130 for a KeyboardInterrupt it caught
        return errors.report(errors.Terminated() if _signals else KeyboardInterrupt(), "--json" in args)
    return result if isinstance(result, int) else common.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
