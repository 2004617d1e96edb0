"""Profiling tables of TSBSched (PPoPP'10) and BlackBox (IEEE TPDS), measured with any oracle.

* **Base-time table**: every distinct placement (modulo hardware symmetry) of one instance of an
  application alone on the machine -- 11 placements for a 3-thread instance on the T2.  For each:
  the instance's throughput and each thread's busy time per packet.
* **Slowdown table**: a *target* thread (one task of one application) on the first context of a
  *stress domain* (the ``core`` level by default), *stressing* threads (tasks of the workload,
  each the only thread of its own instance) on the other contexts of that domain, and the rest of
  the target's instance isolated on remote domains.  A stress combination is the multiset of
  stressing task types at each level of sharing (same pipe, same core but another pipe, ...).
  For each: the target instance's throughput and the target thread's busy time per packet.
  *Isolation* (BlackBox §3.1.1, "In all the experiments for Rtg thread, Ptg and Ttg threads
  execute in isolation on remote cores"): every other thread of the target's instance runs alone
  in a remote stress domain of its own; the stressing instances' other threads fill the stress
  domains left over (they never share a domain with the target's threads).

A plan is read thread by thread (`stress_keys`): the *co-runner key* lists every other thread in
the thread's stress domain (TSBSched Step 2(i)/(ii) exe_time2, BlackBox Step 2.1-2.3
performance 2), the *sibling key* only those of its own instance (TSBSched Step 2(ii)
exe_time1, BlackBox performance 1: the baseline already holds the siblings, whose interference
Step 1 models).

*Measurement noise* (`noise`, a relative standard deviation): every figure an experiment records
-- the instance's throughput and each thread's busy time -- is multiplied by its own factor
``1 + noise * z``, ``z`` standard normal, drawn from a generator seeded by ``noise_seed`` and the
experiment's key (the same experiment draws the same error, in any order of measuring).
`noisy_copy` gives tables already profiled a draw of such errors, without measuring again: how
the predictors fare when profiling has a machine's precision (PPoPP'10 §6: 3%).

Tables are filled lazily: an experiment runs the first time a prediction needs it, and
`ProfileTables.experiments` counts the experiments run; `full_table_size` gives the size of the
complete tables (BlackBox's Table 1 counts these).  `ensure` runs a batch of missing experiments
through `simulate.executor.Executor` (inline, local processes or Dask), reporting counts to a
``say(message)`` progress callable.
"""

from __future__ import annotations

import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from math import comb
from typing import Any, Protocol

import numpy as np

from tasksolve.solver.errors import BadProblemError
from tasksolve.specs import Plan, Spec, UsableTree
from tasksolve.specs.counting import count_distinct
from tasksolve.specs.symmetry import Form

TaskType = tuple[str, str]  # (application, task)
StressKey = tuple[tuple[TaskType, ...], ...]  # per sharing level, innermost first: sorted types


class Oracle(Protocol):
    def evaluate(self, plan: Plan, seed: int | None = None) -> Any: ...


OracleFactory = Callable[[Spec], Oracle]


@dataclass
class Experiment:
    """What one profiling run measured."""

    throughput: float  # packets/s of the target (or only) instance
    thread_times: dict[str, float]  # task -> busy seconds per packet, for the target instance


def _worker_state(kind: str | None, factory: OracleFactory | None = None) -> dict:
    """Per-worker state of the profiling map: how to make oracles, and those made so far."""
    return {"kind": kind, "factory": factory, "oracles": {}}


def _measure_chunk(state: dict, jobs: list[tuple[Spec, Plan, int]]) -> list[Any]:
    """One chunk of profiling experiments: (derived spec, contexts, seed) -> Measurement."""
    out = []
    for spec, plan, seed in jobs:
        key = spec.name + repr([(w.app, w.instances) for w in spec.workload])
        oracle = state["oracles"].get(key)
        if oracle is None:
            if state["factory"] is not None:
                oracle = state["factory"](spec)
            else:
                from tasksolve.simulate.oracle import make_oracle

                oracle = make_oracle(spec, state["kind"])
            state["oracles"][key] = oracle
        out.append(oracle.evaluate(plan, seed=seed))
    return out


def derived_spec(spec: Spec, workload: list[tuple[str, int]], name: str) -> Spec:
    """The spec with another workload (same topology and applications, no constraints)."""
    data = spec.model_dump(by_alias=True, exclude={"workload", "constraints", "name"})
    data["workload"] = [{"app": app, "instances": count} for app, count in workload]
    data["name"] = name
    data["problem"] = "binding"
    return Spec.model_validate(data)


def _instance_figures(measurement: Any, instance: str) -> Experiment:
    """The target instance's throughput and its threads' busy time per packet in one experiment.
    Both papers read them per instance and per thread; an oracle that reports neither (a user's
    program measured by the command oracle prints one figure per run) cannot profile."""
    if instance not in measurement.per_instance:
        raise BadProblemError(
            f"the {measurement.oracle} oracle reports no throughput for instance {instance} of a profiling "
            "experiment: TSBSched and BlackBox need each instance's own figure (and TSBSched each thread's "
            "utilization); use the des or analytic oracle for them, or --method cpsat,random,balanced"
        )
    throughput = measurement.per_instance[instance]
    times = {}
    for thread in measurement.threads:
        if thread["thread"].startswith(instance + ".") and "utilization" in thread:
            task = thread["thread"].split(".", 1)[1]
            times[task] = thread["utilization"] / throughput if throughput > 0 else float("inf")
    return Experiment(throughput, times)


@dataclass
class ProfileTables:
    """Base-time and slowdown tables of a spec, filled on demand by an oracle."""

    spec: Spec
    oracle_factory: OracleFactory
    stress_level: int | None = None
    seed: int = 0
    oracle_kind: str | None = None  # set to measure in `workers` worker processes
    workers: int = 1
    say: Callable[[str], None] = field(default=lambda _: None, repr=False)
    base: dict[str, dict[Form, Experiment]] = field(default_factory=dict)
    slowdown: dict[TaskType, dict[StressKey, Experiment]] = field(default_factory=dict)
    experiments: int = 0
    noise: float = 0.0  # relative standard deviation of every recorded figure
    noise_seed: int = 0
    profiling_seconds: float = 0.0
    _specs: dict[tuple, Spec] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        topo = self.spec.topology
        if self.stress_level is None:
            names = topo.level_names
            self.stress_level = names.index("core") if "core" in names[:-1] else max(0, len(names) - 2)
        self.tree = UsableTree.of(topo)

    # ------------------------------------------------------------------ shapes
    @property
    def sharing_levels(self) -> list[int]:
        """Levels at which a stressing thread can share with the target, innermost first."""
        depth = len(self.spec.topology.levels)
        return list(range(depth - 2, self.stress_level - 1, -1))

    @property
    def task_types(self) -> list[TaskType]:
        seen: list[TaskType] = []
        for ref in self.spec.threads:
            if (ref.app, ref.task) not in seen:
                seen.append((ref.app, ref.task))
        return seen

    def slots(self, level: int) -> int:
        """Contexts that share exactly `level` (as innermost level) with a given context."""
        topo = self.spec.topology
        inner = topo.strides[level + 1] if level + 1 < len(topo.levels) else 1
        return topo.strides[level] - inner

    def full_table_size(self) -> dict[str, int]:
        """Experiments in the complete tables (BlackBox Table 1): the base table's placement classes
        counted (`specs.counting.count_distinct`, exact without listing them: 74,376 for 8 threads
        on the T2), the slowdown table's stress combinations per target task type."""
        base = 0
        for app in self.spec.applications:
            if self.spec.instance_count(app):
                base += count_distinct(self.tree, len(self.spec.applications[app].tasks)) or 0
        types = len(self.task_types)
        per_target = 1
        for level in self.sharing_levels:
            cap = self.slots(level)
            per_target *= sum(comb(types + k - 1, k) for k in range(cap + 1))
        return {"base": base, "slowdown": types * per_target, "total": base + types * per_target}

    # ------------------------------------------------------------------ measuring
    def base_entry(self, app: str, form: Form) -> Experiment:
        """Throughput and thread times of one instance of `app` alone, placed as `form`."""
        table = self.base.setdefault(app, {})
        if form not in table:
            self.ensure_base([app])
        return table[form]

    def _base_jobs(self, app: str) -> list[tuple[tuple, Spec, Plan]]:
        """The base-time experiments of `app`: every distinct placement of one instance alone."""
        spec = derived_spec(self.spec, [(app, 1)], f"{self.spec.name}-base-{app}")
        tasks = list(spec.applications[app].tasks)
        jobs = []
        for placement in self.tree.representatives(len(tasks)):
            contexts = [0] * len(tasks)
            for context, thread in placement.items():
                contexts[thread] = context
            jobs.append((("base", app, self.tree.canonical_form(placement)), spec, contexts))
        return jobs

    def ensure_base(self, apps) -> int:
        """Run the base-time experiments of every app of `apps` not profiled yet."""
        jobs = [job for app in dict.fromkeys(apps) if not self.base.get(app) for job in self._base_jobs(app)]
        return self._run_jobs(jobs, "base-time")

    def ensure(self, wanted) -> int:
        """Run the slowdown experiments of the (target, stress key) pairs of `wanted` that the
        table lacks; returns how many ran."""
        jobs = []
        for target, key in dict.fromkeys(wanted):
            if key not in self.slowdown.get(target, {}):
                spec, plan = self._slowdown_experiment(target, key)
                jobs.append((("slowdown", target, key), spec, plan))
        return self._run_jobs(jobs, "slowdown")

    def _record(self, key: tuple, measurement: Any) -> None:
        app = key[1] if key[0] == "base" else key[1][0]
        self._store(key, _instance_figures(measurement, f"{app}#0"))

    def _store(self, key: tuple, figures: Experiment) -> None:
        """Keep one experiment's figures (with this table's measurement noise) under its key:
        ("base", app, form) or ("slowdown", target, stress key)."""
        self.experiments += 1
        figures = _perturbed(figures, self.noise, self.noise_seed, key)
        if key[0] == "base":
            self.base.setdefault(key[1], {})[key[2]] = figures
        else:
            self.slowdown.setdefault(key[1], {})[key[2]] = figures

    def noisy_copy(self, noise: float, seed: int) -> ProfileTables:
        """These tables as if every experiment had been measured with relative standard deviation
        `noise` (draw `seed`); experiments run later on the copy get their own errors too."""
        copy = ProfileTables(
            self.spec, self.oracle_factory, self.stress_level, self.seed, self.oracle_kind, self.workers, self.say
        )
        copy.noise, copy.noise_seed, copy._specs = noise, seed, self._specs
        for app, table in self.base.items():
            for form, figures in table.items():
                copy._store(("base", app, form), figures)
        for target, table in self.slowdown.items():
            for stress, figures in table.items():
                copy._store(("slowdown", target, stress), figures)
        copy.experiments = self.experiments
        return copy

    def _run_jobs(self, jobs: list[tuple[tuple, Spec, Plan]], label: str) -> int:
        """Measure `jobs` through the one executor; ``say`` gets the counts as chunks finish."""
        if not jobs:
            return 0
        from tasksolve.simulate.executor import Executor

        started = time.perf_counter()
        if self.oracle_kind == "analytic":
            self._run_closed_form(jobs, label)
            self.profiling_seconds += time.perf_counter() - started
            return len(jobs)
        processes = self.workers > 1 and self.oracle_kind is not None and len(jobs) > 1
        executor = Executor(workers=self.workers if processes else 1, chunk_size=max(1, min(64, len(jobs) // 8 or 1)))
        init_args = (self.oracle_kind,) if processes else (self.oracle_kind, self.oracle_factory)
        args = [(spec, plan, self.seed) for _, spec, plan in jobs]
        done = 0
        with executor.map(_measure_chunk, args, init=_worker_state, init_args=init_args) as stream:
            for indices, measurements in stream:
                for i, measurement in zip(indices, measurements):
                    self._record(jobs[i][0], measurement)
                done += len(indices)
                self.say(f"profiling: {done}/{len(jobs)} {label} experiments ({self.experiments} in all)")
        self.profiling_seconds += time.perf_counter() - started
        return len(jobs)

    def _run_closed_form(self, jobs: list[tuple[tuple, Spec, list[int]]], label: str) -> None:
        """The closed-form oracle measures a batch of experiments at once: one
        `simulate.analytic.BatchModel` per derived spec (the same figures as its `evaluate`:
        instance throughput, and a thread's busy time per packet ``s_t / clock``)."""
        from tasksolve.simulate.analytic import BatchModel

        groups: dict[int, list[int]] = {}
        for k, (_, spec, _) in enumerate(jobs):
            groups.setdefault(id(spec), []).append(k)
        done = 0
        for members in groups.values():
            spec = jobs[members[0]][1]
            model = BatchModel(spec)
            contexts = np.array([jobs[k][2] for k in members], dtype=np.intp)
            throughput = model.evaluate(contexts).per_instance
            times = model.times(contexts) / model.clock
            names = spec.thread_names
            for row, k in enumerate(members):
                key = jobs[k][0]
                app = key[1] if key[0] == "base" else key[1][0]
                instance = model.instance_names.index(f"{app}#0")
                prefix = f"{app}#0."
                figures = Experiment(
                    float(throughput[row, instance]),
                    {n[len(prefix) :]: float(times[t, row]) for t, n in enumerate(names) if n.startswith(prefix)},
                )
                self._store(key, figures)
            done += len(members)
            self.say(f"profiling: {done}/{len(jobs)} {label} experiments ({self.experiments} in all)")

    def layout(self) -> tuple[list[list[int]], list[int], list[TaskType]]:
        """Threads per instance, instance of each thread, task type of each thread."""
        index = {inst: i for i, inst in enumerate(self.spec.instances)}
        instance_of = [index[(t.app, t.instance)] for t in self.spec.threads]
        members: list[list[int]] = [[] for _ in self.spec.instances]
        for t, i in enumerate(instance_of):
            members[i].append(t)
        return members, instance_of, [(t.app, t.task) for t in self.spec.threads]

    def slowdown_entry(self, target: TaskType, key: StressKey) -> Experiment:
        """The slowdown experiment of `target` under the stressors of `key` (run if missing)."""
        if key not in self.slowdown.get(target, {}):
            self.ensure([(target, key)])
        return self.slowdown[target][key]

    def _slowdown_experiment(self, target: TaskType, key: StressKey) -> tuple[Spec, list[int]]:
        """The slowdown experiment of `target` under the stressors of `key`: (spec, context of
        every thread of the spec).

        The target on the first context of the first stress domain, the stressors on the contexts
        of that domain sharing the key's level with it; each other thread of the target's instance
        alone in a stress domain of its own (BlackBox §3.1.1 isolation); the stressing instances'
        other threads spread over the remaining domains, innermost level first.
        """
        topo = self.spec.topology
        app, task = target
        stressors = [t for level_types in key for t in level_types]
        counts = Counter([app] + [a for a, _ in stressors])
        workload = [(a, counts[a]) for a in self.spec.applications if counts[a]]
        spec = self._derived(tuple(workload))
        stride = topo.strides[self.stress_level]
        domains = topo.n_contexts // stride
        by_level = {
            level: [c for c in range(1, stride) if topo.shared_level(0, c) == level] for level in self.sharing_levels
        }
        assigned: dict[str, int] = {f"{app}#0.{task}": 0}
        next_instance = Counter({app: 1})
        for level, types in zip(self.sharing_levels, key):
            free = list(by_level[level])
            for stress_app, stress_task in types:
                if not free:
                    raise BadProblemError(
                        f"{self.spec.name}: stress combination does not fit in level {topo.level_names[level]}"
                    )
                instance = next_instance[stress_app]
                next_instance[stress_app] += 1
                assigned[f"{stress_app}#{instance}.{stress_task}"] = free.pop(0)
        own = [name for name in spec.thread_names if name.startswith(f"{app}#0.") and name not in assigned]
        if len(own) > domains - 1:
            raise BadProblemError(
                f"{self.spec.name}: the machine has {domains - 1} remote {topo.level_names[self.stress_level]} "
                f"domains, too few to isolate the {len(own)} other threads of `{app}`"
            )
        for d, name in enumerate(own, start=1):
            assigned[name] = d * stride
        rest = [d * stride + k for k in _spread_order(topo, stride) for d in range(len(own) + 1, domains)]
        for name in spec.thread_names:
            if name not in assigned:
                if not rest:
                    raise BadProblemError(f"{self.spec.name}: the machine is too small for the slowdown experiments")
                assigned[name] = rest.pop(0)
        contexts = [assigned[name] for name in spec.thread_names]
        return spec, contexts

    def _derived(self, workload: tuple[tuple[str, int], ...]) -> Spec:
        """The spec of a slowdown experiment's workload (made once per workload)."""
        spec = self._specs.get(workload)
        if spec is None:
            spec = self._specs[workload] = derived_spec(self.spec, list(workload), f"{self.spec.name}-stress")
        return spec

    # ------------------------------------------------------------------ reading a plan
    def instance_form(self, contexts: list[int], threads: list[int]) -> Form:
        """Canonical form of one instance's threads alone (labels: task position)."""
        return self.tree.canonical_form({contexts[t]: k for k, t in enumerate(threads)})

    def stress_keys(
        self, contexts: list[int], thread: int, instance_of: list[int], types: list[TaskType]
    ) -> tuple[StressKey, StressKey]:
        """(co-runner key, sibling key) of `thread` in a full plan: every other thread in its
        stress domain, and only those of its own instance, by innermost shared level."""
        topo = self.spec.topology
        me = contexts[thread]
        every: dict[int, list[TaskType]] = {level: [] for level in self.sharing_levels}
        siblings: dict[int, list[TaskType]] = {level: [] for level in self.sharing_levels}
        for other, context in enumerate(contexts):
            if other == thread:
                continue
            level = topo.shared_level(me, context)
            if level in every:
                every[level].append(types[other])
                if instance_of[other] == instance_of[thread]:
                    siblings[level].append(types[other])
        return (
            tuple(tuple(sorted(every[level])) for level in self.sharing_levels),
            tuple(tuple(sorted(siblings[level])) for level in self.sharing_levels),
        )


def _perturbed(figures: Experiment, noise: float, seed: int, key: tuple) -> Experiment:
    """`figures` with each figure times ``1 + noise * z`` (at least 0.1), ``z`` standard normal from a
    generator seeded by (`seed`, the key's CRC-32): the same experiment, the same error."""
    if noise <= 0:
        return figures
    rng = np.random.default_rng([seed, zlib.crc32(repr(key).encode())])
    factors = np.maximum(0.1, 1 + noise * rng.standard_normal(1 + len(figures.thread_times)))
    times = {task: value * f for (task, value), f in zip(sorted(figures.thread_times.items()), factors[1:])}
    return Experiment(figures.throughput * float(factors[0]), {k: float(v) for k, v in times.items()})


def _spread_order(topo, stride: int) -> list[int]:
    """Offsets inside a stress domain, one per innermost sub-domain before any second one."""
    inner = topo.strides[-2] if len(topo.strides) > 1 else 1
    inner = min(inner, stride)
    return [k * inner + j for j in range(inner) for k in range(stride // inner)]
