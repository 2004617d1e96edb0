"""The experiments of a calibration: which plans to measure, and their per-instance throughputs.

A fit can only learn what the experiments vary (`solver.calibration.fitting`).  The plans, all valid
under the spec's constraints, cover both ends and the middle:

* **packed** -- the usable contexts in order: the threads share the innermost domains, so every
  resource is as loaded as the workload can make it (BlackBox's slowdown experiments, TPDS §4,
  co-locate a task with stressors for the same reason);
* **balanced** -- as many threads in every domain as possible (`balanced_plans`): little
  contention, which pins each task's cycles (BlackBox's base-time experiments);
* **random** -- uniform plans (`uniform_plans`): the mixes in between.

Every plan is measured once on the chosen oracle (`des`, `analytic`, or `command`: the user's
program), through the oracle's own `evaluate_many`.
"""

from __future__ import annotations

import numpy as np

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.binding.samplers import SamplerError, balanced_plans, uniform_plans
from tasksolve.specs import Plan, Spec
from tasksolve.specs.plan import check_plan


def calibration_plans(spec: Spec, random: int, seed: int, balanced: int = 4) -> np.ndarray:
    """Packed, balanced and `random` uniform plans (distinct rows; module docstring)."""
    rows: list[tuple[int, ...]] = []
    packed = tuple(spec.usable_contexts[: len(spec.threads)])
    if len(packed) == len(spec.threads) and not check_plan(spec, Plan.from_contexts(spec, list(packed))):
        rows.append(packed)
    for sampler, n in ((balanced_plans, balanced), (uniform_plans, random)):
        try:
            rows += [tuple(int(c) for c in row) for row in sampler(spec, n, seed)]
        except SamplerError:
            continue
    distinct = list(dict.fromkeys(rows))
    if not distinct:
        raise SamplerError("no plan satisfies the spec's constraints: nothing to measure")
    return np.array(distinct, dtype=np.intp)


def measure(
    spec: Spec, plans: np.ndarray, oracle_kind: str, *, seed: int, workers: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """Throughputs (packets/s) per instance (plans x instances, in `spec.instances` order), or the
    total (plans x 1) when the oracle reports no per-instance figures (a user's program); and,
    when the oracle reports every thread's utilization, each thread's time per packet (plans x
    threads in `spec.threads` order, cycles: utilization x clock / its instance's throughput)."""
    oracle = make_oracle(spec, oracle_kind)
    measurements = oracle.evaluate_many(
        [Plan.from_contexts(spec, list(map(int, row)), method="calibration") for row in plans],
        seed=seed,
        workers=workers,
    )
    names = [f"{app}#{i}" for app, i in spec.instances]
    if not all(set(names) <= set(m.per_instance) for m in measurements):
        return np.array([[m.throughput] for m in measurements], dtype=float), None
    throughput = np.array([[m.per_instance[name] for name in names] for m in measurements], dtype=float)
    instance_of = [names.index(f"{t.app}#{t.instance}") for t in spec.threads]
    clock = float(spec.topology.clock)
    times = np.full((len(plans), len(instance_of)), np.nan)
    for p, m in enumerate(measurements):
        utilization = {row.get("thread"): row.get("utilization") for row in m.threads}
        for t, thread in enumerate(spec.threads):
            u = utilization.get(thread.name)
            if u is not None and throughput[p, instance_of[t]] > 0:
                times[p, t] = float(u) * clock / throughput[p, instance_of[t]]
    usable = np.isfinite(times).all() and (times > 0).all()
    return throughput, (times if usable else None)
