"""``tasksolve topology probe``: measure (or load), analyse, propose a structure, print, write.

The measuring and the analysis live in `simulate.probe`; this module is the command's body (the
Typer declaration is in `solver.cli.topology_command`).  With ``--load`` and no ``--topology``
the saved latencies are analysed as a flat set of CPUs -- never against this host's tree or
clock -- and the structure they show is proposed (``--write-topology FILE`` writes it where it
is a uniform tree).  Exit codes: 0 done, 1 ``--write-topology`` asked for a structure that is no
uniform tree, 2 bad input (a CPU list, a saved file -- located at file, line and column --, a
topology), 3 the measurement failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


def _topology(name: str):
    from tasksolve.specs.loader import load_topology, resolve_named_file

    if Path(name, "devices", "system", "cpu").is_dir():  # a sysfs tree (a captured or synthetic one)
        from tasksolve.specs.importers.sysfs import import_sysfs

        return import_sysfs(name).topology
    if name.endswith(".xml"):
        from tasksolve.specs.importers.hwloc import import_hwloc

        return import_hwloc(name).topology
    return load_topology(name if name == "host" else resolve_named_file(name, "topologies"))


def _cpus(text: str | None, topology) -> list[int]:
    import os

    from tasksolve.solver.cli.common import fail
    from tasksolve.specs.errors import SpecError
    from tasksolve.specs.importers.sysfs import parse_cpu_list

    if text is None:
        allowed = os.sched_getaffinity(0)
        return [c for c in topology.os_cpu_list if c in allowed]
    try:
        chosen = parse_cpu_list(text, "--cpus")
    except (SpecError, ValueError) as exc:
        fail(str(exc))
    unknown = sorted(set(chosen) - set(topology.os_cpu_list))
    if unknown:
        fail(f"--cpus: CPU(s) {', '.join(map(str, unknown))} are not in the topology `{topology.name}`")
    return sorted(set(chosen))


@dataclass
class ProbeRequest:
    """What ``tasksolve topology probe`` was asked (the Typer command's options)."""

    topology: str | None
    cpus: str | None = None
    repeats: int = 3
    out: Path | None = None
    load: list[Path] = field(default_factory=list)
    backend: str = "auto"
    as_json: bool = False
    write_topology: Path | None = None
    clock: str | None = None


@dataclass
class _Data:
    repetitions: list
    topology: object
    notes: list[str]
    seconds: float | None
    backend: str
    source: str


def _clock(request: ProbeRequest) -> float | None:
    from tasksolve.solver.cli.common import fail
    from tasksolve.specs.units import UnitError, parse_clock

    if request.clock is None:
        return None
    if request.topology is not None or not request.load:
        fail("--clock: the topology's own clock is used; --clock is for --load without --topology")
    try:
        return parse_clock(request.clock)
    except UnitError as exc:
        fail(f"--clock: {exc}")


def _loaded(request: ProbeRequest) -> _Data:
    """The saved repetitions (`simulate.probe.loading`; a bad file is a located SpecError, exit 2)."""
    from tasksolve.simulate.probe.loading import read_csv
    from tasksolve.solver.cli.common import fail

    topology = _topology(request.topology) if request.topology is not None else None
    repetitions = [read_csv(path) for path in request.load]
    for path, repetition in zip(request.load[1:], repetitions[1:]):
        if repetition.keys() != repetitions[0].keys():
            fail(f"--load {path}: other pairs than {request.load[0]}: repetitions measure the same pairs")
    notes = [f"loaded {len(request.load)} saved repetition(s)"]
    if topology is None:
        notes.append("no --topology: analysed as a flat set of CPUs (not this host's tree or clock)")
    if any(s.ratio is None for rep in repetitions for s in rep.values()):
        notes.append("latencies only: interference was not measured, nothing is said about it")
    source = ", ".join(path.name for path in request.load)
    return _Data(repetitions, topology, notes, None, "loaded", source)


def _measured(request: ProbeRequest) -> _Data:
    from tasksolve.simulate.probe.measure import probe

    topology = _topology(request.topology or "host")
    data = probe(_cpus(request.cpus, topology), request.repeats, request.backend)
    return _Data(data.repetitions, topology, data.notes, data.seconds, data.backend, "a probe of this host")


def run_probe(request: ProbeRequest) -> None:
    """Measure or load, analyse, propose, then print and write what was asked (module docstring)."""
    from tasksolve.simulate.probe.analysis import analyse
    from tasksolve.simulate.probe.structure import propose
    from tasksolve.solver.cli.common import EXIT_NEGATIVE, fail

    if request.backend not in ("auto", "compiled", "python"):
        fail(f"--backend: expected auto, compiled or python, got {request.backend!r}")
    if request.cpus is not None and request.load:
        fail("--cpus chooses the CPUs to measure; with --load every CPU of the saved files is analysed")
    if request.out is not None and request.load and request.topology is None:
        fail(
            "--output writes the measured costs into a topology: with --load, give it with --topology "
            "(--write-topology FILE writes the proposed structure instead)"
        )
    clock_hz = _clock(request)
    data = _loaded(request) if request.load else _measured(request)
    try:
        analysis = analyse(data.repetitions, data.topology, clock_hz)
    except ValueError as exc:
        fail(str(exc))
    proposal = propose(analysis)
    if request.write_topology is not None and not proposal.tree:
        fail(
            f"--write-topology: the proposed structure is not a uniform tree ({proposal.why_not_tree}); "
            "nothing written -- run without --write-topology to see it",
            EXIT_NEGATIVE,
        )
    _finish(request, data, analysis, proposal, clock_hz)


def _finish(request: ProbeRequest, data: _Data, analysis, proposal, clock_hz: float | None) -> None:
    """Write the files asked for, then print (text or JSON)."""
    from tasksolve.simulate.probe.report import proposed_topology, render_proposal, render_text, with_costs
    from tasksolve.solver.cli.common import console, emit_json
    from tasksolve.specs.exporters.topology_text import topology_data, topology_yaml
    from tasksolve.specs.files import write_text_atomic

    measured = file_notes = proposed = None
    if data.topology is not None:
        measured, file_notes = with_costs(data.topology, analysis)
    if request.out is not None:
        write_text_atomic(request.out, topology_yaml(measured, file_notes))
    if proposal.tree:
        clock = clock_hz or (float(data.topology.clock) if data.topology is not None else None)
        name = request.load[0].stem if request.load else f"{data.topology.name}-probed"
        proposed, notes = proposed_topology(proposal, clock, name, data.source)
        if request.write_topology is not None:
            write_text_atomic(request.write_topology, topology_yaml(proposed, notes))
    if request.as_json:
        written = {"written": str(request.out)} if request.out is not None else {}
        if request.write_topology is not None:
            written["written_topology"] = str(request.write_topology)
        emit_json(
            {
                "backend": data.backend,
                "notes": data.notes,
                "seconds": data.seconds,
                "analysis": analysis.to_dict(),
                "topology": None if measured is None else topology_data(measured),
                "proposal": proposal.to_dict(),
                "proposed_topology": None if proposed is None else topology_data(proposed),
                **written,
            }
        )
        return
    for line in [*render_text(analysis, data.notes, data.seconds), *render_proposal(proposal, analysis)]:
        console.print(line, markup=False, soft_wrap=True)
    if request.out is not None:
        console.print(f"wrote {request.out}: communication {measured.communication.cycles}", markup=False)
    if request.write_topology is not None:
        console.print(f"wrote {request.write_topology}: {proposed.describe()}", markup=False)
