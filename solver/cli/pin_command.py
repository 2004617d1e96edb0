"""``tasksolve pin PLAN.yaml --format FORMAT [--json]``: the plan in another tool's terms
(`specs.exporters.pinning`: a taskset launcher script that pins each thread by name, numactl,
likwid-pin and OpenMP launchers, DPDK --lcores, a systemd drop-in, JSON), with the OS CPU numbers
of the spec's topology; ``--json`` prints the text with every thread's CPU and NUMA node."""

from __future__ import annotations

from pathlib import Path

import typer

from tasksolve.solver.cli import options
from tasksolve.solver.cli.common import console, emit_json, fail, load_spec_or_fail
from tasksolve.specs.errors import PATH_MOST, shorten
from tasksolve.specs.exporters.pinning import FORMATS


def _spec_for(plan_path: Path, spec_path: str | None):
    """The spec named with --spec, else the one the plan records (`Plan.spec_file`, relative to the
    plan's folder), else -- plans written before it -- the built-in example the plan names."""
    if spec_path is not None:
        return load_spec_or_fail(spec_path)
    import yaml

    from tasksolve.specs.loader import builtin_names, builtin_path
    from tasksolve.specs.plan import load_plan

    plan = load_plan(plan_path)
    recorded = plan.resolve_spec_file(plan_path)
    if recorded is not None:
        return load_spec_or_fail(recorded)
    name = plan.spec
    if name is None:
        fail(f"{plan_path}: the plan does not name its spec; give it with --spec SPEC")
    for example in builtin_names(""):
        if example == name or (yaml.safe_load(builtin_path("", example).read_text()) or {}).get("name") == name:
            return load_spec_or_fail(example)
    fail(
        f"{plan_path}: the plan is for spec `{name}`, which is not a built-in example; give the spec file "
        "with --spec SPEC"
    )


def _formats_help() -> str:
    """The formats, one line each, for ``pin --help`` (Click keeps a paragraph after ``\\b`` as is)."""
    width = max(len(name) for name in FORMATS)
    return "\b\nFormats (--format):\n" + "\n".join(
        f"  {name:<{width}}  {form.summary}" for name, form in FORMATS.items()
    )


def pin(
    plan_path: Path = typer.Argument(
        ..., metavar="PLAN.yaml", help="A plan file (solve/run/pipeline --out DIR write DIR/plan.yaml)."
    ),
    form: str = typer.Option(..., "--format", "-f", help=f"One of {', '.join(FORMATS)} (below)."),
    spec_path: str | None = typer.Option(
        None,
        "--spec",
        "-s",
        metavar="SPEC",
        help="The plan's spec (a file or built-in name). Default: the spec the plan records (plans written by "
        "solve, pipeline and run record it), else the built-in example the plan names.",
    ),
    output: Path | None = options.output_file_option("the lines"),
    old_out: Path | None = options.old_out_file_option(),
    as_json: bool = options.json_option(),
) -> None:
    from tasksolve.specs.errors import did_you_mean
    from tasksolve.specs.exporters.pinning import pinning_data
    from tasksolve.specs.plan import load_plan

    out = options.deprecated(output, old_out, "--out FILE", "--output FILE")
    if form not in FORMATS:
        fail(f"unknown format `{form}` (one of {', '.join(FORMATS)}){did_you_mean(form, FORMATS)}")
    spec = _spec_for(plan_path, spec_path)
    plan = load_plan(plan_path, spec)
    data = pinning_data(spec, plan, form)
    if out is not None:
        from tasksolve.specs.files import write_text_atomic

        write_text_atomic(out, data["text"])
    if as_json:
        emit_json({**data, **({"written": str(out)} if out is not None else {})})
    elif out is not None:
        console.print(f"wrote {shorten(str(out), PATH_MOST)}", markup=False)
    else:
        typer.echo(data["text"], nl=False)


pin.__doc__ = (
    "How to run each thread of a plan on its hardware context, in another tool's terms: a launcher script, "
    "an option or a configuration file, with the topology's OS CPU numbers.\n\n"
    "CPU numbers come from the topology's os_cpus (`tasksolve topology host` imports them); a topology without "
    "them gives flat context indices, and the output says so. docs/pinning.md shows each format.\n\n" + _formats_help()
)


def register(app: typer.Typer) -> None:
    app.command("pin")(pin)
