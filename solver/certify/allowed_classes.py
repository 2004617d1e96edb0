"""Which placement classes hold a plan the spec's ``pin`` and ``forbid`` allow (docs/design.md,
"A bound on the simulation", "Over all plans").

A class is the orbit of a representative under the usable tree's symmetries
(`specs.symmetry.UsableTree`: sibling subtrees of equal shape exchanged, recursively).  ``pin``
and ``forbid`` are not invariant under them, so a class may hold allowed and forbidden plans.
The class holds an allowed plan iff some symmetry maps the representative onto one, and a
symmetry is a choice, at every inner node, of a bijection between its children that keeps
shapes, made independently below.  Hence, with ``fits(a, b)``: "the subtree at ``a`` of the
representative can be moved onto the subtree at ``b`` with every thread on a context it may
take",

* at a context: ``a``'s thread (if any) may take ``b`` (its pin, if any, is ``b``; ``b`` is not
  forbidden to it);
* at an inner node: a perfect matching exists between ``a``'s and ``b``'s children, pairing
  children of equal shape that fit (Kuhn's augmenting paths),

and the class is allowed iff ``fits(root, root)``.  Exact, no raw plan enumerated; ``max_threads``
is a class property and is checked apart (`solver.certify.fluid_max`).
"""

from __future__ import annotations

import numpy as np


def allowed_matrix(spec) -> np.ndarray:
    """(threads, contexts) booleans: the contexts each thread may take under ``contexts``,
    ``pin`` and ``forbid``."""
    from tasksolve.solver.binding.samplers import PlacementConstraints

    cons = PlacementConstraints(spec)
    allowed = cons.allowed.copy()
    for t, c in cons.pinned.items():
        keep = allowed[t, c]
        allowed[t] = False
        allowed[t, c] = keep
    return allowed


def has_allowed_plan(tree, row, allowed: np.ndarray) -> bool:
    """Does the class of the plan `row` (context per thread) hold a plan `allowed` permits?"""
    thread_at = {int(c): t for t, c in enumerate(row)}
    depth = tree.depth
    memo: dict[tuple[int, int, int], bool] = {}

    def fits(level: int, a: int, b: int) -> bool:
        key = (level, a, b)
        if key in memo:
            return memo[key]
        if level == depth - 1:
            t = thread_at.get(a)
            ok = t is None or bool(allowed[t, b])
        else:
            ok = _matched(level, tree.children[(level, a)], tree.children[(level, b)])
        memo[key] = ok
        return ok

    def _matched(level: int, left: list[int], right: list[int]) -> bool:
        shapes = tree.shapes
        edges = [
            [
                j
                for j, kb in enumerate(right)
                if shapes[(level + 1, ka)] == shapes[(level + 1, kb)] and fits(level + 1, ka, kb)
            ]
            for ka in left
        ]
        owner: dict[int, int] = {}

        def augment(i: int, seen: set[int]) -> bool:
            for j in edges[i]:
                if j in seen:
                    continue
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
            return False

        return all(augment(i, set()) for i in range(len(left)))

    return fits(-1, 0, 0)


def allowed_classes(spec, reps: np.ndarray) -> np.ndarray:
    """Per representative (rows of `reps`), whether its class holds a plan ``pin`` and ``forbid``
    allow (all True when the spec has neither)."""
    from tasksolve.specs.symmetry import UsableTree

    cons = spec.constraints
    if not cons.pin and not cons.forbid:
        return np.ones(len(reps), dtype=bool)
    tree = UsableTree.of(spec.topology, spec.usable_contexts)
    allowed = allowed_matrix(spec)
    return np.array([has_allowed_plan(tree, row, allowed) for row in reps], dtype=bool)
