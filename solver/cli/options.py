"""The option vocabulary every `tasksolve` command shares: one spelling, one meaning, one default.

| option | meaning | default |
|---|---|---|
| ``SPEC`` | a spec file, or a built-in example's name (``tasksolve examples``) | -- |
| ``--json`` | the result as JSON on stdout (an error too, as ``{"error": ...}``) | off |
| ``--seed N`` | seed of everything random (N >= 0) | the spec's ``search.seed`` |
| ``--workers N`` | worker processes and CP-SAT workers; 0 = every core | ``search.workers``, else every core |
| ``--oracle KIND`` | the cost oracle that measures plans | the spec's ``oracle.kind`` |
| ``--time-limit T`` | CP-SAT's time limit: seconds (``60``) or a duration (``60s``, ``2min``, ``500ms``) | the spec's ``search.time_limit`` |
| ``--method/-m M`` | a method, a comma-separated list, or ``all`` | per command |
| ``--plan/-p FILE`` | a plan file to read | -- |
| ``--out/-o DIR`` | the directory results are written into (always a directory) | per command |
| ``--output FILE`` | the one file a command writes (schema, pin, calibrate, topology host/import) | stdout, or per command |
| ``--design D`` | how `certify` and `run` sample: ``local-optima`` or ``random`` | ``local-optima`` |
| ``--compare-samples N`` | plans of the other design, for its estimate beside the certificate's | 200 (at most the certificate's sample; 0 on the command oracle) |

Commands build their parameters from these factories so that help texts and defaults agree.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from tasksolve.specs.oracles import ORACLES
from tasksolve.specs.oracles import help_text as oracle_help

ORACLE_KINDS: tuple[str, ...] = tuple(ORACLES)  # from the spec vocabulary: no oracle is imported


def spec_argument() -> typer.models.ArgumentInfo:
    return typer.Argument(
        ...,
        metavar="SPEC",
        show_default=False,
        help="A spec file, or a built-in example's name (see `tasksolve examples`).",
    )


def json_option() -> typer.models.OptionInfo:
    return typer.Option(False, "--json", help="Print the result as JSON on stdout (errors too).")


def deterministic_option() -> typer.models.OptionInfo:
    return typer.Option(
        False,
        "--deterministic",
        help="CP-SAT counts the time limit in deterministic time with a fixed portfolio (and run and certify "
        "give the certify phase no wall-clock budget): the same results on every run and for every --workers "
        "(binding specs).",
    )


def seed_option() -> typer.models.OptionInfo:
    return typer.Option(None, "--seed", min=0, help="Seed of everything random. Default: the spec's search.seed.")


def workers_option() -> typer.models.OptionInfo:
    return typer.Option(
        None,
        "--workers",
        "-w",
        min=0,
        help="Worker processes and CP-SAT workers (0: every core). "
        "Default: the spec's search.workers, else every core.",
    )


def oracle_option() -> typer.models.OptionInfo:
    return typer.Option(
        None,
        "--oracle",
        metavar="|".join(ORACLE_KINDS),
        help=f"The cost oracle -- {oracle_help()}. Default: the spec's oracle.kind.",
    )


def allow_commands_option() -> typer.models.OptionInfo:
    return typer.Option(
        False,
        "--allow-commands",
        help="Run the program of the spec's oracle.command: a spec whose oracle.kind is command runs its "
        "program only with this flag (or --oracle command).",
    )


#: the shortest ``--time-limit``, seconds
MIN_TIME_LIMIT = 0.1


def parse_time_limit(text: str) -> float:
    """``--time-limit``: a number of seconds (``60``) or a duration with its unit (``60s``,
    ``2min``, ``500ms``), read by `specs.units.parse_seconds` as a spec's ``search.time_limit``
    is, at least `MIN_TIME_LIMIT`; bad text is Click's usage error naming the option (exit 2)."""
    from tasksolve.specs.units import UnitError, parse_seconds

    try:
        seconds = parse_seconds(text)
    except UnitError as exc:
        raise typer.BadParameter(str(exc)) from None
    if seconds < MIN_TIME_LIMIT:
        raise typer.BadParameter(f"must be at least {MIN_TIME_LIMIT:g}s, got {text!r}")
    return seconds


def time_limit_option(
    what: str = "CP-SAT's time limit", default: str = "the spec's search.time_limit"
) -> typer.models.OptionInfo:
    """``--time-limit T``: `what` T is, read by `parse_time_limit`; `default` when not given."""
    return typer.Option(
        None,
        "--time-limit",
        metavar="T",
        parser=parse_time_limit,
        help=f"{what}: seconds (60) or a duration with its unit (60s, 2min, 500ms). Default: {default}.",
    )


def plan_option(help_text: str) -> typer.models.OptionInfo:
    return typer.Option(None, "--plan", "-p", help=help_text)


def out_dir_option(default: Path | None, what: str) -> typer.models.OptionInfo:
    return typer.Option(default, "--out", "-o", help=f"Directory to write {what} into (created if needed).")


def output_file_option(what: str, default: Path | None = None) -> typer.models.OptionInfo:
    """``--output FILE``: the one file a command writes (``--out`` always names a directory)."""
    where = f"Default: {default}." if default is not None else "Default: printed on stdout."
    return typer.Option(None, "--output", metavar="FILE", help=f"Write {what} to FILE. {where}")


def old_out_file_option() -> typer.models.OptionInfo:
    """The spelling ``--out/-o FILE`` of `output_file_option` before ``--out`` meant a directory
    everywhere: hidden, accepted with a warning."""
    return typer.Option(None, "--out", "-o", hidden=True, metavar="FILE")


def deprecated(value, old_value, old: str, new: str, default=None):
    """An option renamed from `old` to `new`: the new option's value if given, else the old
    one's (with a warning on stderr), else `default`."""
    if value is not None:
        return value
    if old_value is not None:
        from tasksolve.solver.cli.common import err_console

        err_console.print(f"warning: {old} is deprecated here; use {new}", markup=False, highlight=False)
        return old_value
    return default


def resolve_workers(value: int | None, spec=None) -> int:
    """``--workers``: 0 or unset means the spec's ``search.workers``, else every core."""
    if value:
        return value
    configured = getattr(getattr(spec, "search", None), "workers", None)
    return configured or os.cpu_count() or 1


def resolve_seed(value: int | None, spec=None) -> int:
    return value if value is not None else int(getattr(getattr(spec, "search", None), "seed", 0))


def scheduler_option() -> typer.models.OptionInfo:
    return typer.Option(
        None,
        "--scheduler",
        metavar="ADDRESS",
        help="Measure on a Dask cluster (e.g. tcp://host:8786) instead of local worker processes.",
    )


def force_option() -> typer.models.OptionInfo:
    return typer.Option(
        False,
        "--force",
        help="Replace the finished samples already in OUT (without it, a run "
        "refuses to overwrite them: use --resume to continue them).",
    )


# solver.certify.service.DESIGNS and solver.certify.designs.DEFAULT_DESIGN, repeated here so that
# start-up imports no solver module (tests/solver/test_startup.py checks they agree)
DESIGNS = ("random", "local-optima")
DEFAULT_DESIGN = "local-optima"


def design_option() -> typer.models.OptionInfo:
    return typer.Option(
        DEFAULT_DESIGN,
        "--design",
        help="How the certificate samples plans: local-optima (each sample is a random start "
        "climbed to a local optimum: iid restarts, same optimum, far better sampled) or "
        "random (uniform plans, ASPLOS'12).",
    )


def compare_samples_option() -> typer.models.OptionInfo:
    return typer.Option(
        None,
        "--compare-samples",
        min=0,
        help="Plans of the other sampling design measured for its estimate beside the certificate's "
        "(shown, not used for the verdict; 0: none). Default: 200, at most the certificate's own "
        "sample, none on the command oracle.",
    )


def check_design(value: str) -> str:
    from tasksolve.solver.cli.common import fail

    if value not in DESIGNS:
        fail(f"--design: {value!r} is not a design; choose one of {', '.join(DESIGNS)}")
    return value


def samples_option() -> typer.models.OptionInfo:
    return typer.Option(
        None,
        "--samples",
        min=20,
        help="Fixed sample size for the certificate. Without it: local optima are sampled until the verdict is "
        "decided (first look at 100, then every 100), at most the spec's certify.samples, else 1000; "
        "random plans: the spec's certify.samples, else 5000.",
    )


def target_gap_option() -> typer.models.OptionInfo:
    return typer.Option(
        None, "--target-gap", help="Sample sequentially (ASPLOS'12 Figure 13) until within this gap (1% or 0.01)."
    )


def resume_option() -> typer.models.OptionInfo:
    return typer.Option(False, "--resume", help="Continue the samples already in OUT/samples.jsonl.")


def load_option() -> typer.models.OptionInfo:
    return typer.Option(
        None,
        "--load",
        metavar="SHARE",
        help="Pipelines: measure latency with arrivals at this share of each plan's maximum rate "
        "(found by bisection), e.g. 90% or 0.9. Default: the spec's oracle.load (90%).",
    )


def parse_share(text: str | None, option: str, valid, requirement: str) -> float | None:
    """A share option (``90%``, ``0.9``) as a float, None when not given; a unit error or a value
    `valid` refuses stops with one line: ``{option} {requirement} (got {text})``."""
    if text is None:
        return None
    from tasksolve.solver.cli.common import fail
    from tasksolve.specs.units import UnitError, parse_fraction

    try:
        value = parse_fraction(text)
    except UnitError as exc:
        fail(f"{option}: {exc}")
    if not valid(value):
        fail(f"{option} {requirement} (got {text})")
    return value


def parse_load(text: str | None) -> float | None:
    """``--load``: a share in (0, 1] (``90%``, ``0.9``), or None for the spec's."""
    return parse_share(text, "--load", lambda v: 0 < v <= 1, "must be a share of the maximum rate in (0, 1], e.g. 90%")
