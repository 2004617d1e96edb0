"""The plans TSBSched and BlackBox predict: every distinct placement class when there are few
enough, else a uniform random sample.

Both papers predict every thread assignment: BlackBox "generate[s], execute[s], and measure[s]
all" of the ~1500 assignments of six threads (TPDS §5.1) and TSBSched predicts "tens or hundreds
of thousands different TSBs per experiment" (PPoPP'10 §3.3).  Assignments that differ by a
hardware symmetry perform alike (docs/design.md, "Symmetry"), so one representative per class
is predicted (`specs.UsableTree.representatives`, counted exactly by `specs.count_distinct`).
When the classes exceed `limit` (200,000 by default: ~30 s of enumeration in Python), or the
constraints break the symmetry (``pin``, ``forbid``), a uniform sample of `samples` plans
(`solver.binding.samplers.uniform_plans`, which honours every constraint) is predicted instead,
and its coverage -- at most ``samples / classes`` -- is stated.  ``max_threads`` caps are
symmetric, so the enumeration keeps the classes that satisfy them.

Plans are yielded in chunks, so memory holds one chunk, never every class.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from tasksolve.solver.binding.samplers import PlacementConstraints, uniform_plans
from tasksolve.specs import UsableTree, display
from tasksolve.specs.counting import count_distinct

CLASS_LIMIT = 200_000


@dataclass
class Candidates:
    """Which plans are predicted, and how they are produced."""

    spec: object
    exhaustive: bool
    classes: int  # distinct placement classes (usable contexts; other constraints ignored)
    samples: int  # plans drawn when not exhaustive
    seed: int = 0

    @classmethod
    def of(cls, spec, samples: int = 5000, seed: int = 0, limit: int = CLASS_LIMIT) -> Candidates:
        tree = UsableTree.of(spec.topology, spec.usable_contexts)
        classes = count_distinct(tree, len(spec.threads))
        symmetric = not spec.constraints.pin and not spec.constraints.forbid
        return cls(spec, symmetric and classes <= limit, classes, samples, seed)

    def describe(self) -> dict:
        if self.exhaustive:
            return {"exhaustive": True, "classes": self.classes, "coverage": 1.0}
        return {
            "exhaustive": False,
            "classes": self.classes,
            "samples": self.samples,
            "coverage_at_most": min(1.0, self.samples / self.classes) if self.classes else 0.0,
        }

    @property
    def label(self) -> str:
        if self.exhaustive:
            return f"all {display.count(self.classes, 'placement class')}"
        cover = self.describe()["coverage_at_most"]
        return f"{self.samples} random plans (of {self.classes:.3g} classes, coverage <= {cover:.2g})"

    def chunks(self, size: int = 16384) -> Iterator[np.ndarray]:
        """The plans as (rows, threads) arrays of at most `size` rows."""
        if not self.exhaustive:
            sample = uniform_plans(self.spec, self.samples, self.seed)
            for start in range(0, len(sample), size):
                yield sample[start : start + size]
            return
        tree = UsableTree.of(self.spec.topology, self.spec.usable_contexts)
        constraints = PlacementConstraints(self.spec)
        T = len(self.spec.threads)
        buffer = np.empty((size, T), dtype=np.intp)
        filled = 0
        for placement in tree.representatives(T):
            for context, thread in placement.items():
                buffer[filled, thread] = context
            filled += 1
            if filled == size:
                yield _valid(buffer, constraints)
                filled = 0
        if filled:
            yield _valid(buffer[:filled], constraints)


def _valid(rows: np.ndarray, constraints: PlacementConstraints) -> np.ndarray:
    return rows[constraints.valid(rows)].copy()
