"""Pinning: how to run each thread of a plan on its hardware context, in another tool's terms.

Every format is something a person runs or pastes (docs/pinning.md shows each), with the
topology's OS CPU numbers (`pin_threads`: which numbers, which NUMA nodes, names escaped):

* ``taskset`` -- a launcher script that starts the program and pins each of its threads, found
  by name or creation order, with ``taskset -cp CPU TID`` (`pin_script`);
* ``numactl``, ``likwid-pin``, ``omp`` -- launcher scripts running the program under numactl
  (the plan's CPUs and NUMA nodes), likwid-pin (creation order), OpenMP places (`pin_tools`);
* ``dpdk`` -- DPDK EAL's ``--lcores`` map, lcore i running the plan's thread i;
* ``systemd`` -- a ``[Service]`` drop-in with ``CPUAffinity=``, ``AllowedCPUs=`` and
  ``AllowedMemoryNodes=``;
* ``json`` -- every thread with its context, CPU and NUMA node.

`FORMATS` maps each name to its writer and a one-line description (``tasksolve pin --help``);
`pinning_data` is what ``pin --json`` prints. `taskset_lines` is the plan as one
``taskset -c CPU`` line per thread, for people to read (``pinning.txt`` of ``run``, the report).
Threads are in the plan's order (``bindings``), the order the program is expected to create them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from tasksolve.specs.exporters.pin_script import taskset_script
from tasksolve.specs.exporters.pin_threads import header, numa_note, numbering, pins
from tasksolve.specs.exporters.pin_tools import dpdk_lines, likwid_pin_lines, numactl_lines, omp_lines, systemd_lines

if TYPE_CHECKING:  # annotations only: `tasksolve pin --help` lists FORMATS without loading pydantic
    from tasksolve.specs.plan import Plan
    from tasksolve.specs.spec import Spec


def json_lines(spec: Spec, plan: Plan) -> list[str]:
    """The plan's threads as JSON: thread, context path, CPU and NUMA node (null: none known)."""
    data = {
        "spec": plan.spec or spec.name,
        "topology": spec.topology.name,
        "os_cpu_numbers": bool(spec.topology.os_cpus),
        "numbering": numbering(spec),
        "numa": numa_note(spec),
        "threads": [{"thread": p.thread, "context": p.context, "cpu": p.cpu, "node": p.node} for p in pins(spec, plan)],
    }
    return json.dumps(data, indent=2).splitlines()


class Format(NamedTuple):
    """A pinning format: its writer (every line, header included) and what it is, in one line."""

    lines: Callable[[Spec, Plan], list[str]]
    summary: str


FORMATS: dict[str, Format] = {
    "taskset": Format(taskset_script, "launcher script: starts the program, pins each thread by name with taskset -cp"),
    "numactl": Format(numactl_lines, "launcher script: numactl --physcpubind (plan's CPUs) --membind (their nodes)"),
    "dpdk": Format(dpdk_lines, "DPDK EAL option --lcores='0@CPU,1@CPU,...': lcore i runs thread i"),
    "likwid-pin": Format(
        likwid_pin_lines, "launcher script: likwid-pin -c CPUs -s SKIPMASK, threads in creation order"
    ),
    "omp": Format(omp_lines, "launcher or sourced script: OMP_PLACES={CPU},... OMP_PROC_BIND=close"),
    "systemd": Format(systemd_lines, "systemd drop-in [Service]: CPUAffinity=, AllowedCPUs=, AllowedMemoryNodes="),
    "json": Format(json_lines, "every thread with its context, CPU and NUMA node"),
}


def pinning_text(spec: Spec, plan: Plan, form: str) -> str:
    """The whole output of one format (`FORMATS`)."""
    return "\n".join(FORMATS[form].lines(spec, plan)) + "\n"


def pinning_data(spec: Spec, plan: Plan, form: str) -> dict:
    """What ``pin --json`` prints: the format, its text, the CPU numbering and NUMA note, and every
    thread with its context, CPU, NUMA node and the name the taskset launcher looks for."""
    return {
        "format": form,
        "text": pinning_text(spec, plan, form),
        "os_cpu_numbers": bool(spec.topology.os_cpus),
        "numbering": numbering(spec),
        "numa": numa_note(spec),
        "threads": [p.to_dict() for p in pins(spec, plan)],
    }


def taskset_lines(spec: Spec, plan: Plan) -> list[str]:
    """``app#0.R: taskset -c 3   # core0.pipe0.strand3`` for every thread: a summary to read."""
    return [f"{p.thread}: taskset -c {p.cpu}   # {p.context}" for p in pins(spec, plan)]


def summary_text(spec: Spec, plan: Plan) -> str:
    """``pinning.txt``: the header, where the launcher comes from, one `taskset_lines` line each."""
    lines = [
        *header(spec, plan, None),
        "# one line per thread; a launcher that pins a running program: tasksolve pin plan.yaml -f taskset",
        *taskset_lines(spec, plan),
    ]
    return "\n".join(lines) + "\n"
