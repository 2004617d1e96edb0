"""One measurement per placement class per run: an oracle wrapper keyed by canonical form.

Plans equal up to the topology's symmetries (`specs.symmetry.UsableTree.canonical_form`) form one
placement class.  `ClassOracle` measures a class once, with a seed derived from the class and the
run's seed (`class_seed`: never from which restart or which sample reached it first), and answers
every later visit from its table:

* on a deterministic oracle (the closed form; a simulation whose half-width is 0) the second
  visit's value is the first's by construction;
* on a stochastic one the recorded measurement (its batch-means repeats and half-width) is reused:
  measuring the class again with its class seed would give the same figures, so reuse changes
  no value -- only the cost.  (Adding repeats where a decision needs more precision is not done
  yet: a decision uses the recorded half-width as it is.)

The table lives in one process; worker processes each hold their own, and because the seed is
the class's, every process gets the same figure for a class: a sample never depends on the
executor, the number of workers or the order of the restarts.  A restart whose screened plans
are all in the table costs no simulation.  `measured` counts oracle calls, `classes` the table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from tasksolve.specs import Plan
from tasksolve.specs.symmetry import UsableTree


def class_seed(seed: int, key: Any) -> int:
    """The measurement seed of a placement class: ``SeedSequence([seed, sha256(repr(form))...])``."""
    digest = hashlib.sha256(repr(key).encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return int(np.random.SeedSequence([int(seed), *words]).generate_state(1)[0])


class ClassOracle:
    """`oracle` measured once per placement class of `spec`, seeded by class (module docstring)."""

    def __init__(self, spec, oracle: Any, seed: int) -> None:
        self.spec = spec
        self.oracle = oracle
        self.seed = int(seed)
        self.name = getattr(oracle, "name", "oracle")
        self.tree = UsableTree.of(spec.topology, spec.usable_contexts)
        self.table: dict[Any, Any] = {}
        self.keys: dict[tuple[int, ...], Any] = {}
        self.measured = 0

    def key(self, contexts: Sequence[int]) -> Any:
        row = tuple(int(c) for c in contexts)
        found = self.keys.get(row)
        if found is None:
            found = self.keys[row] = self.tree.canonical_form({c: t for t, c in enumerate(row)})
        return found

    def evaluate_contexts(self, contexts: Sequence[int]) -> Any:
        key = self.key(contexts)
        found = self.table.get(key)
        if found is None:
            plan = Plan.from_contexts(self.spec, [int(c) for c in contexts])
            found = self.oracle.evaluate(plan, seed=class_seed(self.seed, key))
            self.measured += 1
            self.table[key] = found
        return found

    def evaluate(self, plan: Plan, seed: int | None = None) -> Any:
        """The class's measurement (`seed` is ignored: the class's seed is used)."""
        return self.evaluate_contexts(plan.contexts(self.spec))

    @property
    def classes(self) -> int:
        return len(self.table)
