"""Topological orders of task and thread graphs: the one implementation, on `graphlib`.

Kahn's algorithm as the standard library's `graphlib.TopologicalSorter` runs it, handing out one
ready node at a time so that the order is deterministic: among the nodes that are ready, the one
listed first in `nodes` goes next (or the one `choose` picks, e.g. at random for a random
topological order). A cycle raises `graphlib.CycleError`, whose ``args[1]`` lists the nodes of
one cycle.
"""

from __future__ import annotations

import graphlib
import heapq
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

Node = TypeVar("Node", bound=Hashable)
CycleError = graphlib.CycleError


def topological_order(
    nodes: Sequence[Node],
    predecessors: Callable[[Node], Iterable[Node]],
    choose: Callable[[list[Node]], Node] | None = None,
) -> list[Node]:
    """Every node of `nodes` after all of its `predecessors(node)`; see the module docstring.

    `choose(ready)` must remove and return one node of the list ``ready``.
    """
    sorter: graphlib.TopologicalSorter = graphlib.TopologicalSorter()
    for node in nodes:
        sorter.add(node, *predecessors(node))
    sorter.prepare()
    position = {node: i for i, node in enumerate(nodes)}
    last = len(position)  # a predecessor not listed in `nodes` comes after every listed one
    order: list[Node] = []
    if choose is None:
        heap = [(position.get(node, last), node) for node in sorter.get_ready()]
        heapq.heapify(heap)
        while heap:
            _, node = heapq.heappop(heap)
            order.append(node)
            sorter.done(node)
            for ready in sorter.get_ready():
                heapq.heappush(heap, (position.get(ready, last), ready))
        return order
    pool = list(sorter.get_ready())
    while pool:
        node = choose(pool)
        order.append(node)
        sorter.done(node)
        pool.extend(sorter.get_ready())
    return order
