"""Which of the host's CPUs this process may use, read from Linux (docs/design.md, "Real machines").

The kernel's files, read as its documentation describes them:

* ``/sys/devices/system/cpu/{online,offline,present}`` (Documentation/admin-guide/cputopology.rst,
  Documentation/ABI/testing/sysfs-devices-system-cpu): "online: CPUs that are online and being
  scheduled", "offline: CPUs that are not online because they have been HOTPLUGGED off or exceed
  the limit of CPUs allowed by the kernel configuration", "present: CPUs that have been
  identified as being present in the system"; each in the list format of ``cpulist_parse()``
  (``0-3,8,10-11``, `cpusets.parse_cpu_list`). An offline CPU has no ``topology`` folder: the
  kernel removes it when the CPU goes down, so its place in the machine is unknown.
* ``/sys/devices/system/cpu/isolated`` (drivers/base/cpu.c, ``print_cpus_isolated``): the CPUs
  the ``isolcpus=`` boot parameter isolates (Documentation/admin-guide/kernel-parameters.txt):
  the scheduler balances no task onto or off them; a task runs there only when its affinity
  (sched_setaffinity, a cpuset) puts it there.
* the process's *affinity mask*, sched_getaffinity(2) (``os.sched_getaffinity(0)``): the CPUs its
  threads may run on (``taskset -c``, ``numactl``, a container runtime's ``--cpuset-cpus``).
* its *cgroup's cpuset*: ``/proc/self/cgroup`` (cgroups(7): one line per hierarchy,
  ``hierarchy-ID:controller-list:cgroup-path``; cgroup v2's line is ``0::PATH``) names the
  cgroup; cgroup v2 (Documentation/admin-guide/cgroup-v2.rst, "Cpuset Interface Files"):
  ``/sys/fs/cgroup/PATH/cpuset.cpus.effective``, "the onlined CPUs that are actually granted to
  this cgroup by its parent"; cgroup v1 (Documentation/admin-guide/cgroup-v1/cpusets.rst): the
  ``cpuset`` hierarchy's line, ``/sys/fs/cgroup/cpuset/PATH/cpuset.effective_cpus`` (Linux 3.16
  on; ``cpuset.cpus`` before). Where the cgroup's folder has no such file (the controller not
  enabled there, or a container that sees its own cgroup as the root), the nearest ancestor's
  is read.

A CPU is *usable* when its place is known (a ``topology`` folder), it is online, in the cgroup's
cpuset and in the affinity mask; an isolated CPU is usable only when the affinity mask holds it
(said in a note). The kernel keeps the affinity mask inside the cpuset, so the cgroup mostly
tells *why* a CPU is left out. A captured tree (``import_sysfs DIR``) describes another machine:
no process is read for it, and only its online, offline and isolated files apply.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from tasksolve.specs.errors import SpecError, shorten
from tasksolve.specs.files import read_input
from tasksolve.specs.importers.cpusets import CpuListError, cpus_phrase, parse_cpu_list

FILE_LIMIT = 1 << 20  # a sysfs attribute is a page or a few; a 1 MiB "sysfs file" is not one
MAX_CGROUP_DEPTH = 256
_INTEGER = re.compile(r"-?[0-9]{1,10}", re.ASCII)
_HIERARCHY = re.compile(r"[0-9]{1,10}", re.ASCII)
V2_FILES = ("cpuset.cpus.effective",)
V1_FILES = ("cpuset.effective_cpus", "cpuset.cpus")


# ------------------------------------------------------------------ reading kernel files
def read_text(path: Path) -> str | None:
    """The text of a sysfs, procfs or cgroup file; None when it does not exist. A file that cannot
    be read, is not a regular file, holds more than `FILE_LIMIT` bytes or a byte that is not ASCII
    (the kernel writes ASCII there) is one `SpecError` naming it, at the line and column."""
    if not path.exists() and not path.is_symlink():
        return None
    data = read_input(path, FILE_LIMIT, fifo_wait=0.0)
    try:
        return data.decode("ascii")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        message = f"byte 0x{data[exc.start]:02x} is not ASCII text, which the kernel writes here"
        raise SpecError.at(str(path), message, line, column) from None


def one_line(text: str, path: Path) -> str:
    """The single line of a sysfs attribute (its newline dropped); a second line is an error."""
    line, _, rest = text.partition("\n")
    if rest.strip():
        raise SpecError.at(str(path), "more than one line: the kernel writes one here", 2, 1)
    return line


def cpu_list(text: str, path: Path, line: int = 1) -> frozenset[int]:
    """A CPU list in the kernel's list format, strictly (`cpusets.parse_cpu_list`), located."""
    try:
        return frozenset(parse_cpu_list(text))
    except CpuListError as exc:
        raise SpecError.at(str(path), exc.message, line, exc.column) from None


def cpu_set(path: Path) -> frozenset[int] | None:
    """The CPUs of a one-line list file (``online``, ``cpuset.cpus.effective``); None: absent."""
    text = read_text(path)
    return None if text is None else cpu_list(one_line(text, path), path)


def integer(path: Path) -> int | None:
    """A one-line integer attribute (``physical_package_id`` may be -1: unknown); None: absent."""
    text = read_text(path)
    if text is None:
        return None
    line = one_line(text, path)
    if not _INTEGER.fullmatch(line):
        raise SpecError.at(str(path), f"expected an integer, got `{shorten(line, 40)}`", 1, 1)
    return int(line)


# ------------------------------------------------------------------ the process
@dataclass(frozen=True)
class Process:
    """What the kernel lets a process use, or where to read it: its affinity mask (None: not
    known), its ``/proc/self/cgroup`` and the folder the cgroup filesystems are mounted under."""

    affinity: frozenset[int] | None = None
    cgroup_file: Path | None = None
    cgroup_root: Path | None = None

    @classmethod
    def this(cls, proc: Path = Path("/proc"), cgroup_root: Path = Path("/sys/fs/cgroup")) -> Process:
        """This process: ``sched_getaffinity(0)`` (None where the platform has none)."""
        getaffinity = getattr(os, "sched_getaffinity", None)
        affinity = frozenset(getaffinity(0)) if getaffinity is not None else None
        return cls(affinity, proc / "self" / "cgroup", cgroup_root)


@dataclass(frozen=True)
class Cpuset:
    """A cgroup's cpuset: its CPUs and the file they were read from."""

    cpus: frozenset[int]
    file: Path
    version: str


def _cgroup_lines(path: Path) -> list[tuple[int, str, list[str], str]]:
    """``/proc/self/cgroup`` as (line number, hierarchy ID, controllers, cgroup path)."""
    text = read_text(path)
    found = []
    for number, line in enumerate((text or "").split("\n"), 1):
        if not line:
            continue
        hierarchy, controllers, cgroup = (line.split(":", 2) + ["", ""])[:3]
        if line.count(":") < 2 or not _HIERARCHY.fullmatch(hierarchy) or not cgroup.startswith("/"):
            raise SpecError.at(
                str(path),
                f"`{shorten(line, 60)}` is not a cgroup line (hierarchy-ID:controller-list:/cgroup-path, cgroups(7))",
                number,
                1,
            )
        parts = cgroup.split("/")
        if ".." in parts or "." in parts or len(parts) > MAX_CGROUP_DEPTH:
            message = f"the cgroup path `{shorten(cgroup, 60)}` is not a plain path below the cgroup root"
            raise SpecError.at(str(path), message, number, len(hierarchy) + len(controllers) + 3)
        found.append((number, hierarchy, controllers.split(",") if controllers else [], cgroup))
    return found


def _nearest(root: Path, cgroup: str, names: tuple[str, ...]) -> Path | None:
    """The first of `names` in the cgroup's folder under `root`, else in its nearest ancestor's."""
    parts = [part for part in cgroup.split("/") if part]
    for depth in range(len(parts), -1, -1):
        folder = root.joinpath(*parts[:depth])
        for name in names:
            if (folder / name).is_file():
                return folder / name
    return None


def cgroup_cpuset(process: Process) -> Cpuset | None:
    """The cpuset of the process's cgroup (module docstring): cgroup v1's cpuset hierarchy when
    it has one (the controller is then not on v2), else cgroup v2's; None when neither is read."""
    if process.cgroup_file is None or process.cgroup_root is None:
        return None
    lines = _cgroup_lines(process.cgroup_file)
    v1 = [(cgroup, process.cgroup_root / "cpuset", V1_FILES, "v1") for _, _, c, cgroup in lines if "cpuset" in c]
    v2 = [(cgroup, process.cgroup_root, V2_FILES, "v2") for _, h, c, cgroup in lines if h == "0" and not c]
    for cgroup, root, names, version in v1[:1] + v2[:1]:
        path = _nearest(root, cgroup, names)
        cpus = cpu_set(path) if path is not None else None
        if cpus:  # an empty cpuset holds no task: it is not this process's
            return Cpuset(cpus, path, version)
    return None


# ------------------------------------------------------------------ the usable CPUs
@dataclass
class Usable:
    """The usable CPUs, why the others are left out (`left_out`), other `notes`, and the CPUs
    the kernel knows of whose place is unknown (`absent`: no placeholder takes their numbers)."""

    cpus: frozenset[int]
    left_out: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    absent: frozenset[int] = frozenset()


def _are(cpus: set[int] | frozenset[int]) -> str:
    return f"{cpus_phrase(cpus)} {'are' if len(cpus) > 1 else 'is'}"


def _states(cpu_dir: Path, machine: frozenset[int], folders: frozenset[int]) -> tuple[frozenset[int], ...]:
    """(known, offline, isolated): the CPUs the kernel says are present, those not online, the
    isolated ones."""
    online = cpu_set(cpu_dir / "online")
    offline = cpu_set(cpu_dir / "offline") or frozenset()
    present = cpu_set(cpu_dir / "present")
    isolated = cpu_set(cpu_dir / "isolated") or frozenset()
    known = (present if present is not None else folders) | machine
    if online is None:
        online = machine - offline
    return known, (known - online) | (offline & known), isolated & known


def usable_cpus(cpu_dir: Path, machine: frozenset[int], folders: frozenset[int], process: Process | None) -> Usable:
    """The CPUs of `machine` (those with a topology folder; `folders`: every ``cpuN``) that the
    process may use, with a note for every CPU that it may not (module docstring)."""
    known, offline, isolated = _states(cpu_dir, machine, folders)
    cpuset = cgroup_cpuset(process) if process is not None else None
    affinity = process.affinity if process is not None else None
    up = known - offline
    outside_cgroup = frozenset(up - cpuset.cpus) if cpuset is not None else frozenset()
    masked = frozenset(up - outside_cgroup - affinity) if affinity is not None else frozenset()
    unplaced = up - outside_cgroup - masked - machine
    found = Usable(machine & (up - outside_cgroup - masked), absent=known - machine)
    if offline:
        found.left_out.append(f"{_are(offline)} offline ({cpu_dir / 'online'})")
    if outside_cgroup:
        found.left_out.append(
            f"{_are(outside_cgroup)} not in this process's cgroup cpuset (cgroup {cpuset.version}: {cpuset.file})"
        )
    if masked & isolated:
        found.left_out.append(
            f"{_are(masked & isolated)} isolated (isolcpus: {cpu_dir / 'isolated'}) and not in this process's "
            "affinity mask (sched_getaffinity): run under `taskset -c` naming them to use them"
        )
    if masked - isolated:
        found.left_out.append(f"{_are(masked - isolated)} not in this process's affinity mask (sched_getaffinity)")
    if unplaced:
        found.left_out.append(
            f"{_are(unplaced)} online but {'have' if len(unplaced) > 1 else 'has'} no topology folder "
            f"({cpu_dir}/cpuN/topology): where in the machine is not known"
        )
    if found.cpus & isolated:
        why = "being in this process's affinity mask" if affinity is not None else "no process's affinity mask read"
        found.notes.append(
            f"{_are(found.cpus & isolated)} isolated (isolcpus: {cpu_dir / 'isolated'}) and usable ({why}): the "
            "scheduler moves no thread onto or off an isolated CPU, so pin every thread placed there "
            "(`tasksolve pin` writes the plan's pinning)"
        )
    return found
