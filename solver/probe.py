"""``tasksolve topology probe``: measure (or load), analyse, print, write the topology.

The measuring and the analysis live in `simulate.probe`; this module is the command's body (the
Typer declaration is in `solver.cli.topology_command`).  Exit codes: 0 done, 2 bad input (a CPU
list, a CSV file, a topology), 3 the measurement failed.
"""

from __future__ import annotations

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


def run_probe(
    topology_name: str, cpus: str | None, repeats: int, out: Path | None, load: list[Path], backend: str, as_json: bool
) -> None:
    from tasksolve.simulate.probe.analysis import analyse
    from tasksolve.simulate.probe.measure import probe
    from tasksolve.simulate.probe.report import read_csv, render_text, with_costs
    from tasksolve.solver.cli.common import console, emit_json, fail
    from tasksolve.specs.exporters.topology_text import topology_data, topology_yaml
    from tasksolve.specs.files import write_text_atomic

    if backend not in ("auto", "compiled", "python"):
        fail(f"--backend: expected auto, compiled or python, got {backend!r}")
    topology = _topology(topology_name)
    if load:
        try:
            repetitions = [read_csv(path) for path in load]
        except OSError as exc:
            fail(f"--load: {exc}")
        except ValueError as exc:
            fail(f"--load {exc}")
        notes, seconds, used = [f"loaded {len(load)} saved repetition(s)"], None, "loaded"
    else:
        data = probe(_cpus(cpus, topology), repeats, backend)
        repetitions, notes, seconds, used = data.repetitions, data.notes, data.seconds, data.backend
    try:
        analysis = analyse(repetitions, topology)
    except ValueError as exc:
        fail(str(exc))
    measured, file_notes = with_costs(topology, analysis)
    if out is not None:
        write_text_atomic(out, topology_yaml(measured, file_notes))
    if as_json:
        emit_json(
            {
                "backend": used,
                "notes": notes,
                "seconds": seconds,
                "analysis": analysis.to_dict(),
                "topology": topology_data(measured),
                **({"written": str(out)} if out is not None else {}),
            }
        )
        return
    for line in render_text(analysis, notes, seconds):
        console.print(line, markup=False, soft_wrap=True)
    if out is not None:
        console.print(f"wrote {out}: communication {measured.communication.cycles}", markup=False)
