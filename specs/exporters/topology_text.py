"""A topology for people and files: YAML that loads back (with notes as comments) and an
lstopo-like text tree (levels, counts, resources, OS CPU numbers)."""

from __future__ import annotations

from typing import Any

from tasksolve.specs.display import frequency
from tasksolve.specs.topology import MACHINE, Topology

TREE_MOST_LINES = 160  # beyond this, the tree shows the first domain of each level in full


def topology_data(topology: Topology) -> dict[str, Any]:
    """The topology as the YAML/JSON mapping a topology file holds."""
    return topology.model_dump(mode="json", exclude_none=True)


def topology_yaml(topology: Topology, notes: list[str] = ()) -> str:
    """A topology file: `notes` first, as comments, then the mapping (loads back equal). Written
    by libyaml's emitter where PyYAML has it (the same text, four times faster: a 60k-PU host's
    1.8 MB took 5.5 s in the pure-Python one)."""
    import yaml

    head = "".join(f"# {note}\n" for note in notes)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return head + yaml.dump(topology_data(topology), Dumper=dumper, sort_keys=False, width=100)


def _resources_at(topology: Topology, level: str) -> str:
    found = [f"{r.name} {r.capacity:g}" for r in topology.resources if r.level == level]
    return f"  [{', '.join(found)}]" if found else ""


def topology_tree(topology: Topology) -> list[str]:
    """``machine > core0 > pipe0 > strand0 (CPU 0)``, one line per domain, indented by level;
    a topology of more lines than TREE_MOST_LINES shows its first domain of each level and a count."""
    levels = topology.levels
    os_note = "OS CPU" if topology.os_cpus else "CPU (flat index: the topology has no OS numbers)"
    lines = [
        f"{topology.name}: {topology.describe()}, {frequency(topology.clock)}",
        f"contexts show their {os_note}",
        f"{MACHINE}{_resources_at(topology, MACHINE)}",
    ]
    usable = set(topology.usable_contexts)
    if topology.usable is not None:
        lines.insert(2, f"plans use only the {len(usable)} usable contexts (the topology's `usable` list)")
    total = sum(topology.domain_count(k) for k in range(len(levels)))
    full = total + 3 <= TREE_MOST_LINES

    def walk(level: int, domain: int, indent: str) -> None:
        name = f"{levels[level].name}{domain % topology.counts[level]}"
        if level == len(levels) - 1:
            unusable = "" if domain in usable else ", not usable"
            kind = f", {topology.kind_of(domain)}" if topology.kinds else ""
            lines.append(
                f"{indent}{name}  (CPU {topology.os_cpu(domain)}{kind}{unusable})"
                f"{_resources_at(topology, levels[level].name)}"
            )
            return
        lines.append(f"{indent}{name}{_resources_at(topology, levels[level].name)}")
        width = topology.counts[level + 1]
        children = [c for c in range(domain * width, (domain + 1) * width) if topology.exists(level + 1, c)]
        for child in children if full else children[:1]:
            walk(level + 1, child, indent + "  ")
        if not full and len(children) > 1:
            lines.append(f"{indent}  ... and {len(children) - 1} more {levels[level + 1].name}(s) like it")

    top = range(topology.counts[0])
    for domain in top if full else top[:1]:
        walk(0, domain, "  ")
    if not full and len(top) > 1:
        lines.append(f"  ... and {len(top) - 1} more {levels[0].name}(s) like it")
    by_domain: dict[str, list[str]] = {}
    for name, device in (topology.devices or {}).items():
        by_domain.setdefault(device.at, []).append(f"{name} ({device.kind})")
    lines += [f"devices at {at}: {', '.join(names)}" for at, names in by_domain.items()]
    return lines
