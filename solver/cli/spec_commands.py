"""Spec commands: ``validate``, ``schema``, ``examples``, ``count``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer

from solver.cli.common import (
    EXIT_BAD_INPUT,
    console,
    emit_json,
    err_console,
    fail,
    load_spec_or_fail,
    spec_error_json,
    spec_error_text,
)

JSON_OPTION = typer.Option(False, "--json", help="Print the result as JSON on stdout.")


def validate(
    specs: list[str] = typer.Argument(..., help="Spec files (or built-in example names) to check."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Check spec files: syntax, types, units, references and constraints.

    Exit code 0 when every spec is valid, 2 when any is not (each problem is reported as
    file:line:column: field: message on stderr).
    """
    from specs import SpecError, load_spec

    results = []
    bad = 0
    for path in specs:
        try:
            spec = load_spec(path)
        except SpecError as exc:
            bad += 1
            results.append({"file": path, "valid": False, "errors": spec_error_json(exc)})
            if not as_json:
                err_console.print(spec_error_text(exc), soft_wrap=True, markup=False)
            continue
        summary = {
            "name": spec.name,
            "problem": spec.problem,
            "topology": spec.topology.name,
            "threads": len(spec.threads),
            "usable_contexts": len(spec.usable_contexts),
            "applications": list(spec.applications),
        }
        results.append({"file": path, "valid": True, "errors": [], "summary": summary})
        if not as_json:
            console.print(
                f"ok  {path}: {spec.name} ({spec.problem}), {len(spec.threads)} "
                f"{'threads' if spec.problem == 'binding' else 'tasks to group into threads'} "
                f"on {spec.topology.name} ({len(spec.usable_contexts)} usable contexts)",
                markup=False, soft_wrap=True,
            )
    if as_json:
        emit_json(results)
    if bad:
        raise typer.Exit(EXIT_BAD_INPUT)


def schema(
    out: Path | None = typer.Option(None, "--out", "-o", help="Write the schema to this file instead of stdout."),
) -> None:
    """Print the JSON Schema of the spec format (for editors such as yaml-language-server)."""
    from specs.schema import spec_json_schema

    text = json.dumps(spec_json_schema(), indent=2)
    if out is None:
        typer.echo(text)
    else:
        from specs.files import write_text_atomic

        write_text_atomic(out, text + "\n")
        console.print(f"wrote {out}", markup=False)


def examples(
    name: str | None = typer.Argument(None, help="An example to show (or copy with --copy)."),
    copy: Path | None = typer.Option(None, "--copy", help="Copy the example (or, without NAME, all of them) into this directory."),
    as_json: bool = JSON_OPTION,
) -> None:
    """List the built-in example specs, topologies and applications; copy one out with --copy."""
    from specs import SpecError, load_spec
    from specs.loader import builtin_names, builtin_path

    names = builtin_names("")
    if name is not None and name not in names:
        from specs.errors import did_you_mean

        fail(f"no built-in example `{name}`{did_you_mean(name, names)} (see `tasksolve examples`)")
    chosen = [name] if name else names
    if copy is not None:
        copy.mkdir(parents=True, exist_ok=True)
        written = []
        for example in chosen:
            target = copy / f"{example}.yaml"
            shutil.copyfile(builtin_path("", example), target)
            written.append(str(target))
        if as_json:
            emit_json({"copied": written})
        else:
            for target in written:
                console.print(f"wrote {target}", markup=False)
        return
    rows = []
    for example in chosen:
        try:
            spec = load_spec(example)
        except SpecError as exc:  # a broken built-in is a bug worth seeing, not hiding
            fail(spec_error_text(exc), code=3)
        rows.append({
            "name": example, "problem": spec.problem, "topology": spec.topology.name,
            "threads": len(spec.threads), "description": spec.description or "",
            "applications": {a: app.description or "" for a, app in spec.applications.items()},
        })
    if as_json:
        emit_json({"specs": rows, "topologies": builtin_names("topologies"), "applications": builtin_names("apps")})
        return
    if name is not None:
        console.print(builtin_path("", name).read_text(), markup=False)
        return
    from rich.table import Table

    table = Table(title="built-in example specs", title_justify="left")
    for column in ("name", "problem", "threads", "topology"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["name"], row["problem"], str(row["threads"]), row["topology"])
    console.print(table)
    console.print(f"topologies: {', '.join(builtin_names('topologies'))}", markup=False)
    console.print(f"applications: {', '.join(builtin_names('apps'))}", markup=False)
    console.print("copy one out with `tasksolve examples NAME --copy DIR`", markup=False)


def count(
    spec_path: str = typer.Argument(..., metavar="SPEC", help="A spec file or built-in example name."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Count placements: every thread on its own usable context, all and distinct modulo symmetry.

    Threads are distinguishable; two placements are the same when a symmetry of the hardware
    (exchanging identical cores, pipes, strands, ...) maps one onto the other.  Only
    constraints.contexts is taken into account (pins and caps are not).
    """
    from specs import UsableTree, count_distinct, count_placements
    from specs.counting import scientific

    spec = load_spec_or_fail(spec_path)
    threads = len(spec.threads)
    contexts = len(spec.usable_contexts)
    placements = count_placements(threads, contexts)
    distinct = count_distinct(UsableTree.of(spec.topology, spec.usable_contexts), threads)
    if as_json:
        emit_json({"threads": threads, "contexts": contexts, "placements": placements,
                   "distinct_placements": distinct,
                   "placements_sci": scientific(placements), "distinct_placements_sci": scientific(distinct)})
        return
    console.print(f"{spec.name}: {threads} threads on {contexts} usable contexts of {spec.topology.name}", markup=False)
    console.print(f"placements           {placements}  ({scientific(placements)})", markup=False)
    console.print(f"distinct placements  {distinct}  ({scientific(distinct)})  modulo hardware symmetry", markup=False)


def register(app: typer.Typer) -> None:
    """Attach the spec commands to the `tasksolve` application."""
    app.command()(validate)
    app.command()(schema)
    app.command()(examples)
    app.command()(count)
