"""Spec commands: ``validate``, ``schema``, ``examples``, ``count``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from tasksolve.solver.cli import options
from tasksolve.solver.cli.common import (
    EXIT_BAD_INPUT,
    console,
    emit_json,
    err_console,
    fail,
    load_spec_or_fail,
    spec_error_json,
    spec_error_text,
)
from tasksolve.specs.errors import PATH_MOST, shorten

JSON_OPTION = typer.Option(False, "--json", help="Print the result as JSON on stdout.")


def _summary(loaded) -> tuple[dict, str]:
    """What a valid file holds, as JSON and as one line of text."""
    value = loaded.value
    if loaded.kind == "spec":
        unit = "threads" if value.problem == "binding" else "tasks to group into threads"
        program = _program(value)
        return (
            {
                "name": value.name,
                "problem": value.problem,
                "topology": value.topology.name,
                "threads": len(value.threads),
                "usable_contexts": len(value.usable_contexts),
                "applications": list(value.applications),
                "runs_program": program,
            },
            f"{value.name} ({value.problem}), {len(value.threads)} {unit} on {value.topology.name} "
            f"({len(value.usable_contexts)} usable contexts)"
            + (
                f"; its oracle runs the program {program} (only with --allow-commands or --oracle command)"
                if program
                else ""
            ),
        )
    if loaded.kind == "topology":
        from tasksolve.specs.display import frequency

        return (
            {
                "name": value.name,
                "contexts": len(value.present_contexts),
                "levels": [lv.name for lv in value.levels],
                "clock_hz": value.clock,
                "resources": value.resource_names,
            },
            f"topology {value.name}: {value.describe()} at {frequency(value.clock)}",
        )
    return (
        {"tasks": len(value.tasks), "edges": len(value.edges)},
        f"application of {len(value.tasks)} tasks and {len(value.edges)} edges (the resources its "
        "demands name are checked against a topology when a spec uses it)",
    )


def _nothing_converted(kind: str) -> str:
    if kind == "spec":
        return "no measured demand to convert: every share is as the spec gives it"
    return f"nothing to convert in {kind} alone: a conversion needs a spec's topology and its tasks"


def _converted(loaded) -> list[str]:
    """How a spec's measured demands became shares (`specs.measured.explain`); none for a
    topology or an application alone (the conversion needs both)."""
    if loaded.kind != "spec":
        return []
    from tasksolve.specs.measured import explain

    return explain(loaded.value)


def _program(spec) -> str | None:
    """The program a spec's command oracle would run (argv[0] resolved), None for another oracle."""
    if spec.oracle.kind != "command" or not spec.oracle.command:
        return None
    from tasksolve.simulate.command import resolve_program

    return resolve_program(spec, str(spec.oracle.command[0]))


def validate(
    specs: list[str] = typer.Argument(..., help="Spec, topology or application files (or built-in names) to check."),
    as_json: bool = JSON_OPTION,
    explain: bool = typer.Option(
        False,
        "--explain",
        help="Also print how each measured demand (256B on a 200GB/s resource, 2MiB on a 32MiB one) "
        "became the share of capacity the model uses.",
    ),
) -> None:
    """Check spec, topology and application files: syntax, types, units, references, and that
    the constraints can be met (placements exist, latency_max is above the critical path).

    The kind of each file is read from its keys.  Exit code 0 when every file is valid, 2 when
    any is not (each problem is reported as file:line:column: field: message on stderr).
    """
    from tasksolve.specs import SpecError
    from tasksolve.specs.kinds import load_any

    results = []
    bad = 0
    for path in specs:
        try:
            loaded = load_any(path)
        except SpecError as exc:
            bad += 1
            results.append({"file": path, "valid": False, "errors": spec_error_json(exc)})
            if not as_json:
                err_console.print(spec_error_text(exc), soft_wrap=True, markup=False)
            continue
        summary, line = _summary(loaded)
        results.append({"file": path, "kind": loaded.kind, "valid": True, "errors": [], "summary": summary})
        converted = _converted(loaded) if explain else []
        if explain:
            results[-1]["conversions"] = converted
        if not as_json:
            console.print(f"ok  {path}: {line}", markup=False, soft_wrap=True)
            for text in converted:
                console.print(f"    {text}", markup=False, soft_wrap=True)
            if explain and not converted:
                console.print(f"    {_nothing_converted(loaded.kind)}", markup=False)
    if as_json:
        emit_json(results)
    if bad:
        raise typer.Exit(EXIT_BAD_INPUT)


def schema(
    output: Path | None = options.output_file_option("the schema"),
    old_out: Path | None = options.old_out_file_option(),
    certificate: bool = typer.Option(
        False, "--certificate", help="The JSON Schema of certificate.json instead of the spec format's."
    ),
) -> None:
    """Print the JSON Schema of the spec format (for editors such as yaml-language-server), or of
    the certificate (--certificate)."""
    out = options.deprecated(output, old_out, "--out FILE", "--output FILE")
    if certificate:
        from tasksolve.solver.certify.certificate import certificate_schema

        text = json.dumps(certificate_schema(), indent=2)
    else:
        from tasksolve.specs.schema import spec_json_schema

        text = json.dumps(spec_json_schema(), indent=2)
    if out is None:
        typer.echo(text)
    else:
        from tasksolve.specs.files import write_text_atomic

        write_text_atomic(out, text + "\n")
        console.print(f"wrote {shorten(str(out), PATH_MOST)}", markup=False)


def _example_rows() -> dict[str, list[dict]]:
    """Every built-in, by kind, with what a listing shows."""
    from tasksolve.specs import SpecError
    from tasksolve.specs.kinds import all_builtins, load_any

    rows: dict[str, list[dict]] = {"specs": [], "topologies": [], "applications": []}
    for kind, names in all_builtins().items():
        for example in names:
            try:
                value = load_any(example).value
            except SpecError as exc:  # a broken built-in is a bug worth seeing, not hiding
                fail(spec_error_text(exc), code=3)
            row = {"name": example, "description": value.description or ""}
            if kind == "spec":
                row.update(
                    problem=value.problem,
                    topology=value.topology.name,
                    threads=len(value.threads),
                    applications={a: app.description or "" for a, app in value.applications.items()},
                )
                rows["specs"].append(row)
            elif kind == "topology":
                row.update(contexts=len(value.present_contexts), levels=[lv.name for lv in value.levels])
                rows["topologies"].append(row)
            else:
                row.update(tasks=len(value.tasks))
                rows["applications"].append(row)
    return rows


def _copy_examples(chosen: list[tuple[str, str, Path]], folder: Path, force: bool) -> list[dict]:
    """Copy built-ins into `folder` (topologies and applications into its `topologies/` and `apps/`
    subfolders, as in the library); a file that differs from the built-in is kept unless `force`."""
    from tasksolve.specs.files import write_text_atomic
    from tasksolve.specs.kinds import FOLDERS

    plan = []
    for kind, example, source in chosen:
        target = folder / FOLDERS[kind] / f"{example}.yaml" if FOLDERS[kind] else folder / f"{example}.yaml"
        text = source.read_text()
        try:
            state = "unchanged" if target.read_text() == text else "edited"
        except FileNotFoundError:
            state = "new"
        except (OSError, UnicodeDecodeError):
            state = "edited"
        plan.append((target, text, state))
    edited = [str(target) for target, _, state in plan if state == "edited"]
    if edited and not force:
        fail(
            f"{len(edited)} file(s) differ from the built-in and would be overwritten: "
            f"{', '.join(edited[:5])}{' ...' if len(edited) > 5 else ''}; --force overwrites them"
        )
    done = []
    for target, text, state in plan:
        if state != "unchanged":
            target.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(target, text)
        done.append({"file": str(target), "state": {"new": "written", "edited": "overwritten"}.get(state, state)})
    return done


def examples(
    name: str | None = typer.Argument(
        None, help="A built-in spec, topology or application to show (or copy with --copy)."
    ),
    copy: Path | None = typer.Option(
        None, "--copy", help="Copy the example (or, without NAME, all of them) into this directory."
    ),
    force: bool = typer.Option(False, "--force", help="With --copy: overwrite files that differ from the built-in."),
    as_json: bool = JSON_OPTION,
) -> None:
    """List the built-in example specs, topologies and applications; show one, or copy it out with
    --copy (a copied file that was edited since is kept unless --force)."""
    from tasksolve.specs.kinds import FOLDERS, all_builtins, find_builtin, unknown_builtin
    from tasksolve.specs.loader import builtin_path

    if name is not None:
        found = find_builtin(name)
        if found is None:
            fail(f"{unknown_builtin(name)} (see `tasksolve examples`)")
        chosen = [(found[0], name, found[1])]
    else:
        chosen = [(kind, n, builtin_path(FOLDERS[kind], n)) for kind, names in all_builtins().items() for n in names]
    if copy is not None:
        done = _copy_examples(chosen, copy, force)
        if as_json:
            emit_json({"copied": done})
        else:
            for item in done:
                console.print(f"{item['state']:<10} {item['file']}", markup=False, soft_wrap=True)
        return
    if name is not None:
        text = chosen[0][2].read_text()
        if as_json:
            emit_json({"name": name, "kind": chosen[0][0], "text": text})
        else:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    rows = _example_rows()
    if as_json:
        emit_json(rows)
        return
    _print_listing(rows)


def _print_listing(rows: dict[str, list[dict]]) -> None:
    from rich.table import Table

    columns = {
        "specs": ("name", "problem", "threads", "topology"),
        "topologies": ("name", "contexts", "description"),
        "applications": ("name", "tasks", "description"),
    }
    for kind, names in columns.items():
        table = Table(title=f"built-in {kind if kind != 'specs' else 'example specs'}", title_justify="left")
        for column in names:
            table.add_column(column)
        for row in rows[kind]:
            table.add_row(*(str(row[c]) for c in names))
        console.print(table)
    console.print(
        "show one with `tasksolve examples NAME`, copy it out with `tasksolve examples NAME --copy DIR`", markup=False
    )


# The most coefficient products `count` spends on the distinct placements (a few seconds).
COUNT_WORK = 150_000
SHOWN_DIGITS = 100


def _count_text(value: int | None) -> str:
    """A count for people: exact up to SHOWN_DIGITS digits, else rounded with a clear note."""
    from tasksolve.specs.counting import digits, scientific

    if value is None:
        return "not counted: the exact count would take too long"
    text = digits(value)
    if len(text) <= SHOWN_DIGITS:
        return text if value < 1000 else f"{text}  ({scientific(value)})"
    return f"about {scientific(value)}  (rounded; the exact value has {len(text)} digits: see --json)"


def count(
    spec_path: str = typer.Argument(..., metavar="SPEC", help="A spec file or built-in example name."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Count placements: every thread on its own usable context, all and distinct modulo symmetry.

    Threads are distinguishable; two placements are the same when a symmetry of the hardware
    (exchanging identical cores, pipes, strands, ...) maps one onto the other.  Only
    constraints.contexts is taken into account (pins and caps are not).  Counts are exact
    integers; long ones are shown rounded with the number of digits, and exactly with --json.
    """
    from tasksolve.specs import UsableTree, count_distinct, count_placements
    from tasksolve.specs.counting import digits, json_count, scientific

    spec = load_spec_or_fail(spec_path)
    threads = len(spec.threads)
    contexts = len(spec.usable_contexts)
    placements = count_placements(threads, contexts)
    distinct = count_distinct(UsableTree.of(spec.topology, spec.usable_contexts), threads, max_work=COUNT_WORK)
    if as_json:
        emit_json(
            {
                "threads": threads,
                "contexts": contexts,
                "placements": json_count(placements),
                "distinct_placements": json_count(distinct),
                "placements_sci": scientific(placements),
                "placements_digits": len(digits(placements)),
                "distinct_placements_sci": None if distinct is None else scientific(distinct),
                "distinct_placements_digits": None if distinct is None else len(digits(distinct)),
            }
        )
        return
    console.print(f"{spec.name}: {threads} threads on {contexts} usable contexts of {spec.topology.name}", markup=False)
    console.print(f"placements           {_count_text(placements)}", markup=False, soft_wrap=True)
    console.print(
        f"distinct placements  {_count_text(distinct)}" + ("  modulo hardware symmetry" if distinct else ""),
        markup=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    """Attach the spec commands to the `tasksolve` application."""
    app.command()(validate)
    app.command()(schema)
    app.command()(examples)
    app.command()(count)
