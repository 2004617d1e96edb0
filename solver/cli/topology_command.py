"""``tasksolve topology host|import|show``: real machines as topologies (docs/design.md, "Real machines").

``host`` imports this machine from /sys, ``import`` an hwloc XML file (``lstopo --of xml``);
both print (or write with ``--output FILE``) a topology file whose comments say which values are
defaults. ``show`` prints any topology -- a built-in name, a file, ``host`` or an hwloc XML --
as an lstopo-like tree.
"""

from __future__ import annotations

from pathlib import Path

import typer

from tasksolve.solver.cli import options
from tasksolve.solver.cli.common import console, emit_json, fail
from tasksolve.specs.errors import PATH_MOST, shorten

topology_app = typer.Typer(
    help="Real machines as topologies: import this host or an hwloc XML file, show a topology.", no_args_is_help=True
)

OUT_FILE = options.output_file_option("the topology file (YAML)")
OLD_OUT = options.old_out_file_option()
NAME = typer.Option(None, "--name", help="The topology's name. Default: host.")
CLOCK = typer.Option(None, "--clock", help="The clock (e.g. 2.4GHz), when the source has none or another is wanted.")
CAPACITY = typer.Option(
    None,
    "--capacity",
    metavar="NAME=VALUE",
    help="Capacity of a resource (l1, l1i, l2, l3, mem), instead of the default 1.0; repeatable.",
)


def _options(name: str | None, clock: str | None, capacity: list[str] | None) -> dict:
    from tasksolve.specs.units import UnitError, parse_clock

    chosen: dict = {"name": name}
    if clock is not None:
        try:
            chosen["clock_hz"] = parse_clock(clock)
        except UnitError as exc:
            fail(f"--clock: {exc}")
    capacities = {}
    for item in capacity or []:
        key, sep, value = item.partition("=")
        try:
            capacities[key.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not key.strip():
            fail(f"--capacity `{item}`: expected NAME=VALUE, e.g. l3=2.0")
    chosen["capacities"] = capacities
    return chosen


def _emit(result, out: Path | None, as_json: bool) -> None:
    from tasksolve.specs.exporters.topology_text import topology_data, topology_yaml
    from tasksolve.specs.files import write_text_atomic

    text = topology_yaml(result.topology, result.notes)
    if out is not None:
        write_text_atomic(out, text)
    if as_json:
        emit_json(
            {
                "topology": topology_data(result.topology),
                "notes": result.notes,
                "summary": result.summary,
                **({"written": str(out)} if out is not None else {}),
            }
        )
    elif out is not None:
        console.print(f"wrote {shorten(str(out), PATH_MOST)}: {result.topology.describe()}", markup=False)
    else:
        typer.echo(text, nl=False)


def host(
    output: Path | None = OUT_FILE,
    old_out: Path | None = OLD_OUT,
    name: str | None = NAME,
    clock: str | None = CLOCK,
    capacity: list[str] | None = CAPACITY,
    as_json: bool = options.json_option(),
) -> None:
    """This machine's topology, read from /sys, each context with its OS CPU number.

    Sockets, NUMA nodes, shared caches, cores and SMT threads become the levels; a spec can also
    say `topology: host`.
    """
    from tasksolve.specs.importers.sysfs import host_topology

    out = options.deprecated(output, old_out, "--out FILE", "--output FILE")
    _emit(host_topology(**_options(name, clock, capacity)), out, as_json)


def import_command(
    file: Path = typer.Argument(..., metavar="FILE.xml", help="An hwloc XML file (lstopo --of xml FILE.xml)."),
    output: Path | None = OUT_FILE,
    old_out: Path | None = OLD_OUT,
    name: str | None = NAME,
    clock: str | None = CLOCK,
    capacity: list[str] | None = CAPACITY,
    as_json: bool = options.json_option(),
) -> None:
    """A topology from an hwloc XML file (written by `lstopo --of xml` on the machine to describe)."""
    from tasksolve.specs.importers.hwloc import import_hwloc

    out = options.deprecated(output, old_out, "--out FILE", "--output FILE")
    _emit(import_hwloc(file, **_options(name, clock, capacity)), out, as_json)


def show(
    topology: str = typer.Argument(
        ..., metavar="TOPOLOGY", help="A built-in topology name, a topology file, `host`, or an hwloc XML file."
    ),
    as_json: bool = options.json_option(),
) -> None:
    """An lstopo-like tree of a topology: levels, counts, resources and each context's CPU number."""
    from tasksolve.specs.exporters.topology_text import topology_data, topology_tree
    from tasksolve.specs.loader import load_topology, resolve_named_file

    if topology.endswith(".xml"):
        from tasksolve.specs.importers.hwloc import import_hwloc

        topo = import_hwloc(topology).topology
    else:
        topo = load_topology(topology if topology == "host" else resolve_named_file(topology, "topologies"))
    if as_json:
        usable = set(topo.usable_contexts)
        marks = (lambda c: {"usable": c in usable}) if topo.usable is not None else (lambda c: {})
        emit_json(
            {
                "topology": topology_data(topo),
                "contexts": [
                    {"context": topo.context_name(c), "os_cpu": topo.os_cpu(c), **marks(c)}
                    for c in topo.present_contexts  # an irregular tree: its padding holds no context
                ],
                "os_cpus_given": topo.os_cpus is not None,
            }
        )
        return
    for line in topology_tree(topo):
        console.print(line, markup=False, soft_wrap=True)


def probe(
    topology: str | None = typer.Option(
        None,
        "--topology",
        help="The topology the pairs are compared with and --output writes: host, a file, an hwloc XML or a "
        "sysfs tree. Default: host when measuring; with --load, none (a flat set of CPUs, never this host's).",
    ),
    cpus: str | None = typer.Option(None, "--cpus", help="CPUs to probe (0-3,8). Default: all of the topology's."),
    repeats: int = typer.Option(3, "--repeats", min=1, max=50, help="Repetitions, pairs shuffled in each."),
    out: Path | None = OUT_FILE,
    load: list[Path] | None = typer.Option(
        None,
        "--load",
        help="Analyse saved matrices instead of measuring, one file per repetition: the probe's CSV or a public "
        "core-to-core latency matrix (N x N, lower triangle, one-way ns).",
    ),
    backend: str = typer.Option("auto", "--backend", help="auto, compiled (C helper) or python (coarse)."),
    write_topology: Path | None = typer.Option(
        None,
        "--write-topology",
        metavar="FILE",
        help="Write the structure proposed from the latencies (when its groups form a uniform tree) as a topology file.",
    ),
    clock: str | None = typer.Option(
        None, "--clock", help="With --load and no --topology: the clock (e.g. 2.4GHz) that turns ns into cycles."
    ),
    as_json: bool = options.json_option(),
) -> None:
    """Measure this host (or load saved matrices): core-to-core latency and compute interference of
    every pair of CPUs, repeated; report populations, hidden sharing and unstable placement, propose
    the sharing domains the latencies show, and write measured communication costs per level into
    the topology (docs/design.md, "Real machines")."""
    from tasksolve.solver.probe import ProbeRequest, run_probe

    run_probe(ProbeRequest(topology, cpus, repeats, out, load or [], backend, as_json, write_topology, clock))


def register(app: typer.Typer) -> None:
    topology_app.command("probe")(probe)
    topology_app.command("host")(host)
    topology_app.command("import")(import_command)
    topology_app.command("show")(show)
    app.add_typer(topology_app, name="topology")
