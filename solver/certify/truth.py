"""Truth by table: every placement class measured once, both designs' samples drawn by lookup.

For a problem small enough to enumerate (`solver.binding.samplers.distinct_placements`: every
placement modulo hardware symmetry, 1526 classes for two 3-thread IPFwd on the T2), the optimum
on an oracle is the best class.  When the oracle's figure depends only on the plan's class and
not on the measurement seed -- the simulation with deterministic work and saturated sources:
its streams are keyed by thread and task and its loads are exact integers (docs/design.md,
"Reproducibility"; the simulation section) -- a sample of either design can be drawn without
simulating again:

* ``random``: plan ``i`` of the uniform stream is worth its class's value;
* ``local-optima``: `solver.certify.designs.Climber.sample` runs unchanged (climb on the closed
  form, screen the best neighbours) with `ClassTable` as its oracle, so the screened candidates
  are valued by their classes.

The sample is then *equal* to the one the sampling service measures with the same seed (tested:
tests/certify/test_truth_table.py), and seeded repetitions cost table look-ups only.  With a seed-
or order-dependent oracle the equivalence does not hold and `ClassTable` must not be used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tasksolve.solver.binding.samplers import distinct_placements
from tasksolve.specs import Plan, Spec
from tasksolve.specs.symmetry import Form, UsableTree

if TYPE_CHECKING:
    from tasksolve.simulate.measurement import Measurement
    from tasksolve.solver.certify.designs import PlanOracle


class ClassTable:
    """Every placement class of `spec` measured once on `oracle` (an oracle object with
    ``evaluate(plan, seed=...)``), looked up by canonical form; usable as an oracle itself."""

    def __init__(self, spec: Spec, oracle: PlanOracle, seed: int = 0, on_progress: Callable[[int], None] | None = None):
        self.spec = spec
        self.tree = UsableTree.of(spec.topology, spec.usable_contexts)
        reps, orbits = distinct_placements(spec)
        self.representatives = reps
        self.orbits = np.array([int(o) for o in orbits], dtype=float)
        self.measurements: list[Measurement] = []
        self.index: dict[Form, int] = {}
        for k, row in enumerate(reps):
            contexts = [int(c) for c in row]
            self.index[self.key(contexts)] = k
            self.measurements.append(oracle.evaluate(Plan.from_contexts(spec, contexts), seed=seed))
            if on_progress is not None:
                on_progress(k + 1)
        self._cache: dict[tuple[int, ...], int] = {}

    def key(self, contexts: Sequence[int]) -> Form:
        return self.tree.canonical_form({int(c): t for t, c in enumerate(contexts)})

    def class_of(self, contexts: Sequence[int]) -> int:
        """Index of the class of a plan given as context indices."""
        row = tuple(int(c) for c in contexts)
        found = self._cache.get(row)
        if found is None:
            found = self._cache[row] = self.index[self.key(row)]
        return found

    def values(self, objective: str) -> np.ndarray:
        """Each class's figure for `objective` (`Measurement.value`: larger is better)."""
        return np.array([m.value(objective) for m in self.measurements])

    def has(self, contexts: Sequence[int]) -> bool:
        """Every class is measured already (`ClassOracle.has`)."""
        return True

    def evaluate(self, plan: Plan, seed: int | None = None) -> Measurement:
        """The measurement of the plan's class (`seed` is ignored: see the module docstring)."""
        return self.evaluate_contexts(plan.contexts(self.spec))

    def evaluate_contexts(self, contexts: Sequence[int]) -> Measurement:
        return self.measurements[self.class_of(contexts)]
