"""Measuring the host: every pair of CPUs, one-way latency and compute-loop interference,
repeated, with the pairs in a fresh random order in each repetition (interleaved: a slow phase
of the host spreads over all pairs instead of landing on a few).

Per pair and repetition: the latency is the median of ``BATCHES`` batches of round trips (a
batch during which a thread was descheduled is an outlier, not the figure); the interference is
the loop's rate on both CPUs at once over its rate on each alone, measured right before, so that
slow drifts of the host cancel.  The rates alone are kept too, per second the loop ran (its
iterations over its own CPU time: another process sharing the CPU takes wall time, not speed),
once per pair a CPU is in: kinds of core are told apart by them (`simulate.probe.kinds`).  The compiled helper (`simulate.probe.helper`) is used where a C
compiler exists; otherwise the Python fallback, whose coarseness the result says.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tasksolve.simulate.errors import SimulateError
from tasksolve.simulate.probe.analysis import PairSample, Repetition

BATCHES = 9
ROUNDS = {"compiled": 2000, "python": 200}
LOOP_SECONDS = 0.05
RUN_TIMEOUT_S = 60


class ProbeError(SimulateError):
    """The probe could not measure (a CPU it cannot pin to, a helper that failed)."""


@dataclass
class ProbeData:
    """What the probe measured, and how."""

    repetitions: list[Repetition]
    backend: str
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Backend:
    """The compiled helper, or the Python fallback when `helper` is None."""

    def __init__(self, helper: Path | None) -> None:
        self.helper = helper
        self.name = "compiled" if helper else "python"

    def latency(self, a: int, b: int) -> float:
        if self.helper is None:
            from tasksolve.simulate.probe import fallback

            batches = fallback.latency(a, b, ROUNDS["python"], BATCHES)
        else:
            out = self._run("lat", a, b, ROUNDS["compiled"], BATCHES)
            batches = [float(x) for x in out.split()]
        return statistics.median(batches)

    def loop(self, cpus: list[int]) -> list[tuple[float, float]]:
        """Per CPU, the loop's iterations per second of wall time and the share of it the loop ran."""
        if self.helper is None:
            from tasksolve.simulate.probe import fallback

            return fallback.loop(LOOP_SECONDS, cpus)
        found = [line.split() for line in self._run("loop", LOOP_SECONDS, *cpus).splitlines()]
        return [(float(rate), float(share)) for rate, share in found]

    def _run(self, *args) -> str:
        argv = [str(self.helper), *(str(a) for a in args)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ProbeError(f"the probe helper failed ({' '.join(argv[1:])}): {exc}") from None
        if done.returncode != 0:
            raise ProbeError(f"the probe helper failed ({' '.join(argv[1:])}): {done.stderr.strip()[:200]}")
        return done.stdout


def choose_backend(prefer: str = "auto") -> tuple[Backend, str]:
    """The compiled helper where it can be built (``prefer='python'`` forces the fallback)."""
    from tasksolve.simulate.probe.fallback import COARSE_NOTE
    from tasksolve.simulate.probe.helper import build_helper

    if prefer == "python":
        return Backend(None), COARSE_NOTE
    path, note = build_helper()
    if path is None:
        if prefer == "compiled":
            raise ProbeError(f"the compiled helper is unavailable: {note}")
        return Backend(None), f"{note}; {COARSE_NOTE}"
    return Backend(path), note


def measure_pair(backend: Backend, a: int, b: int) -> PairSample:
    latency = backend.latency(a, b)
    (alone_a, share_a), (alone_b, share_b) = backend.loop([a]) + backend.loop([b])
    (both_a, _), (both_b, _) = backend.loop([a, b])
    return PairSample(
        latency, both_a / alone_a, both_b / alone_b, alone_a / max(share_a, 1e-3), alone_b / max(share_b, 1e-3)
    )


def probe(cpus: list[int], repeats: int = 3, prefer: str = "auto", seed: int = 0, progress=None) -> ProbeData:
    """Measure every pair of `cpus` `repeats` times (module docstring)."""
    allowed = os.sched_getaffinity(0)
    outside = [c for c in cpus if c not in allowed]
    if outside:
        raise ProbeError(f"this process may not run on CPU(s) {', '.join(map(str, outside))} (see taskset/cgroups)")
    if len(cpus) < 2:
        raise ProbeError("the probe needs at least two CPUs")
    backend, note = choose_backend(prefer)
    load_before = os.getloadavg()[0]
    pairs = [(a, b) for i, a in enumerate(cpus) for b in cpus[i + 1 :]]
    rng = random.Random(seed)
    began = time.perf_counter()
    repetitions = []
    for r in range(repeats):
        order = pairs[:]
        rng.shuffle(order)
        rep = {}
        for k, (a, b) in enumerate(order):
            rep[(a, b)] = measure_pair(backend, a, b)
            if progress is not None:
                progress(r, k + 1, len(order))
        repetitions.append(rep)
    notes = [note]
    load = max(load_before, os.getloadavg()[0])
    if load > len(allowed) / 2:
        notes.append(
            f"the host was busy (load average {load:.1f} on {len(allowed)} CPUs): other processes shared the "
            "CPUs, so the interference ratios include their time (latencies are batch medians, less affected)"
        )
    return ProbeData(repetitions, backend.name, notes, time.perf_counter() - began)
