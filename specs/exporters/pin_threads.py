"""What every pinning format says: each thread of a plan with its context, CPU and NUMA node.

CPU numbers are the operating system's, from the topology's ``os_cpus`` (`Topology.os_cpu`:
imported with ``tasksolve topology host`` or from an hwloc XML); a topology without them gives
the flat context index, and every format says so in a comment line (JSON: a field).

NUMA nodes: a topology holds a NUMA node's memory as the resource ``mem`` at the level of the
tree whose domains the nodes are (`specs.importers.memory`: ``mem`` is a node's plain memory;
the examples name it so too), ``machine`` for one node. A context's node is the number of its
domain at that level, the domains that exist counted in order (0, 1, ...). The topology keeps no
OS node numbers: these are Linux's when its nodes are numbered in the order of their CPUs, as
the importers order the domains (check with ``numactl --hardware``); the formats say so. A
topology without ``mem`` has no NUMA information, and the formats that bind memory say so and
leave it out.

Names (the spec's, the topology's, the plan's method, threads, contexts) are escaped by
`printable`: the loader refuses control characters, line breaks and bidi controls in them
(`specs.fields.Label`), and a spec or plan built in memory has any such character escaped, so a
name cannot end a comment and start a command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: `tasksolve pin --help` lists the formats without loading pydantic
    from tasksolve.specs.plan import Plan
    from tasksolve.specs.spec import Spec
    from tasksolve.specs.topology import Topology

OS_NUMBERS = "OS CPU numbers from the topology"
FLAT_NUMBERS = (
    "flat context indices, not Linux CPU numbers: the topology has no OS CPU numbers (import the "
    "machine with `tasksolve topology host` for real ones)"
)
MEMORY = "mem"  # the resource of a NUMA node's plain memory (`specs.importers.memory.PLAIN`)
COMM_BYTES = 15  # Linux keeps a thread's name in 16 bytes with the NUL (TASK_COMM_LEN)


def printable(text: object) -> str:
    """`text` with every control, line-break or bidi character escaped (``\\u000a``)."""
    from tasksolve.specs.fields import unsafe_character

    text = str(text)
    while (found := unsafe_character(text)) is not None:
        position, ch = found
        text = text[:position] + f"\\u{ord(ch):04x}" + text[position + 1 :]
    return text


def comm_name(name: str) -> str:
    """The name Linux shows for a thread named `name` (``/proc/PID/task/TID/comm``): its first 15
    bytes, a character cut in the middle dropped."""
    return name.encode()[:COMM_BYTES].decode(errors="ignore")


@dataclass(frozen=True)
class Pin:
    """One thread of the plan: its name, context path, CPU number, NUMA node (None: the topology
    has no NUMA information) and the name a program gives it for the taskset launcher."""

    thread: str
    context: str
    cpu: int
    node: int | None

    @property
    def comm(self) -> str:
        return comm_name(self.thread)

    def to_dict(self) -> dict:
        return {"thread": self.thread, "context": self.context, "cpu": self.cpu, "node": self.node, "name": self.comm}


def numa_level(topo: Topology) -> str | None:
    """The level whose domains are the NUMA nodes (``machine``: one node), or None."""
    for resource in topo.resources:
        if resource.name == MEMORY:
            return resource.level
    return None


def numa_node(topo: Topology, context: int) -> int | None:
    """The NUMA node of `context` (module docstring), or None without NUMA information."""
    level_name = numa_level(topo)
    if level_name is None:
        return None
    level = topo.level_index(level_name)
    domain = topo.domain_of(context, level)
    if level < 0 or topo.present is None:
        return domain
    return sorted(topo.present[level]).index(domain)


def pins(spec: Spec, plan: Plan) -> list[Pin]:
    """Every thread of the plan, in the plan's order (``bindings``: the order the program is
    expected to create them)."""
    topo = spec.topology
    found = []
    for thread, context in plan.bindings.items():
        index = topo.parse_context(context)
        found.append(Pin(printable(thread), printable(context), int(topo.os_cpu(index)), numa_node(topo, index)))
    return found


def numbering(spec: Spec) -> str:
    """Which CPU numbers the formats carry."""
    return OS_NUMBERS if spec.topology.os_cpus else FLAT_NUMBERS


def numa_note(spec: Spec) -> str:
    """Where the NUMA node numbers come from, or that there are none."""
    level = numa_level(spec.topology)
    if level is None:
        return f"the topology has no NUMA information (no `{MEMORY}` resource)"
    where = "one node, the machine" if level == "machine" else f"the {printable(level)} domains in order"
    return (
        f"NUMA nodes: {where} (the `{MEMORY}` resource), taken for Linux's node numbers: true when "
        "Linux numbers its nodes in CPU order (see `numactl --hardware`)"
    )


def header(spec: Spec, plan: Plan, form: str | None) -> list[str]:
    """The comment lines every format but JSON starts with: which plan, what wrote it (`form`:
    ``tasksolve pin --format FORM``), which CPU numbers."""
    method = f" ({printable(plan.method)})" if plan.method else ""
    by = f" -- tasksolve pin --format {form}" if form else ""
    return [
        f"# plan of {printable(plan.spec or spec.name)}{method} on {printable(spec.topology.name)}{by}",
        f"# CPU numbers: {numbering(spec)}",
    ]


def cpu_list(numbers: list[int]) -> str:
    """The set of `numbers` as a CPU list with ranges (``0-3,8``): util-linux, numactl, systemd
    and the cpuset files read it."""
    ordered = sorted(set(numbers))
    parts: list[str] = []
    start = previous = None
    for number in [*ordered, None]:
        if previous is not None and number == previous + 1:
            previous = number
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = number
    return ",".join(parts)


def thread_comments(found: list[Pin], label: str = "thread") -> list[str]:
    """``# thread 0: app#0.R on core0.pipe1 -> CPU 3`` for every thread (`label` names the index)."""
    return [f"#   {label} {i}: {p.thread} on {p.context} -> CPU {p.cpu}" for i, p in enumerate(found)]
