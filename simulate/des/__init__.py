"""Discrete-event simulation of a plan on SimPy (docs/design.md, "Semantics every oracle shares").

Time is counted in cycles of the topology's clock; SimPy's `Environment` holds the clock and
the event queue.

**Fluid processor sharing.**  For every resource ``r`` and every domain ``D`` of its level,
``load_r(D)`` is the sum of what the threads of ``D`` load now: ``demand`` while processing a
packet, ``idle_demand`` while waiting for input or blocked on a full output queue (busy-polling
runtimes spin in both cases).  A processing thread progresses at
``rate = min(1, min over the resources it demands of capacity_r / load_r(D))`` cycles of work
per cycle.  Loads are kept as exact integers (demands in units of 1e-9), so a rate depends only
on which threads are co-located, never on the order events were applied.

**Event discipline** (equivalent to interrupting and rescheduling every affected thread): a thread
changes what it loads only when it starts processing, starts waiting or blocks.  Then the loads
of its domains are updated, and only the domains whose load was or is above capacity are
*dirty*; the processing threads demanding a dirty resource get their new rate, their remaining
work is advanced at the old rate, and their completion is rescheduled as a new SimPy `Timeout`
carrying a token (stale completions are ignored).  A thread that finishes a packet and starts
the next at once loads the same demand, so nothing else is touched.

**Packets.**  Threads form groups (see `simulate.model`).  A thread processes packets in order;
it starts packet ``k`` once the messages of all its predecessor groups have arrived (join), its
work is ``sum of task cycles * X`` (see `simulate.service`) plus the communication cost of each
incoming message (by the innermost level it shares with the replica that produced it); when it
finishes it sends one message to every successor group (fork) and, if a destination queue is
full, blocks until there is room for all of them.  Replicas of a group take packets in turn
(packet ``k`` -> replica ``k mod R``); with ``shared_queue`` they take the next packet from one
queue whenever they are free (NPIRE's global task queue).  Queues are bounded FIFOs of
``queue_capacity`` messages per (consumer, producer group): a message for the consumer's packet
``j`` enters only when ``j < started + capacity`` (for a single producer, exactly a FIFO of that
capacity; with replicated producers the window never deadlocks because the packet the consumer
needs next always fits).

**Sources.**  Saturated (default): the entry thread always has a packet; its generation time is
when the entry thread starts it.  Otherwise packets arrive at ``rate`` per second per instance,
deterministically or as a Poisson process, into an unbounded source queue; the generation time
is the arrival time.  A packet departs when every exit group has finished it; its latency is the
departure time minus its generation time.

Modules: `settings` (`DesSettings`), `ports` (thread states, input queues), `tables` (the state
built from the thread graph), `dynamics` (loads, rates, packets, sources), `phases` (NPIRE's
critical sections, optimistic sections and early signals inside a packet), `run` (the window
loop, `Simulation`, `simulate`), `results` (`to_measurement`).  Only SimPy's public API is used.

**Output analysis**: see `simulate.output` (windows, MSER warm-up removal, batch means); the run
stops when the relative 95% half-width of the total throughput (and of the mean latency with
``stop_on`` latency) is at most ``precision``, or after ``packets`` departures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:  # for type checkers and editors; never executed
    from tasksolve.simulate.des.results import check_finite, to_measurement
    from tasksolve.simulate.des.run import RunResult, Simulation, simulate
    from tasksolve.simulate.des.settings import DesSettings

# submodule -> the names it exports, each imported on first access (lazy_loader: PEP 562)
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "results": ["check_finite", "to_measurement"],
        "run": ["RunResult", "Simulation", "simulate"],
        "settings": ["DesSettings"],
    },
)
