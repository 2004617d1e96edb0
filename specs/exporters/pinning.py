"""Pinning lines: how to run each thread of a plan on its hardware context, in another tool's terms.

CPU numbers are the operating system's, from the topology's ``os_cpus`` (`Topology.os_cpu`:
imported with ``tasksolve topology host`` or from an hwloc XML); a topology without them gives
the flat context index, and every format says which it used (a comment, or a field in JSON).

Formats (one function each, `FORMATS` maps the names):

* ``taskset`` -- per thread ``taskset -c CPU`` (util-linux: a CPU list);
* ``numactl`` -- per thread ``numactl --physcpubind=CPU --localalloc``;
* ``dpdk`` -- one EAL option ``--lcores=0@CPU,1@CPU,...`` (lcore id ``@`` CPU set), lcore i
  running the plan's i-th thread;
* ``likwid-pin`` -- ``likwid-pin -c CPU,CPU,...``: threads are pinned in creation order;
* ``omp`` -- ``OMP_PLACES={CPU},{CPU},...`` with ``OMP_PROC_BIND=close``: OpenMP thread i
  on place i;
* ``systemd`` -- a ``[Service]`` ``CPUAffinity=`` line of the plan's CPUs (a unit's process may
  run on those; per-thread pinning stays with the program), threads listed as comments;
* ``json`` -- every thread with its context and CPU.

Threads are in the plan's order (``bindings``), the order the program is expected to create them.

Names (the spec's, the topology's, the plan's method, threads, contexts) appear only in comments
and labels, never where a shell, systemd or DPDK would interpret them: the loader refuses control
characters, line breaks and bidi controls in them (`specs.fields.Label`), and `_printable`
escapes any such character of a spec or plan built in memory, so a name cannot end a comment and
start a command.  What a shell does read (``OMP_PLACES``) is quoted with `shlex.quote`; CPU numbers
are integers.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: `tasksolve pin --help` lists FORMATS without loading pydantic
    from tasksolve.specs.plan import Plan
    from tasksolve.specs.spec import Spec

OS_NUMBERS = "OS CPU numbers from the topology"
FLAT_NUMBERS = (
    "flat context indices: the topology has no OS CPU numbers (import the machine with "
    "`tasksolve topology host` for real ones)"
)


def _printable(text: object) -> str:
    """`text` with every control, line-break or bidi character escaped (``\\u000a``)."""
    from tasksolve.specs.fields import unsafe_character

    text = str(text)
    while (found := unsafe_character(text)) is not None:
        position, ch = found
        text = text[:position] + f"\\u{ord(ch):04x}" + text[position + 1 :]
    return text


def pinned_cpus(spec: Spec, plan: Plan) -> list[tuple[str, str, int]]:
    """(thread, context path, CPU number) for every thread of the plan, in the plan's order."""
    topo = spec.topology
    return [
        (_printable(thread), _printable(context), topo.os_cpu(topo.parse_context(context)))
        for thread, context in plan.bindings.items()
    ]


def numbering(spec: Spec) -> str:
    """Which CPU numbers the lines carry."""
    return OS_NUMBERS if spec.topology.os_cpus else FLAT_NUMBERS


def _header(spec: Spec, plan: Plan) -> list[str]:
    return [
        f"# plan {_printable(plan.spec or spec.name)}{f' ({_printable(plan.method)})' if plan.method else ''} "
        f"on {_printable(spec.topology.name)}",
        f"# CPU numbers: {numbering(spec)}",
    ]


def taskset_lines(spec: Spec, plan: Plan) -> list[str]:
    """``app#0.R: taskset -c 3   # core0.pipe0.strand3`` for every thread."""
    return [f"{thread}: taskset -c {cpu}   # {context}" for thread, context, cpu in pinned_cpus(spec, plan)]


def numactl_lines(spec: Spec, plan: Plan) -> list[str]:
    return [
        f"{thread}: numactl --physcpubind={cpu} --localalloc   # {context}"
        for thread, context, cpu in pinned_cpus(spec, plan)
    ]


def dpdk_lines(spec: Spec, plan: Plan) -> list[str]:
    pins = pinned_cpus(spec, plan)
    lines = [f"# lcore {i}: {thread} on {context}" for i, (thread, context, _) in enumerate(pins)]
    return lines + ["--lcores=" + ",".join(f"{i}@{cpu}" for i, (_, _, cpu) in enumerate(pins))]


def likwid_pin_lines(spec: Spec, plan: Plan) -> list[str]:
    pins = pinned_cpus(spec, plan)
    lines = [f"# thread {i} (in creation order): {thread} on {context}" for i, (thread, context, _) in enumerate(pins)]
    return lines + ["likwid-pin -c " + ",".join(str(cpu) for _, _, cpu in pins)]


def omp_lines(spec: Spec, plan: Plan) -> list[str]:
    pins = pinned_cpus(spec, plan)
    lines = [f"# OpenMP thread {i}: {thread} on {context}" for i, (thread, context, _) in enumerate(pins)]
    places = ",".join(f"{{{int(cpu)}}}" for _, _, cpu in pins)
    return lines + [f"OMP_NUM_THREADS={len(pins)} OMP_PLACES={shlex.quote(places)} OMP_PROC_BIND=close"]


def systemd_lines(spec: Spec, plan: Plan) -> list[str]:
    pins = pinned_cpus(spec, plan)
    lines = [f"# {thread} on {context}: CPU {cpu}" for thread, context, cpu in pins]
    return lines + ["[Service]", "CPUAffinity=" + " ".join(str(cpu) for cpu in sorted({cpu for _, _, cpu in pins}))]


def json_lines(spec: Spec, plan: Plan) -> list[str]:
    data = {
        "spec": plan.spec or spec.name,
        "topology": spec.topology.name,
        "os_cpu_numbers": bool(spec.topology.os_cpus),
        "numbering": numbering(spec),
        "threads": [{"thread": t, "context": c, "cpu": cpu} for t, c, cpu in pinned_cpus(spec, plan)],
    }
    return json.dumps(data, indent=2).splitlines()


FORMATS: dict[str, Callable[[Spec, Plan], list[str]]] = {
    "taskset": taskset_lines,
    "numactl": numactl_lines,
    "dpdk": dpdk_lines,
    "likwid-pin": likwid_pin_lines,
    "omp": omp_lines,
    "systemd": systemd_lines,
    "json": json_lines,
}


def pinning_text(spec: Spec, plan: Plan, form: str) -> str:
    """The whole output of one format: a header saying which CPU numbers (JSON: a field), the lines."""
    lines = FORMATS[form](spec, plan)
    if form != "json":
        lines = _header(spec, plan) + lines
    return "\n".join(lines) + "\n"
