"""The host's topology from Linux sysfs (docs/design.md, "Real machines").

Read under a sysfs root (``/sys`` on the host; a captured tree in tests), the files as
Documentation/admin-guide/cputopology.rst and Documentation/ABI/testing/sysfs-devices-system-cpu
describe them:

* ``devices/system/cpu/cpuN/topology/{physical_package_id,die_id,thread_siblings_list}`` --
  socket, die and SMT siblings (``core_id`` is only unique inside a package, so cores are told
  apart by their sibling sets; an id the architecture does not know is -1). A CPU with a
  ``topology`` folder is one whose place in the machine is known: the kernel removes the folder
  when a CPU goes offline;
* ``devices/system/cpu/cpuN/cache/indexK/{level,type,shared_cpu_list,size}`` -- the caches
  (``type`` Data, Instruction or Unified; ``size`` in kB, written ``32K``);
* ``devices/system/node/nodeM/cpulist`` -- NUMA nodes;
* ``devices/system/cpu/cpuN/cpufreq/cpuinfo_max_freq`` (kHz) -- the clock, when present (the
  fastest kind's on a hybrid processor);
* ``devices/cpu_core/cpus``, ``devices/cpu_atom/cpus`` and ``cpuN/cpu_capacity`` -- kinds of CPU
  (`specs.importers.sysfs_kinds`);
* ``devices/system/cpu/{online,offline,present,isolated}`` and, for this host, the process's
  affinity mask and cgroup cpuset -- which CPUs plans may use (`specs.importers.sysfs_usable`).

Every file is read strictly -- ASCII, one line, CPU lists in the kernel's list format
(`cpusets.parse_cpu_list`: ascending, bounded), integers -- and a malformed one is one
`SpecError` at its file, line and column. `build_topology` (`specs.importers.host`) turns what
was read into a topology.
"""

from __future__ import annotations

import re
from pathlib import Path

from tasksolve.specs.errors import SpecError, shorten
from tasksolve.specs.importers.cpusets import MAX_CPU, CpuListError
from tasksolve.specs.importers.cpusets import parse_cpu_list as _parse
from tasksolve.specs.importers.host import Cache, HostDescription, HostTopology, build_topology
from tasksolve.specs.importers.kinds import kinds_clock
from tasksolve.specs.importers.sysfs_kinds import max_clock, read_kinds
from tasksolve.specs.importers.sysfs_usable import (
    Process,
    cpu_list,
    cpu_set,
    integer,
    one_line,
    read_text,
    usable_cpus,
)
from tasksolve.specs.units import CLOCK_RANGE

HOST_ROOT = Path("/sys")
PROC_ROOT = Path("/proc")
_SIZE = re.compile(r"([0-9]{1,12})([KMGkmg]?)", re.ASCII)
_CPU_FOLDER = re.compile(r"cpu(0|[1-9][0-9]{0,6})", re.ASCII)
_NODE_FOLDER = re.compile(r"node(0|[1-9][0-9]{0,6})", re.ASCII)
_CACHE_TYPES = {"data": "data", "instruction": "instruction", "unified": "unified"}
_CPUINFO_MHZ = re.compile(r"^cpu MHz\s*:\s*([0-9]{1,6}(?:\.[0-9]{1,6})?)\s*$", re.MULTILINE | re.ASCII)


def parse_cpu_list(text: str, where: str = "<list>") -> list[int]:
    """A CPU list a person wrote (``--cpus 0-3,8``): the kernel's list format, any order, blanks
    around items allowed (`cpusets.parse_cpu_list`, not strict); a `SpecError` at `where`."""
    try:
        return _parse(text, strict=False)
    except CpuListError as exc:
        raise SpecError.at(where, exc.message, 1, exc.column) from None


def _folders(folder: Path, pattern: re.Pattern[str], offset: int) -> dict[int, Path]:
    """Number -> path of the sub-folders named like ``cpu12`` or ``node3`` (others ignored)."""
    try:
        names = [child for child in folder.iterdir() if pattern.fullmatch(child.name) and child.is_dir()]
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SpecError.at(str(folder), f"cannot list: {exc.strerror}") from None
    found = {int(child.name[offset:]): child for child in names}
    return {number: found[number] for number in sorted(found) if number <= MAX_CPU}


def _size(path: Path) -> int | None:
    text = read_text(path)
    if text is None:
        return None
    line = one_line(text, path)
    match = _SIZE.fullmatch(line)
    if match is None:
        raise SpecError.at(str(path), f"expected a size such as 32K, got `{shorten(line, 40)}`", 1, 1)
    return int(match.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[match.group(2).upper()]


def _cache_type(path: Path) -> str:
    text = read_text(path)
    if text is None:
        return "unified"
    line = one_line(text, path)
    if line.lower() not in _CACHE_TYPES:
        raise SpecError.at(str(path), f"expected Data, Instruction or Unified, got `{shorten(line, 40)}`", 1, 1)
    return _CACHE_TYPES[line.lower()]


def _caches(cpu_path: Path) -> set[Cache]:
    found = set()
    for index in sorted((cpu_path / "cache").glob("index[0-9]*")):
        level = integer(index / "level")
        shared = cpu_set(index / "shared_cpu_list")
        if level is None or shared is None:
            continue
        if not 0 < level < 10:
            raise SpecError.at(str(index / "level"), f"a cache level is 1-9, got {level}", 1, 1)
        if not shared:
            raise SpecError.at(
                str(index / "shared_cpu_list"), "an empty list: the kernel lists at least the cache's own CPU", 1, 1
            )
        found.add(Cache(level, _cache_type(index / "type"), _size(index / "size"), shared))
    return found


def _nodes(root: Path, host: HostDescription) -> None:
    """Each CPU's NUMA node, when the nodes' lists cover every CPU of the machine."""
    for number, node_path in _folders(root / "devices" / "system" / "node", _NODE_FOLDER, 4).items():
        for cpu in cpu_set(node_path / "cpulist") or ():
            if cpu in host.package:
                host.node[cpu] = number
    if host.node and set(host.node) != set(host.package):
        host.node = {}  # a partial NUMA description is no description


def read_sysfs(root: str | Path = HOST_ROOT, *, process: Process | None = None) -> HostDescription:
    """Describe the CPUs under a sysfs root (module docstring). `process` (this one for the host,
    `Process.this`; a fake one in tests) says what the process may use; None, for a captured tree
    of another machine: only its online, offline and isolated files apply."""
    root = Path(root)
    cpu_dir = root / "devices" / "system" / "cpu"
    folders = _folders(cpu_dir, _CPU_FOLDER, 3)
    machine = [cpu for cpu, path in folders.items() if (path / "topology").is_dir()]
    if not machine:
        raise SpecError.at(str(cpu_dir), "no CPU with a topology folder here: is this a Linux sysfs (/sys) tree?")
    host = HostDescription(source=str(root), package={}, siblings={}, machine=frozenset(machine))
    for cpu in machine:
        topology = folders[cpu] / "topology"
        host.package[cpu] = integer(topology / "physical_package_id") or 0
        die = integer(topology / "die_id")
        if die is not None:
            host.die[cpu] = die
        text = read_text(topology / "thread_siblings_list")
        path = topology / "thread_siblings_list"
        listed = cpu_list(one_line(text, path), path) if text is not None else frozenset()
        host.siblings[cpu] = frozenset(listed & host.machine) | {cpu}
        host.caches |= _caches(folders[cpu])
    _nodes(root, host)
    host.kinds, kind_notes = read_kinds(root, folders, host.machine)
    first = max_clock(folders[machine[0]] / "cpufreq" / "cpuinfo_max_freq")
    known = any(kind.max_hz is not None for kind in host.kinds)
    host.clock_hz, clock_notes = kinds_clock(host.kinds, None if known else first, "cpufreq cpuinfo_max_freq")
    host.notes += kind_notes + clock_notes
    usable = usable_cpus(cpu_dir, host.machine, frozenset(folders), process)
    host.usable, host.absent = usable.cpus, usable.absent
    host.left_out += usable.left_out
    host.notes += usable.notes
    return host


def import_sysfs(root: str | Path = HOST_ROOT, **options) -> HostTopology:
    """The topology of the machine whose sysfs is at `root` (`build_topology` options): a captured
    tree, read without this process's affinity mask or cgroup (another machine's)."""
    return build_topology(read_sysfs(root), **options)


def _cpuinfo_clock(path: Path) -> float | None:
    """The first ``cpu MHz`` of /proc/cpuinfo, in Hz (virtual machines often have no cpufreq);
    None when it has none, or cannot be read."""
    try:
        with path.open("rb") as stream:  # the first CPU's lines are at the top; a large host's file is MBs
            text = stream.read(1 << 16).decode("ascii", errors="replace")
    except OSError:
        return None
    match = _CPUINFO_MHZ.search(text)
    hz = float(match.group(1)) * 1e6 if match else 0.0
    return hz if CLOCK_RANGE[0] <= hz <= CLOCK_RANGE[1] else None


def host_topology(**options) -> HostTopology:
    """This machine's topology as this process may use it: /sys, with the process's affinity mask
    and cgroup cpuset (`Process.this`), the clock from /proc/cpuinfo when cpufreq has none."""
    host = read_sysfs(HOST_ROOT, process=Process.this(PROC_ROOT, HOST_ROOT / "fs" / "cgroup"))
    if host.clock_hz is None:
        host.clock_hz = _cpuinfo_clock(PROC_ROOT / "cpuinfo")
    return build_topology(host, **options)
