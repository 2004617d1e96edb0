"""The probe without a C compiler: the same two measurements with Python processes.

Coarse, and said so: a Python spin loop needs a few hundred nanoseconds per iteration, so the
one-way latencies it reports are mostly interpreter time (236 ns against the compiled helper's
62 ns on the 2-core development VM: 3.5x; BENCHMARKS.md, "Real machines: topology probe");
they still rank pairs when the differences are large (a remote socket), never SMT against a
shared cache.  The compute loop's interference is measured the same way as the helper's, with
interpreter loops (processes, so that the interpreter lock does not serialise them).
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import struct
import time

COARSE_NOTE = (
    "no compiled helper: latencies measured by Python processes include the interpreter's time per "
    "transfer (3.5x the compiled figure on a 2-core VM, bench/probe.py): they rank far pairs, not near ones"
)


def _pong(buffer: mmap.mmap, cpu: int, total: int) -> None:
    os.sched_setaffinity(0, {cpu})
    buffer[8] = 1
    for v in range(1, 2 * total, 2):
        while struct.unpack_from("q", buffer, 0)[0] != v:
            pass
        struct.pack_into("q", buffer, 0, v + 1)


def latency(a: int, b: int, rounds: int, batches: int) -> list[float]:
    """One-way latency (ns) per batch of `rounds` round trips between CPUs `a` and `b`."""
    buffer = mmap.mmap(-1, 64)
    context = multiprocessing.get_context("fork")
    child = context.Process(target=_pong, args=(buffer, b, rounds * (batches + 1)), daemon=True)
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {a})
    try:
        child.start()
        while buffer[8] != 1:
            pass
        v, found = 0, []
        for batch in range(-1, batches):
            t0 = time.perf_counter_ns()
            for _ in range(rounds):
                struct.pack_into("q", buffer, 0, v + 1)
                while struct.unpack_from("q", buffer, 0)[0] != v + 2:
                    pass
                v += 2
            if batch >= 0:
                found.append((time.perf_counter_ns() - t0) / (2.0 * rounds))
        child.join(10)
    finally:
        os.sched_setaffinity(0, mine)
        if child.is_alive():
            child.kill()
    return found


def _spin(cpu: int, seconds: float, start, results) -> None:
    os.sched_setaffinity(0, {cpu})
    start.wait()
    count, x = 0, 1
    c0, t0 = time.process_time(), time.perf_counter()
    deadline = t0 + seconds
    while (now := time.perf_counter()) < deadline:
        for _ in range(2000):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        count += 2000
    results.put((cpu, (count / (now - t0), (time.process_time() - c0) / (now - t0))))


def loop(seconds: float, cpus: list[int]) -> list[tuple[float, float]]:
    """Iterations per second of a compute loop run on all `cpus` at once, in their order, each with
    the share of the wall time its process ran (below 1: another process shared the CPU)."""
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(len(cpus)), context.Queue()
    workers = [context.Process(target=_spin, args=(cpu, seconds, start, results)) for cpu in cpus]
    for worker in workers:
        worker.start()
    rates = dict(results.get(timeout=60 + 10 * seconds) for _ in workers)
    for worker in workers:
        worker.join()
    return [rates[cpu] for cpu in cpus]
