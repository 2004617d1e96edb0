"""The run loop of one simulation (`simulate.des`): windows, snapshots, the stopping rule.

The run advances window by window (``env.run(until=...)``); after each it takes a snapshot of the
accumulators, detects a stall (no departure for ``stall_windows`` windows: a deadlock), checks the
wall-clock cap (``time_cap``: `SimulationTimeout`), and every few windows asks `simulate.output`
(MSER warm-up removal, batch means) whether the 95% half-width of the throughput (and of the mean
latency with ``stop_on`` latency) is within ``precision``; it stops then, or at the ``packets``
cap.  A random run (drawn work, failures or arrivals) stops on a zero half-width only when the
check before also found one: MSER keeps the tail that varies least, and a stretch where a queue
filled by early luck fed the bottleneck back to back is such a tail.  Beyond ``2 * max_windows`` windows,
pairs of windows are merged.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from tasksolve.simulate.analytic import solve
from tasksolve.simulate.des.dispatch import AtRandom
from tasksolve.simulate.des.dynamics import Dynamics
from tasksolve.simulate.des.ports import BLOCKED, BUSY
from tasksolve.simulate.des.results import to_measurement
from tasksolve.simulate.des.settings import DesSettings
from tasksolve.simulate.errors import OracleError, SimulationTimeout, TooFewPackets
from tasksolve.simulate.measurement import Measurement
from tasksolve.simulate.output import Analysis, analyse
from tasksolve.simulate.service import arrival_stream

if TYPE_CHECKING:
    from tasksolve.simulate.model import ThreadGraph

# relative half-width below which equal batch means differ only by rounding
ZERO_SPREAD = 1e-12


@dataclass
class Snapshot:
    time: float
    busy: list[float]
    blocked: list[float]
    work: list[float]  # progress, the packet in hand included
    work_done: list[float]  # work of the completed packets
    done: list[int]
    wait_sum: list[float]
    wait_n: list[int]
    q_area: list[float]
    departed: int


@dataclass
class RunResult:
    """Raw outcome of one run (cycles), before conversion into a `Measurement`."""

    analysis: Analysis
    window: float
    snapshots: list[Snapshot]
    departures: list[np.ndarray]
    latencies: list[np.ndarray]
    converged: bool
    events: int = 0
    notes: list[str] = field(default_factory=list)


class Simulation(Dynamics):
    """One simulation of a compiled plan: ``Simulation(graph, settings, context_names).run()``
    returns a `Measurement`.  An object runs once (build a new one for another run)."""

    # ====================================================================== bookkeeping
    def _snapshot(self) -> Snapshot:
        now = self.env.now
        st, since = self.st, self.since
        busy, blocked = self.acc_busy, self.acc_blocked
        work = list(self.acc_work)
        phased = self.phased
        for t in range(self.T):
            dt = now - since[t]
            if phased[t]:
                work[t] += self._phase_progress(t, now)
            if st[t] == BUSY:
                busy[t] += dt
                if self.rate[t] >= 0 and not phased[t]:
                    work[t] += self.cur_work[t] - (self.rem[t] - self.rate[t] * (now - self.last[t]))
            elif st[t] == BLOCKED:
                blocked[t] += dt
            since[t] = now
        for port in self.ports:
            port.q_area += port.qlen * (now - port.q_since)
            port.q_since = now
        return Snapshot(
            now,
            list(busy),
            list(blocked),
            work,
            list(self.acc_work),
            list(self.done),
            [p.wait_sum for p in self.ports],
            [p.wait_n for p in self.ports],
            [p.q_area for p in self.ports],
            self.departed,
        )

    # ====================================================================== run
    def initial_window(self) -> float:
        """Window length (cycles): ``window_packets`` times the longer of the slowest instance's
        period and the slowest thread's time per packet (closed form, pessimistic), or the
        arrival gap.  Replicas that take packets in turn deliver them in bursts, one burst per
        thread time: a window must hold bursts, not the quiet between two of them."""
        try:
            closed = solve(self.graph)
            period = float(max(np.max(closed.period), np.max(closed.time)))
        except (ValueError, ZeroDivisionError):
            period = float(max(self.cycles))
        if not math.isfinite(period) or period <= 0:
            period = float(max(self.cycles))
        if self.settings.arrival != "saturated":
            period = max(period, self.graph.clock / self.settings.rate)
        return self.settings.window_packets * period

    def _begin(self) -> None:
        """Time 0: everyone idle, the sources started, the saturated entry threads at work."""
        settings = self.settings
        s = self.graph.structure
        for t in range(self.T):
            for slot, _busy, idle in self.tslots[t]:
                self.load[slot] += idle
        if settings.arrival != "saturated":
            gap = self.graph.clock / settings.rate
            self._arrivals = [arrival_stream(settings.seed, settings.arrival, gap, i) for i in range(len(s.instances))]
            self._entry_ports = [
                (self.g_ports[s.entry_group[i]], self.g_dispatch[s.entry_group[i]]) for i in range(len(s.instances))
            ]
            for i in range(len(s.instances)):
                self.env.timeout(self._arrivals[i].next(), (i, 0)).callbacks.append(self._arrival)
        for t in range(self.T):
            port = self.port_of[t]
            if port.saturated:
                self._start(t)
            else:
                port.idle.append(t)
        self._drain()

    def run_raw(self) -> RunResult:
        settings = self.settings
        env = self.env
        self._begin()
        window = self.initial_window()
        snapshots = [self._snapshot()]
        n = 0
        next_check = 2 * settings.min_batches
        analysis = Analysis(False, 0, 0, 0, 0)
        converged = False
        with_latency = "latency" in settings.stop_on
        # unbounded queues behind a saturated source grow for ever: no latency steady state
        latency_warmup = settings.latency_warmup and not (
            settings.arrival == "saturated" and settings.queue_capacity is None
        )
        last_departed, quiet = 0, 0
        zero = False  # the last check's half-width was zero in a random run
        deadline = None if settings.time_cap is None else time.monotonic() + settings.time_cap
        while True:
            n += 1
            env.run(until=n * window)
            if deadline is not None and time.monotonic() > deadline:
                raise SimulationTimeout(
                    f"the simulation ran past its wall-clock cap of {settings.time_cap:g} s (oracle.time_cap) after "
                    f"{self.departed} packets; raise oracle.time_cap or lower oracle.packets / oracle.precision"
                )
            snapshots.append(self._snapshot())
            if self.departed == last_departed:
                quiet += 1
                if quiet >= settings.stall_windows:
                    raise OracleError(
                        f"the simulation stalled: no packet left the system for {quiet} windows "
                        f"({quiet * window / self.graph.clock:.3g} s); the plan deadlocks"
                    )
            else:
                quiet, last_departed = 0, self.departed
            capped = self.departed >= settings.packets
            if n >= next_check or capped:
                analysis = self._analyse(window, n, latency_warmup)
                if analysis.ok:
                    zero_before, zero = zero, self._zero_spread(analysis)
                    good = analysis.relative_hw() <= settings.precision and (zero_before or not zero)
                    if with_latency:
                        good = good and analysis.relative_latency_hw() <= settings.precision
                    if good:
                        converged = True
                        break
                if capped:
                    break
                next_check = n + max(settings.min_batches // 2, n // 4)
            if n >= 2 * settings.max_windows and n % 2 == 0:
                snapshots = snapshots[::2]
                window *= 2
                n //= 2
                next_check = max(n + 1, next_check // 2)
        notes, analysis = self._conclude(analysis, window, n, converged, latency_warmup)
        return RunResult(
            analysis, window, snapshots, self._dep_arrays(), self._lat_arrays(), converged, self.events, notes
        )

    @cached_property
    def random(self) -> bool:
        """Whether any work, failure or arrival is drawn at random (`simulate.service`); fixed
        for the run, so read once."""
        return (
            self.settings.arrival == "poisson"
            or any(isinstance(rule, AtRandom) for rule in self.g_dispatch)
            or any(x is not None for x in self.streams)
            or any(row is not None and any(f is not None for f in row) for row in self.failures)
        )

    def _zero_spread(self, analysis: Analysis) -> bool:
        """A zero half-width in a random run: no confidence interval yet, unless it lasts.  The
        check at n = 58 windows of a pipeline whose speculative entry is its bottleneck truncated
        25 windows and kept 33 in which an early-filled queue fed the next thread back to back:
        2.332 Mpps +- 3e-9 where the truth is 2.277; the next check saw the spread again.  A
        deterministic run's equal batches are its steady state."""
        return analysis.relative_hw() <= ZERO_SPREAD and self.random

    def _analyse(self, window: float, n: int, latency_warmup: bool) -> Analysis:
        """`simulate.output.analyse` of the first `n` windows, latencies included."""
        settings = self.settings
        return analyse(
            window,
            n,
            self._dep_arrays(),
            self._lat_arrays(),
            settings.warmup,
            settings.min_batches,
            settings.max_batches,
            with_latency=True,
            latency_warmup=latency_warmup,
        )

    def _conclude(
        self, analysis: Analysis, window: float, n: int, converged: bool, latency_warmup: bool
    ) -> tuple[list[str], Analysis]:
        """The final analysis and the notes of a finished run (or why it cannot be measured)."""
        settings = self.settings
        notes = []
        if not analysis.ok and latency_warmup and self.departed >= settings.packets:
            analysis = self._analyse(window, n, latency_warmup=False)
            latency_warmup = False
        if not latency_warmup:
            notes.append(
                "the latency did not have to reach a steady state (unbounded queues, an "
                "overloaded source or a run cut at the packet cap): its figures describe the run"
            )
        if not analysis.ok:
            raise TooFewPackets(
                f"the simulation ended after {self.departed} packets (the `packets` cap) without enough "
                "measurements for a confidence interval; raise oracle.packets"
            )
        if not converged:
            notes.append(
                f"stopped at the packet cap ({settings.packets}) before reaching the requested precision "
                f"({100 * settings.precision:g}%): relative half-width {100 * analysis.relative_hw():.2f}%"
            )
        return notes, analysis

    def _dep_arrays(self) -> list[np.ndarray]:
        return [np.asarray(d, dtype=float) for d in self.dep_times]

    def _lat_arrays(self) -> list[np.ndarray]:
        return [np.asarray(d, dtype=float) for d in self.lat]

    def run(self) -> Measurement:
        return to_measurement(self, self.run_raw())


def simulate(spec, plan, graph: ThreadGraph | None = None, **overrides) -> Measurement:
    """Simulate a `specs.Plan` under `spec` (settings from ``spec.oracle``, then `overrides`): the
    one-call entry point."""
    from tasksolve.simulate.model import compile_plan

    settings = DesSettings.from_spec(spec, **overrides)
    if graph is None:
        graph = compile_plan(spec, plan)
    return Simulation(graph, settings, spec.topology.context_names).run()
