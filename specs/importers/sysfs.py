"""The host's topology from Linux sysfs (docs/design.md, "Real machines").

Read under a sysfs root (``/sys`` on the host; a captured tree in tests):

* ``devices/system/cpu/online`` -- the online CPUs (all CPUs with a ``topology`` folder without it);
* ``devices/system/cpu/cpuN/topology/{physical_package_id,die_id,thread_siblings_list}`` --
  socket, die and SMT siblings (``core_id`` is only unique inside a package, so cores are
  told apart by their sibling sets);
* ``devices/system/cpu/cpuN/cache/indexK/{level,type,shared_cpu_list,size}`` -- the caches;
* ``devices/system/node/nodeM/cpulist`` -- NUMA nodes;
* ``devices/system/cpu/cpuN/cpufreq/cpuinfo_max_freq`` (kHz) -- the clock, when present.

`build_topology` (`specs.importers.host`) turns what was read into a topology.
"""

from __future__ import annotations

import re
from pathlib import Path

from tasksolve.specs.errors import SpecError, shorten
from tasksolve.specs.importers.host import Cache, HostDescription, HostTopology, build_topology

HOST_ROOT = Path("/sys")
_LIST_ITEM = re.compile(r"^(\d+)(?:-(\d+))?$")
_SIZE = re.compile(r"^(\d+)\s*([KMG]?)$", re.IGNORECASE)


def parse_cpu_list(text: str, where: str = "<list>") -> list[int]:
    """The kernel's CPU list syntax (``0-3,8,10-11``) -> sorted CPU numbers."""
    cpus: set[int] = set()
    text = text.strip()
    if not text:
        return []
    for item in text.split(","):
        match = _LIST_ITEM.match(item.strip())
        if match is None:
            raise SpecError.at(where, f"`{shorten(item, 40)}` is not a CPU number or range (expected e.g. 0-3,8)")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        if last < first or last - first > 65_536:
            raise SpecError.at(where, f"bad CPU range `{shorten(item, 40)}`")
        cpus.update(range(first, last + 1))
    return sorted(cpus)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SpecError.at(str(path), f"cannot read: {exc.strerror}") from None


def _integer(path: Path) -> int | None:
    text = _read(path)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise SpecError.at(str(path), f"expected an integer, got `{shorten(text, 40)}`") from None


def _size(text: str | None, where: Path) -> int | None:
    if text is None:
        return None
    match = _SIZE.match(text)
    if match is None:
        raise SpecError.at(str(where), f"expected a size such as 32K, got `{shorten(text, 40)}`")
    return int(match.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[match.group(2).upper()]


def _online(cpu_dir: Path) -> list[int]:
    present = sorted(
        int(p.name[3:]) for p in cpu_dir.glob("cpu[0-9]*") if p.name[3:].isdigit() and (p / "topology").is_dir()
    )
    online = _read(cpu_dir / "online")
    if online is None:
        return present
    listed = set(parse_cpu_list(online, str(cpu_dir / "online")))
    return [cpu for cpu in present if cpu in listed]


def _caches(cpu_path: Path) -> set[Cache]:
    found = set()
    for index in sorted((cpu_path / "cache").glob("index[0-9]*")):
        level = _integer(index / "level")
        kind = (_read(index / "type") or "unified").lower()
        shared = _read(index / "shared_cpu_list")
        if level is None or shared is None:
            continue
        cpus = frozenset(parse_cpu_list(shared, str(index / "shared_cpu_list")))
        found.add(Cache(level, kind, _size(_read(index / "size"), index / "size"), cpus))
    return found


def read_sysfs(root: str | Path = HOST_ROOT) -> HostDescription:
    """Describe the CPUs under a sysfs root (module docstring)."""
    root = Path(root)
    cpu_dir = root / "devices" / "system" / "cpu"
    cpus = _online(cpu_dir)
    if not cpus:
        raise SpecError.at(
            str(cpu_dir), "no online CPU with a topology folder here: is this a Linux sysfs (/sys) tree?"
        )
    host = HostDescription(source=str(root), package={}, siblings={})
    for cpu in cpus:
        path = cpu_dir / f"cpu{cpu}"
        topology = path / "topology"
        host.package[cpu] = _integer(topology / "physical_package_id") or 0
        die = _integer(topology / "die_id")
        if die is not None:
            host.die[cpu] = die
        siblings = _read(topology / "thread_siblings_list")
        listed = parse_cpu_list(siblings, str(topology / "thread_siblings_list")) if siblings else [cpu]
        host.siblings[cpu] = frozenset(c for c in listed if c in host.package or c in cpus) | {cpu}
        host.caches |= _caches(path)
    for node_path in sorted((root / "devices" / "system" / "node").glob("node[0-9]*")):
        listed = _read(node_path / "cpulist")
        for cpu in parse_cpu_list(listed or "", str(node_path / "cpulist")):
            if cpu in host.package:
                host.node[cpu] = int(node_path.name[4:])
    if host.node and set(host.node) != set(host.package):
        host.node = {}  # a partial NUMA description is no description
    khz = _integer(cpu_dir / f"cpu{cpus[0]}" / "cpufreq" / "cpuinfo_max_freq")
    host.clock_hz = khz * 1e3 if khz else None
    return host


def import_sysfs(root: str | Path = HOST_ROOT, **options) -> HostTopology:
    """The topology of the machine whose sysfs is at `root` (`build_topology` options)."""
    return build_topology(read_sysfs(root), **options)


def _cpuinfo_clock(path: Path) -> float | None:
    """The first ``cpu MHz`` of /proc/cpuinfo, in Hz (virtual machines often have no cpufreq)."""
    try:
        text = path.read_text()
    except OSError:
        return None
    match = re.search(r"^cpu MHz\s*:\s*([0-9.]+)", text, re.MULTILINE)
    return float(match.group(1)) * 1e6 if match else None


def host_topology(**options) -> HostTopology:
    """This machine's topology: /sys, with the clock from /proc/cpuinfo when cpufreq has none."""
    host = read_sysfs(HOST_ROOT)
    if host.clock_hz is None:
        host.clock_hz = _cpuinfo_clock(Path("/proc/cpuinfo"))
    return build_topology(host, **options)
