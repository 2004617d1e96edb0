"""Which replica of a group handles packet ``k`` (`simulate.model.Group.dispatch`).

A group of ``R`` replicas either takes packets in turn (`InTurn`: packet ``k`` to replica
``k mod R``, its ``k // R``-th) or draws a replica for every packet independently and uniformly
(`AtRandom`: RSS-like hashing of many flows; the choices come from their own stream of
`simulate.service`, keyed by the group, so runs are reproducible and plans that differ by a
symmetry of the hardware see the same choices).  Both answer the same three questions: the
replica of packet ``k`` and its position in that replica's sequence (`route`), the packet at a
replica's position ``j`` (`packet`), and the replica alone (`replica`).
"""

from __future__ import annotations

from array import array

from tasksolve.simulate.service import dispatch_generator

CHUNK = 4096


class InTurn:
    """Packet ``k`` to replica ``k mod R``."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def route(self, k: int) -> tuple[int, int]:
        return k % self.n, k // self.n

    def packet(self, replica: int, j: int) -> int:
        return j * self.n + replica

    def replica(self, k: int) -> int:
        return k % self.n


class AtRandom:
    """Packet ``k`` to a replica drawn uniformly at random, independently of every other packet.

    The choices are drawn in chunks as the packets come and kept (a few bytes per packet): a
    replica's ``j``-th packet and a packet's replica are both looked up."""

    __slots__ = ("n", "_rng", "_replica", "_position", "_mine")

    def __init__(self, n: int, seed: int, group: int) -> None:
        self.n = n
        self._rng = dispatch_generator(seed, group)
        self._replica = array("i")
        self._position = array("q")
        self._mine = [array("q") for _ in range(n)]

    def _draw(self) -> None:
        mine, start = self._mine, len(self._replica)
        choices = self._rng.integers(0, self.n, CHUNK).tolist()
        for offset, r in enumerate(choices):
            self._position.append(len(mine[r]))
            mine[r].append(start + offset)
        self._replica.extend(choices)

    def route(self, k: int) -> tuple[int, int]:
        while k >= len(self._replica):
            self._draw()
        return self._replica[k], self._position[k]

    def packet(self, replica: int, j: int) -> int:
        mine = self._mine[replica]
        while j >= len(mine):
            self._draw()
        return mine[j]

    def replica(self, k: int) -> int:
        while k >= len(self._replica):
            self._draw()
        return self._replica[k]


def dispatcher(group, seed: int, shared_queue: bool) -> InTurn | AtRandom:
    """The dispatch of `group` (`simulate.model.Group`): one port for a shared queue (NPIRE's
    global task queue: replicas take the next packet when free), else its own rule."""
    n = len(group.threads)
    if shared_queue and n > 1:
        return InTurn(1)
    if group.dispatch == "hash" and n > 1:
        return AtRandom(n, seed, group.index)
    return InTurn(n)
