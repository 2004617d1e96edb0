"""The pinning formats of other tools: numactl, likwid-pin and OpenMP launchers, DPDK's
``--lcores``, a systemd drop-in.

Each returns its lines, the common header first (`pin_threads.header`: which plan, which CPU
numbers). A launcher is a POSIX shell script run as ``sh FILE PROGRAM [ARGUMENT...]``; what it
runs the program with is said in its comments and cited below:

* numactl(8): ``--physcpubind=CPUS`` (the process may run on those CPUs only), ``--membind=NODES``
  (it allocates memory on those nodes only), ``--`` before the command;
* likwid-pin (RRZE-HPC/likwid: ``likwid-pin.lua`` and ``pthread-overload.c``): the process, so
  its main thread, is pinned to the first CPU of ``-c``, and the threads it creates with
  pthread_create to the next ones in creation order; ``-s MASK`` (hexadecimal, ``0x``) skips
  the k-th created thread (from 0) when bit k is set -- that thread is not pinned and does not
  use a CPU of the list (a runtime's helper thread: Intel OpenMP's shepherd thread is ``0x1``);
* OpenMP (the specification's ``OMP_PLACES`` and ``OMP_PROC_BIND`` environment variables): with
  as many threads as places and ``close``, thread i of the team runs on place i, the initial
  thread on the first;
* DPDK EAL ``--lcores='<lcore set>[@cpu set],...'`` (DPDK's "EAL parameters", Lcore-related
  options): lcore i runs on the CPU set after ``@``; lcore 0 is the main lcore unless
  ``--main-lcore`` says otherwise, and ids stop below RTE_MAX_LCORE (128 by default);
* systemd.exec(5) ``CPUAffinity=`` (the service's processes' CPU affinity) and
  systemd.resource-control(5) ``AllowedCPUs=``/``AllowedMemoryNodes=`` (the cpuset controller
  of cgroup v2), in a drop-in ``/etc/systemd/system/UNIT.service.d/tasksolve.conf``.

Only the taskset launcher (`pin_script`) places each thread by name; numactl and systemd bind
the whole process to the plan's CPUs, likwid-pin, OpenMP and DPDK place threads by creation
order or lcore id, as each comment says.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from tasksolve.specs.exporters.pin_threads import cpu_list, header, numa_note, pins, thread_comments

if TYPE_CHECKING:
    from tasksolve.specs.plan import Plan
    from tasksolve.specs.spec import Spec

DPDK_MAX_LCORE = 128  # RTE_MAX_LCORE of a default build
DROP_IN = "/etc/systemd/system/UNIT.service.d/tasksolve.conf"


def _nodes(spec: Spec, plan: Plan) -> str | None:
    """The plan's NUMA nodes as a list (``0-1``), or None without NUMA information."""
    found = pins(spec, plan)
    if any(p.node is None for p in found):
        return None
    return cpu_list([p.node for p in found if p.node is not None])


def numactl_lines(spec: Spec, plan: Plan) -> list[str]:
    """``exec numactl --physcpubind=CPUS --membind=NODES -- "$@"``."""
    found = pins(spec, plan)
    nodes = _nodes(spec, plan)
    membind = f" --membind={nodes}" if nodes is not None else ""
    return [
        "#!/bin/sh",
        *header(spec, plan, "numactl"),
        f"# {numa_note(spec)}" + ("" if nodes is not None else ": --membind left out"),
        "#",
        "# Usage: sh numactl.sh PROGRAM [ARGUMENT...] -- runs PROGRAM on the plan's CPUs only"
        + (", its memory on their NUMA nodes." if nodes is not None else "."),
        "# numactl binds the whole process: each thread may run on any of these CPUs (the taskset",
        "# format pins each thread to its own). The plan's threads:",
        *[f"#   thread {i}: {p.thread} on {p.context} -> CPU {p.cpu}, node {p.node}" for i, p in enumerate(found)],
        "set -eu",
        f'exec numactl --physcpubind={cpu_list([p.cpu for p in found])}{membind} -- "$@"',
    ]


def likwid_pin_lines(spec: Spec, plan: Plan) -> list[str]:
    """``exec likwid-pin -c CPU,CPU,... -s 0x0 "$@"``: the main thread runs the plan's first thread."""
    found = pins(spec, plan)
    return [
        "#!/bin/sh",
        *header(spec, plan, "likwid-pin"),
        "#",
        "# Usage: sh likwid.sh PROGRAM [ARGUMENT...]. likwid-pin pins the main thread to the first CPU",
        "# of -c and the threads PROGRAM creates (pthread_create, in order) to the next ones. Assumed:",
        "# the main thread runs the plan's thread 0 and the k-th created thread the plan's thread k",
        "# (a main thread that runs no plan thread needs a CPU of its own put first in -c).",
        "# -s: bit k set = the k-th created thread (from 0) is a helper left unpinned, using no CPU of",
        "# the list (e.g. Intel OpenMP's shepherd thread: 0x1). The plan names no helper threads: 0x0.",
        "# OMP_NUM_THREADS is set to the number of CPUs, as likwid-pin does when it is unset: an",
        "# inherited smaller value (Dask and many job scripts export OMP_NUM_THREADS=1) would leave",
        "# the threads created after that many unpinned.",
        *thread_comments(found),
        "set -eu",
        f"OMP_NUM_THREADS={len(found)}; export OMP_NUM_THREADS",
        f'exec likwid-pin -c {",".join(str(p.cpu) for p in found)} -s 0x0 "$@"',
    ]


def omp_lines(spec: Spec, plan: Plan) -> list[str]:
    """``OMP_PLACES='{CPU},{CPU},...'`` and ``OMP_PROC_BIND=close``: OpenMP thread i on place i."""
    found = pins(spec, plan)
    places = ",".join(f"{{{p.cpu}}}" for p in found)
    return [
        "#!/bin/sh",
        *header(spec, plan, "omp"),
        "#",
        "# Usage: sh omp.sh PROGRAM [ARGUMENT...], or source it (. ./omp.sh) to set the variables in",
        "# your shell. One place per thread and OMP_PROC_BIND=close: OpenMP thread i (of the outermost",
        "# parallel region) runs on place i, the initial thread on the first.",
        *thread_comments(found, "OpenMP thread"),
        f"OMP_NUM_THREADS={len(found)}; export OMP_NUM_THREADS",
        f"OMP_PLACES={shlex.quote(places)}; export OMP_PLACES",
        "OMP_PROC_BIND=close; export OMP_PROC_BIND",
        'if [ "$#" -gt 0 ]; then exec "$@"; fi',
    ]


def dpdk_lines(spec: Spec, plan: Plan) -> list[str]:
    """One EAL option ``--lcores='0@CPU,1@CPU,...'``: lcore i runs the plan's thread i."""
    found = pins(spec, plan)
    lines = [
        *header(spec, plan, "dpdk"),
        "# An EAL option: put it among PROGRAM's EAL arguments (before `--`). lcore i runs the plan's",
        "# thread i on its CPU: lcore 0 is the main lcore (the thread that calls rte_eal_init; give",
        "# no --main-lcore), and the program launches thread i on lcore i (rte_eal_remote_launch).",
    ]
    if len(found) > DPDK_MAX_LCORE:
        lines.append(
            f"# {len(found)} lcores: a DPDK build needs RTE_MAX_LCORE >= {len(found)} (default {DPDK_MAX_LCORE})"
        )
    lines += thread_comments(found, "lcore")
    return lines + ["--lcores='" + ",".join(f"{i}@{p.cpu}" for i, p in enumerate(found)) + "'"]


def systemd_lines(spec: Spec, plan: Plan) -> list[str]:
    """A ``[Service]`` drop-in: ``CPUAffinity=``, ``AllowedCPUs=``, ``AllowedMemoryNodes=``."""
    found = pins(spec, plan)
    cpus = cpu_list([p.cpu for p in found])
    nodes = _nodes(spec, plan)
    lines = [
        f"# {DROP_IN}",
        "# (UNIT: the service; then `systemctl daemon-reload` and restart it)",
        *header(spec, plan, "systemd"),
        f"# {numa_note(spec)}" + ("" if nodes is not None else ": AllowedMemoryNodes= left out"),
        "# CPUAffinity= sets the CPUs of the service's processes; AllowedCPUs= and AllowedMemoryNodes=",
        "# restrict its cgroup (cgroup v2 with the cpuset controller; ignored on v1). The service's",
        "# threads may run on any of these CPUs: which thread on which CPU stays with the program (or",
        "# the taskset launcher in ExecStart=). The plan's threads:",
        *thread_comments(found),
        "[Service]",
        f"CPUAffinity={cpus}",
        f"AllowedCPUs={cpus}",
    ]
    return lines + ([f"AllowedMemoryNodes={nodes}"] if nodes is not None else [])
