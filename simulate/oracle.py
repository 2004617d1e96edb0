"""The oracle interface the solver, the samplers and the certifier call.

An oracle measures plans of one spec.  `evaluate` measures one plan; `evaluate_many` measures a
batch, optionally in worker processes, and gives plan ``i`` the seed ``plan_seed(base, i)``, so
its results depend only on the plans, their order and the base seed -- never on the number of
workers.  Plans are `specs.Plan` objects or, for binding problems, sequences of context indices
(one per thread of ``spec.threads``).  Failures raise `simulate.OracleError`.

The kinds and their factories are registered in `simulate.registry`; the command oracle (a real
program run pinned on the host) is `simulate.command`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from tasksolve.simulate import analytic
from tasksolve.simulate.des import DesSettings, Simulation
from tasksolve.simulate.errors import OracleError
from tasksolve.simulate.measurement import Measurement
from tasksolve.simulate.model import Structure, ThreadGraph, binding_structure, compile_contexts, compile_plan

PlanLike = Any  # a specs.Plan, or a sequence of context indices (binding plans)


def plan_seed(base: int, index: int) -> int:
    """The seed of plan `index` in a batch run with seed `base` (a 32-bit integer)."""
    return int(np.random.SeedSequence([int(base), int(index)]).generate_state(1)[0])


@runtime_checkable
class Oracle(Protocol):
    """What every oracle offers."""

    name: str
    spec: Any

    def evaluate(self, plan: PlanLike, seed: int | None = None) -> Measurement: ...

    def evaluate_many(
        self, plans: Sequence[PlanLike], seed: int | None = None, workers: int | None = None
    ) -> list[Measurement]: ...


class _Compiler:
    """Compiles plans for one spec, reusing the binding structure."""

    def __init__(self, spec) -> None:
        self.spec = spec
        self._structure: Structure | None = None

    def structure(self) -> Structure:
        if self._structure is None:
            self._structure = binding_structure(self.spec)
        return self._structure

    def graph(self, plan: PlanLike) -> ThreadGraph:
        if hasattr(plan, "bindings"):
            if plan.threads is None:
                return compile_plan(self.spec, plan, self.structure())
            return compile_plan(self.spec, plan)
        return compile_contexts(self.spec, [int(c) for c in plan], self.structure())


class AnalyticOracle:
    """The closed form (`simulate.analytic`): exact for its model, no randomness (seeds ignored)."""

    name = "analytic"

    def __init__(self, spec, **overrides) -> None:
        if overrides:
            raise OracleError(f"the analytic oracle takes no settings (got {', '.join(sorted(overrides))})")
        self.spec = spec
        self._compiler = _Compiler(spec)
        self._batch: analytic.BatchModel | None = None

    def evaluate(self, plan: PlanLike, seed: int | None = None) -> Measurement:
        return analytic.evaluate(self.spec, plan, self._compiler.graph(plan))

    def evaluate_many(
        self, plans: Sequence[PlanLike], seed: int | None = None, workers: int | None = None
    ) -> list[Measurement]:
        return [self.evaluate(plan) for plan in plans]

    def batch(self) -> analytic.BatchModel:
        """The vectorised model of this spec's binding plans."""
        if self._batch is None:
            self._batch = analytic.BatchModel(self.spec)
        return self._batch


class SimulationOracle:
    """The SimPy simulation (`simulate.des`), with the spec's oracle settings and `overrides`
    (any field of `DesSettings`, e.g. ``precision=0.02``, ``queue_capacity=None``)."""

    name = "des"

    def __init__(self, spec, **overrides) -> None:
        self.spec = spec
        self.overrides = dict(overrides)
        self.settings = DesSettings.from_spec(spec, **overrides)
        self._compiler = _Compiler(spec)
        self._names = spec.topology.context_names

    @staticmethod
    def identity(spec) -> dict[str, Any]:
        """The settings that change this oracle's figures, for a samples file's header: the
        spec's simulation settings but the seed (plan i is measured with ``plan_seed(seed, i)``)
        and the wall-clock cap (raising it may resume a run)."""
        from dataclasses import asdict

        settings = asdict(DesSettings.from_spec(spec))
        settings.pop("seed")
        settings.pop("time_cap")
        return settings

    def evaluate(self, plan: PlanLike, seed: int | None = None) -> Measurement:
        """Simulate one plan; `seed` None uses the settings' seed (``oracle.seed``)."""
        settings = self.settings if seed is None else _with_seed(self.settings, seed)
        return Simulation(self._compiler.graph(plan), settings, self._names).run()

    def evaluate_many(
        self, plans: Sequence[PlanLike], seed: int | None = None, workers: int | None = None
    ) -> list[Measurement]:
        """Simulate every plan; plan ``i`` uses ``plan_seed(seed, i)`` (seed None: the settings'
        seed).  ``workers`` > 1 runs that many processes (None: 1) through `simulate.executor`."""
        base = self.settings.seed if seed is None else int(seed)
        return measure_many(self, (self.spec, self.overrides), plans, base, workers)


def measure_many(
    oracle, rebuild: tuple, plans: Sequence[PlanLike], base: int, workers: int | None
) -> list[Measurement]:
    """``oracle.evaluate(plan_i, plan_seed(base, i))`` for every plan, in the plans' order, on
    the one executor (`simulate.executor`): inline with `oracle` itself for one worker, else in
    ``workers`` processes that each rebuild the oracle as ``type(oracle)(*rebuild[:1], **rebuild[1])``."""
    from tasksolve.simulate.executor import Executor

    jobs = [(plan, plan_seed(base, i)) for i, plan in enumerate(plans)]
    workers = 1 if workers is None else max(1, int(workers))
    if workers == 1:
        init, init_args = _same, (oracle,)
    else:
        init, init_args = _rebuild, (type(oracle), *rebuild)
    results: list[Measurement | None] = [None] * len(jobs)
    with Executor(workers=workers).map(_measure_chunk, jobs, init=init, init_args=init_args) as stream:
        for indices, measurements in stream:
            for i, measurement in zip(indices, measurements):
                results[i] = measurement
    return results  # type: ignore[return-value]


def _with_seed(settings: DesSettings, seed: int) -> DesSettings:
    from dataclasses import replace

    return replace(settings, seed=int(seed))


def _same(oracle):
    return oracle


def _rebuild(cls, spec, overrides):
    return cls(spec, **overrides)


def _measure_chunk(oracle, jobs) -> list[Measurement]:
    return [oracle.evaluate(plan, seed) for plan, seed in jobs]


def make_oracle(spec, kind: str | None = None, **overrides) -> Oracle:
    """The oracle `kind` (a name of `simulate.registry.KINDS`; None: ``spec.oracle.kind``) for
    `spec`; raises `UnknownOracleError` (with a did-you-mean) or `OracleUnavailableError`."""
    from tasksolve.simulate import registry

    return registry.factory(kind or spec.oracle.kind)(spec, **overrides)
