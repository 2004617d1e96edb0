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

Tables are filled lazily: an experiment runs the first time a prediction needs it, and
`ProfileTables.experiments` counts the experiments run; `full_table_size` gives the size of the
complete tables (BlackBox's Table 1 counts these).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from math import comb
from typing import Any, Callable, Protocol

from specs import Plan, Spec, UsableTree
from specs.symmetry import Form

TaskType = tuple[str, str]            # (application, task)
StressKey = tuple[tuple[TaskType, ...], ...]   # per sharing level, innermost first: sorted types


class Oracle(Protocol):
    def evaluate(self, plan: Plan, seed: int | None = None) -> Any: ...


OracleFactory = Callable[[Spec], Oracle]


@dataclass
class Experiment:
    """What one profiling run measured."""

    throughput: float            # packets/s of the target (or only) instance
    thread_times: dict[str, float]   # task -> busy seconds per packet, for the target instance


def _measure_job(args: tuple) -> Any:
    """Worker side of `ProfileTables.prefetch`: one experiment on a fresh oracle."""
    from simulate.oracle import make_oracle

    spec, plan, kind, seed = args
    return make_oracle(spec, kind).evaluate(plan, seed=seed)


def _measure_jobs(state: None, jobs: list[tuple]) -> list[Any]:
    """A chunk of `_measure_job` for `simulate.executor.Executor`."""
    return [_measure_job(job) for job in jobs]


def derived_spec(spec: Spec, workload: list[tuple[str, int]], name: str) -> Spec:
    """The spec with another workload (same topology and applications, no constraints)."""
    data = spec.model_dump(by_alias=True, exclude={"workload", "constraints", "name"})
    data["workload"] = [{"app": app, "instances": count} for app, count in workload]
    data["name"] = name
    data["problem"] = "binding"
    return Spec.model_validate(data)


def _instance_figures(measurement: Any, instance: str, app: str, spec: Spec) -> Experiment:
    throughput = measurement.per_instance[instance]
    times = {}
    for thread in measurement.threads:
        if thread["thread"].startswith(instance + "."):
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
    oracle_kind: str | None = None    # set to measure a prefetch in worker processes
    base: dict[str, dict[Form, Experiment]] = field(default_factory=dict)
    slowdown: dict[TaskType, dict[StressKey, Experiment]] = field(default_factory=dict)
    experiments: int = 0
    _oracles: dict[str, Oracle] = field(default_factory=dict)

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
        """Experiments in the complete tables (BlackBox Table 1)."""
        base = 0
        for app in self.spec.applications:
            if self.spec.instance_count(app):
                base += sum(1 for _ in self.tree.representatives(len(self.spec.applications[app].tasks)))
        types = len(self.task_types)
        per_target = 1
        for level in self.sharing_levels:
            cap = self.slots(level)
            per_target *= sum(comb(types + k - 1, k) for k in range(cap + 1))
        return {"base": base, "slowdown": types * per_target, "total": base + types * per_target}

    # ------------------------------------------------------------------ measuring
    def _oracle(self, key: str, spec: Spec) -> Oracle:
        if key not in self._oracles:
            self._oracles[key] = self.oracle_factory(spec)
        return self._oracles[key]

    def base_entry(self, app: str, form: Form) -> Experiment:
        """Throughput and thread times of one instance of `app` alone, placed as `form`."""
        table = self.base.setdefault(app, {})
        if form not in table:
            self._fill_base(app)
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
            jobs.append((("base", app, self.tree.canonical_form(placement)), spec,
                         Plan.from_contexts(spec, contexts, method="profiling")))
        return jobs

    def _fill_base(self, app: str) -> None:
        self._run_jobs(self._base_jobs(app), workers=1)

    def _record(self, key: tuple, spec: Spec, measurement: Any) -> None:
        self.experiments += 1
        if key[0] == "base":
            _, app, form = key
            self.base.setdefault(app, {})[form] = _instance_figures(measurement, f"{app}#0", app, spec)
        else:
            _, target, stress = key
            self.slowdown.setdefault(target, {})[stress] = _instance_figures(measurement, f"{target[0]}#0", target[0], spec)

    def _run_jobs(self, jobs: list[tuple[tuple, Spec, Plan]], workers: int) -> None:
        if workers > 1 and self.oracle_kind is not None and len(jobs) > 1:
            from simulate.executor import Executor

            args = [(spec, plan, self.oracle_kind, self.seed) for _, spec, plan in jobs]
            with Executor(workers=workers, chunk_size=8).map(_measure_jobs, args) as stream:
                for indices, measurements in stream:
                    for i, measurement in zip(indices, measurements):
                        self._record(jobs[i][0], jobs[i][1], measurement)
            return
        for key, spec, plan in jobs:
            oracle = self._oracle(spec.name + repr([(w.app, w.instances) for w in spec.workload]), spec)
            self._record(key, spec, oracle.evaluate(plan, seed=self.seed))

    def prefetch(self, rows, workers: int = 1) -> int:
        """Run at once (in `workers` processes when `oracle_kind` is set) every experiment that
        predicting the plans `rows` will read; returns how many were run."""
        members, instance_of, types = self.layout()
        empty: StressKey = tuple(() for _ in self.sharing_levels)
        jobs: list[tuple[tuple, Spec, Plan]] = []
        for app in {self.spec.instances[i][0] for i in range(len(members))}:
            if app not in self.base:
                jobs.extend(self._base_jobs(app))
        wanted: set[tuple[TaskType, StressKey]] = set()
        for row in rows:
            contexts = [int(c) for c in row]
            for t in range(len(contexts)):
                for key in (self.stress_key(contexts, t, instance_of, types), empty):
                    if key not in self.slowdown.get(types[t], {}):
                        wanted.add((types[t], key))
        for target, key in sorted(wanted):
            spec, plan = self._slowdown_experiment(target, key)
            jobs.append((("slowdown", target, key), spec, plan))
        before = self.experiments
        self._run_jobs(jobs, workers)
        return self.experiments - before

    def layout(self) -> tuple[list[list[int]], list[int], list[TaskType]]:
        """Threads per instance, instance of each thread, task type of each thread."""
        index = {inst: i for i, inst in enumerate(self.spec.instances)}
        instance_of = [index[(t.app, t.instance)] for t in self.spec.threads]
        members: list[list[int]] = [[] for _ in self.spec.instances]
        for t, i in enumerate(instance_of):
            members[i].append(t)
        return members, instance_of, [(t.app, t.task) for t in self.spec.threads]

    def slowdown_entry(self, target: TaskType, key: StressKey) -> tuple[Experiment, Experiment]:
        """(target with the stressors of `key`, target with none) -- the slowdown experiment."""
        table = self.slowdown.setdefault(target, {})
        empty: StressKey = tuple(() for _ in self.sharing_levels)
        for k in (key, empty):
            if k not in table:
                spec, plan = self._slowdown_experiment(target, k)
                self._run_jobs([(("slowdown", target, k), spec, plan)], workers=1)
        return table[key], table[empty]

    def _slowdown_experiment(self, target: TaskType, key: StressKey) -> tuple[Spec, Plan]:
        """The slowdown experiment of `target` under the stressors of `key`: (spec, plan)."""
        topo = self.spec.topology
        app, task = target
        stressors = [t for level_types in key for t in level_types]
        counts = Counter([app] + [a for a, _ in stressors])
        workload = [(a, counts[a]) for a in self.spec.applications if counts[a]]
        spec = derived_spec(self.spec, workload, f"{self.spec.name}-stress")
        stride = topo.strides[self.stress_level]
        domains = topo.n_contexts // stride
        home = list(range(stride))          # the first stress domain
        target_context = 0
        by_level = {level: [c for c in home if c != target_context and topo.shared_level(target_context, c) == level]
                    for level in self.sharing_levels}
        assigned: dict[str, int] = {}
        next_instance = Counter({app: 1})
        for level, types in zip(self.sharing_levels, key):
            free = list(by_level[level])
            for stress_app, stress_task in types:
                if not free:
                    raise ValueError(f"stress combination does not fit in level {topo.level_names[level]}")
                instance = next_instance[stress_app]
                next_instance[stress_app] += 1
                assigned[f"{stress_app}#{instance}.{stress_task}"] = free.pop(0)
        assigned[f"{app}#0.{task}"] = target_context
        # every other thread: isolated, round-robin over the other stress domains
        remote = [d * stride + k for k in range(stride) for d in range(1, domains)]
        for name in spec.thread_names:
            if name not in assigned:
                if not remote:
                    raise ValueError("the machine is too small for the slowdown experiments")
                assigned[name] = remote.pop(0)
        contexts = [assigned[name] for name in spec.thread_names]
        return spec, Plan.from_contexts(spec, contexts, method="profiling")

    # ------------------------------------------------------------------ reading a plan
    def instance_form(self, contexts: list[int], threads: list[int]) -> Form:
        """Canonical form of one instance's threads alone (labels: task position)."""
        return self.tree.canonical_form({contexts[t]: k for k, t in enumerate(threads)})

    def stress_key(self, contexts: list[int], thread: int, instance_of: list[int], types: list[TaskType]) -> StressKey:
        """The stressing threads of `thread` in a full plan: threads of other instances in its
        stress domain, by innermost shared level."""
        topo = self.spec.topology
        me = contexts[thread]
        per_level: dict[int, list[TaskType]] = {level: [] for level in self.sharing_levels}
        for other, context in enumerate(contexts):
            if instance_of[other] == instance_of[thread]:
                continue
            level = topo.shared_level(me, context)
            if level in per_level:
                per_level[level].append(types[other])
        return tuple(tuple(sorted(per_level[level])) for level in self.sharing_levels)
