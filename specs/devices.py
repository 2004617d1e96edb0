"""Devices where they sit: a NIC, a GPU, an NVMe drive placed at a domain of the topology, and the
tasks that read or write them (docs/design.md, "Devices").

A topology's ``devices`` names each device and the domain it hangs off (``at: socket1`` -- the
package whose PCIe root port it is on -- or ``machine``); a task's ``device`` names the device it
reads or writes and the bytes it moves per packet (one 64-byte line unless given).  Reaching the
device costs what a message between two contexts sharing the same level costs: the consumer of a
device's data on context ``c`` pays ``Topology.message_cycles(level, bytes)`` per packet, where
``level`` is the innermost level holding both ``c`` and the device's domain (`device_level`):
a device on socket 1 is one socket-level message away from socket 1's cores and a machine-level
(cross-socket) message away from the others.  The cost is per packet of the task, like its
incoming messages; every model adds it to the thread's work (`device_cycles`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tasksolve.specs.fields import Name, Size, StrictModel, Text

KINDS = ("nic", "gpu", "storage", "accelerator", "other")


class Device(StrictModel):
    """A device and the domain it is attached to (``machine``: equally far from every context)."""

    at: Annotated[str, Field(min_length=1, max_length=200, description="the domain it hangs off, or `machine`")]
    kind: Literal["nic", "gpu", "storage", "accelerator", "other"] = "other"
    description: Text | None = None


class DeviceUse(StrictModel):
    """What a task moves to or from a device per packet (``device: nic0`` is one 64-byte line)."""

    name: Name
    bytes: Size = 64

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: object) -> object:
        return {"name": data} if isinstance(data, str) else data


def device_level(topo, device: str, context: int) -> int:
    """The innermost level whose domain holds both `context` and the domain `device` is at
    (-1: the machine)."""
    level, domain = topo.parse_domain(topo.devices[device].at)
    if level < 0:
        return -1
    return min(level, topo.shared_level(topo.contexts_of(level, domain)[0], context))


def device_cycles(topo, use: DeviceUse, context: int) -> float:
    """Cycles a task on `context` pays per packet to reach its device (`device_level`)."""
    return float(topo.message_cycles(device_level(topo, use.name, context), use.bytes))


def device_table(topo, use: DeviceUse):
    """`device_cycles` of every context (a NumPy array indexed by context): the device's domain
    parsed once, the levels found for all contexts at once."""
    import numpy as np

    level, domain = topo.parse_domain(topo.devices[use.name].at)
    contexts = np.arange(topo.n_contexts)
    levels = np.full(topo.n_contexts, -1)
    if level >= 0:
        anchor = topo.contexts_of(level, domain)[0]
        for k in range(level + 1):  # outermost first: the last level still shared wins
            stride = topo.strides[k]
            levels[contexts // stride == anchor // stride] = k
    costs = {k: float(topo.message_cycles(k, use.bytes)) for k in set(levels.tolist())}
    return np.array([costs[k] for k in levels.tolist()], dtype=float)
