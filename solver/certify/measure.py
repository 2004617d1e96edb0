"""One measurement per placement class per run: an oracle wrapper keyed by canonical form.

Plans equal up to the topology's symmetries (`specs.symmetry.UsableTree.canonical_form`) form one
placement class.  `ClassOracle` measures a class once, with a seed derived from the class and the
run's seed (`class_seed`: never from which restart or which sample reached it first), and answers
every later visit from its table:

* on a deterministic oracle (the closed form; a simulation whose half-width is 0) the second
  visit's value is the first's by construction;
* on a stochastic one the recorded measurement (its batch-means repeats and half-width) is reused:
  measuring the class again with its class seed would give the same figures, so reuse changes
  no value -- only the cost.  Where a decision needs more precision, `refine` adds independent
  repeats of the class, repeat ``r`` seeded by ``class_seed(seed, key, r)`` (repeat 0 is the first
  measurement), and the class's measurement becomes their pooled mean (`pooled`): the figure
  depends on the class and the number of repeats only, never on who asked first.  The samples
  file keeps each sample's value as it was drawn (repeat 0); `solver.certify.run` refines the
  certified plan only, while its verdict depends on the plan's noise.

The table lives in one process; worker processes each hold their own, and because the seed is
the class's, every process gets the same figure for a class: a sample never depends on the
executor, the number of workers or the order of the restarts.  A restart whose screened plans
are all in the table costs no simulation.  `measured` counts oracle calls, `classes` the table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tasksolve.specs import Plan
from tasksolve.specs.symmetry import UsableTree

if TYPE_CHECKING:
    from tasksolve.simulate.measurement import Measurement
    from tasksolve.solver.certify.designs import PlanOracle
    from tasksolve.solver.certify.judgement import Judgement
    from tasksolve.specs import Spec
    from tasksolve.specs.symmetry import Form


def class_seed(seed: int, key: object, repeat: int = 0) -> int:
    """The measurement seed of repeat `repeat` of a placement class:
    ``SeedSequence([seed, sha256(repr(form))..., repeat])`` (repeat 0 without the last word)."""
    digest = hashlib.sha256(repr(key).encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    extra = [int(repeat)] if repeat else []
    return int(np.random.SeedSequence([int(seed), *words, *extra]).generate_state(1)[0])


def pooled(measurements: Sequence[Measurement]) -> Measurement:
    """The mean of independent measurements of one plan: every figure averaged, each 95%
    half-width ``sqrt(sum h_i^2) / r`` (the mean of r independent estimates whose standard errors
    are ``h_i / z``: Law, *Simulation Modeling and Analysis*, 5th ed., section 9.4, independent
    replications; each run's own interval comes from its batch means)."""
    import dataclasses

    first, r = measurements[0], len(measurements)
    if r == 1:
        return first

    figures = [dataclasses.asdict(m) for m in measurements]

    def mean(name: str) -> float:
        return float(np.mean([f[name] for f in figures]))

    def spread(name: str) -> float:
        return float(np.sqrt(np.sum(np.square([f[name] for f in figures]))) / r)

    def mean_map(name: str) -> dict[str, float]:
        return {k: float(np.mean([f[name][k] for f in figures])) for k in figures[0][name]}

    per_instance_hw = {
        k: float(np.sqrt(sum(m.per_instance_half_width[k] ** 2 for m in measurements)) / r)
        for k in first.per_instance_half_width
    }
    return dataclasses.replace(
        first,
        throughput=mean("throughput"),
        half_width=spread("half_width"),
        min_throughput=mean("min_throughput"),
        latency_mean=mean("latency_mean"),
        latency_half_width=spread("latency_half_width"),
        per_instance=mean_map("per_instance"),
        per_instance_latency=mean_map("per_instance_latency"),
        per_instance_half_width=per_instance_hw,
        converged=all(m.converged for m in measurements),
        packets=int(sum(m.packets for m in measurements)),
        notes=[*first.notes, f"mean of {r} independent runs, seeded by the placement class and the run's number"],
    )


class ClassOracle:
    """`oracle` measured once per placement class of `spec`, seeded by class (module docstring)."""

    def __init__(self, spec: Spec, oracle: PlanOracle, seed: int) -> None:
        self.spec = spec
        self.oracle = oracle
        self.seed = int(seed)
        self.name = getattr(oracle, "name", "oracle")
        self.tree = UsableTree.of(spec.topology, spec.usable_contexts)
        self.table: dict[Form, Measurement] = {}
        self.runs: dict[Form, list[Measurement]] = {}  # the class's independent runs (`refine`)
        self.keys: dict[tuple[int, ...], Form] = {}
        self.measured = 0

    def key(self, contexts: Sequence[int]) -> Form:
        row = tuple(int(c) for c in contexts)
        found = self.keys.get(row)
        if found is None:
            found = self.keys[row] = self.tree.canonical_form({c: t for t, c in enumerate(row)})
        return found

    def has(self, contexts: Sequence[int]) -> bool:
        """The class of `contexts` is measured already (a visit costs nothing)."""
        return self.key(contexts) in self.table

    def evaluate_contexts(self, contexts: Sequence[int]) -> Measurement:
        key = self.key(contexts)
        found = self.table.get(key)
        if found is None:
            plan = Plan.from_contexts(self.spec, [int(c) for c in contexts])
            found = self.oracle.evaluate(plan, seed=class_seed(self.seed, key))
            self.measured += 1
            self.table[key] = found
        return found

    def refine(self, contexts: Sequence[int], repeats: int) -> Measurement:
        """The class's measurement from at least `repeats` independent runs (`pooled`; module
        docstring); repeat ``r`` is seeded by ``class_seed(seed, key, r)``."""
        key = self.key(contexts)
        runs = self.runs.setdefault(key, [self.evaluate_contexts(contexts)])
        if len(runs) < repeats:
            plan = Plan.from_contexts(self.spec, [int(c) for c in contexts])
            while len(runs) < repeats:
                runs.append(self.oracle.evaluate(plan, seed=class_seed(self.seed, key, len(runs))))
                self.measured += 1
            self.table[key] = pooled(runs)
        return self.table[key]

    def repeats(self, contexts: Sequence[int]) -> int:
        """How many independent runs the class's measurement pools (1 before `refine`)."""
        return len(self.runs.get(self.key(contexts), ())) or 1

    def evaluate(self, plan: Plan, seed: int | None = None) -> Measurement:
        """The class's measurement (`seed` is ignored: the class's seed is used)."""
        return self.evaluate_contexts(plan.contexts(self.spec))

    @property
    def classes(self) -> int:
        return len(self.table)


#: the most independent runs the certified plan's class gets where its noise decides the verdict
MAX_REPEATS = 4


def precise(
    classes: ClassOracle,
    contexts: Sequence[int],
    measured: Measurement,
    objective: str,
    judge: Callable[[Measurement], Judgement],
) -> tuple[Measurement, Judgement]:
    """The plan's measurement and `judge`'s verdict on it, after adding repeats of the plan's
    class (`ClassOracle.refine`, its `contexts`) while the verdict depends on the plan's noise: as
    long as judging the plan without its half-width would give another verdict (e.g. the
    pessimistic value misses a bound's target that the value meets, or a known plan's interval
    overlaps the plan's), one more independent run, up to `MAX_REPEATS`.  The known plans keep
    their own measurements."""
    import dataclasses

    found = judge(measured)
    for repeats in range(2, MAX_REPEATS + 1):
        if not measured.natural_half_width(objective):
            break
        exact = judge(dataclasses.replace(measured, half_width=0.0, latency_half_width=0.0))
        if exact.decision.verdict == found.decision.verdict:
            break
        measured = classes.refine(contexts, repeats)
        found = judge(measured)
    return measured, found
