"""specs.graphs: the one topological order (graphlib) against a direct check."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from tasksolve.specs.graphs import CycleError, topological_order


@st.composite
def dags(draw):
    n = draw(st.integers(1, 12))
    edges = {(i, j) for i in range(n) for j in range(i + 1, n) if draw(st.booleans())}
    labels = draw(st.permutations(range(n)))  # hide the construction order
    preds = {labels[j]: [labels[i] for i, k in edges if k == j] for j in range(n)}
    return list(range(n)), preds


@given(dags())
def test_order_respects_edges_and_takes_the_first_ready(graph):
    nodes, preds = graph
    order = topological_order(nodes, preds.__getitem__)
    assert sorted(order) == nodes
    seen: set[int] = set()
    for node in order:
        assert set(preds[node]) <= seen
        # the smallest node whose predecessors are all done is the one taken
        ready = [n for n in nodes if n not in seen and set(preds[n]) <= seen]
        assert node == min(ready)
        seen.add(node)


@given(dags(), st.integers(0, 2**31))
def test_random_choice_still_respects_edges(graph, seed):
    nodes, preds = graph
    rng = random.Random(seed)
    order = topological_order(nodes, preds.__getitem__, choose=lambda ready: ready.pop(rng.randrange(len(ready))))
    position = {node: i for i, node in enumerate(order)}
    assert all(position[p] < position[n] for n in nodes for p in preds[n])


def test_a_cycle_is_named_in_edge_order():
    preds = {"a": ["c"], "b": ["a"], "c": ["b"], "d": []}
    try:
        topological_order(list(preds), preds.__getitem__)
    except CycleError as exc:
        cycle = exc.args[1]
    else:  # pragma: no cover
        raise AssertionError("no cycle found")
    assert cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert all(cycle[i] in preds[cycle[i + 1]] for i in range(len(cycle) - 1))
