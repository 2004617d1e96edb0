"""The thread graph: one internal representation of (spec, plan) shared by every oracle.

A plan is compiled into **groups** and **threads** (docs/design.md, "Vocabulary"):

* a *group* is an ordered list of tasks of one application instance that one thread runs for
  each packet; in a binding plan every task is its own group;
* a group is run by one thread or by ``R`` *replicas* that take packets in turn
  (packet ``k`` goes to replica ``k mod R``) or, for a binding spec's task with ``dispatch:
  hash``, each packet to a replica drawn at random;
* group ``P`` precedes group ``G`` when a task edge goes from a task of ``P`` to a task of ``G``;
  a thread of ``G`` starts a packet once the messages of every predecessor group have arrived
  (join) and, when it finishes, sends one message to every successor group (fork: copies).

Per thread, the compiled quantities are the ones the semantics of docs/design.md ("Semantics every
oracle shares") need:

* ``cycles``: the sum of its tasks' cycles (work per packet before communication), in cycles of
  the topology's clock; on a topology with kinds of core (`specs.cpu_kinds`) the cycles on the
  kind of the thread's context once it is bound (`attach`), and before, the fastest kind's (the
  least any placement can cost: what a bound may assume), ``kind_cycles`` holding every kind's;
* ``comm[t][i][r]``: cycles thread ``t`` pays per packet for the messages of its ``i``-th
  predecessor group when they come from that group's replica ``r``:
  ``sum over crossing task edges e of topology.message_cycles(shared_level(ctx_r, ctx_t), bytes_e)``
  (edges inside one thread cost nothing);
* ``device_comm[t]``: the cycles its tasks pay per packet to reach their devices from its
  context (`specs.devices`), included in ``mean_comm``;
* ``mean_comm[t]``: the long-run mean of that cost per packet (`producer_shares`: under
  round-robin replication consumer replica ``i`` of ``R_G`` sees producer replicas
  ``r == i (mod gcd(R_G, R_P))`` equally often; with a group that dispatches at random, ``hash``,
  every producer replica ``1 / R_P`` of the time);
* ``demand``/``idle_demand`` (threads x resources): what the thread loads while processing and
  while waiting.  A thread that runs several tasks loads the cycles-weighted mean of their
  demands (the fluid model does not resolve the order of the tasks inside one packet);
* ``sync[t]`` (NPIRE, `simulate.locks.Sync` per task of the thread, None when none of them has a critical section
  or an early signal): the lock of its critical section (one per application instance and lock
  name, `Structure.locks`), the share of the task's cycles inside it (its last ones), the
  speculation failure fraction and rollback cycles, the early-signal share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from tasksolve.simulate.errors import InvalidPlanError
from tasksolve.simulate.locks import speculation_work, sync_tables
from tasksolve.simulate.messages import producer_shares
from tasksolve.specs.devices import device_cycles
from tasksolve.specs.graphs import CycleError, topological_order
from tasksolve.specs.kind_work import kind_work


@dataclass(frozen=True)
class Group:
    """Tasks one thread runs for each packet, and the replicas that run them."""

    index: int
    instance: int  # index into `Structure.instances`
    app: str
    tasks: tuple[str, ...]
    stage: int
    threads: tuple[int, ...]  # thread indices, in replica order
    preds: tuple[int, ...]  # predecessor group indices
    succs: tuple[int, ...]  # successor group indices
    edge_bytes: tuple[tuple[int, ...], ...]  # per predecessor: bytes of each crossing task edge
    dispatch: str = "round_robin"  # which replica takes packet k: k mod R, or one drawn at random ("hash")


@dataclass
class Structure:
    """What runs, independent of where: groups, threads, work and demands."""

    names: list[str]
    instances: list[str]  # "app#i"
    groups: list[Group]
    group_of: list[int]
    replica_of: list[int]
    instance_of: list[int]
    task_cycles: list[tuple[float, ...]]
    resources: list[str]
    capacity: np.ndarray  # (R,)
    resource_level: list[int]  # topology level index, -1 machine
    demand: np.ndarray  # (T, R)
    idle_demand: np.ndarray  # (T, R)
    entry_group: list[int]  # per instance
    sink_groups: list[tuple[int, ...]]  # per instance
    locks: list[str] = field(default_factory=list)  # "app#i:lock"
    sync: list[tuple | None] = field(default_factory=list)  # per thread, per task
    # per thread, per task, per kind of core: cycles of the topology's clock (`specs.cpu_kinds`)
    task_kind_cycles: list[tuple[tuple[float, ...], ...]] = field(default_factory=list)
    group_order: tuple[int, ...] = ()  # the groups, each after its predecessors (`specs.graphs`)

    @property
    def n_threads(self) -> int:
        return len(self.names)

    @property
    def cycles(self) -> list[float]:
        return [sum(c) for c in self.task_cycles]

    @property
    def kind_cycles(self) -> np.ndarray:
        """(threads, kinds): each thread's cycles per packet on each kind of core."""
        return np.array([[sum(col) for col in zip(*tasks)] for tasks in self.task_kind_cycles], dtype=float)

    def on_kinds(self, kinds: Sequence[int]) -> Structure:
        """The structure with each thread's cycles those of kind ``kinds[t]`` (its context's)."""
        cycles = [tuple(task[k] for task in tasks) for tasks, k in zip(self.task_kind_cycles, kinds)]
        return replace(self, task_cycles=cycles)


@dataclass
class ThreadGraph:
    """A compiled plan: the structure plus a context per thread and communication costs."""

    structure: Structure
    clock: float
    contexts: list[int]
    comm: list[list[tuple[float, ...]]]  # comm[t][pred index][producer replica]
    mean_comm: list[float]
    strides: list[int]
    ideal: frozenset[str] = field(default_factory=frozenset)
    device_comm: list[float] = field(default_factory=list)  # per thread: cycles to reach its tasks' devices

    # convenient views ---------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return self.structure.names

    @property
    def n_threads(self) -> int:
        return self.structure.n_threads

    @property
    def groups(self) -> list[Group]:
        return self.structure.groups

    @property
    def instances(self) -> list[str]:
        return self.structure.instances

    @property
    def capacity(self) -> np.ndarray:
        if "contention" in self.ideal:
            return np.full(len(self.structure.resources), np.inf)
        return self.structure.capacity

    @property
    def work(self) -> np.ndarray:
        """Mean work per packet: cycles + mean incoming communication (cycles), plus the mean
        cost of failed optimistic critical sections (NPIRE §2.7) unless ``locks`` is idealised."""
        work = np.array(self.structure.cycles, dtype=float) + np.array(self.mean_comm, dtype=float)
        if any(self.structure.sync) and "locks" not in self.ideal:
            work += speculation_work(self.structure)
        return work

    def domain(self, thread: int, resource: int) -> int:
        """Index of the domain of `resource`'s level that holds `thread`'s context."""
        level = self.structure.resource_level[resource]
        return 0 if level < 0 else self.contexts[thread] // self.strides[level]

    def idealised(self, *what: str) -> ThreadGraph:
        """A copy with ``contention`` (infinite capacities), ``communication`` (free messages)
        and/or ``locks`` (critical sections run without their lock and never fail: NPIRE §5's
        "no synchronization") switched off (NPIRE-style bottleneck hunting)."""
        unknown = set(what) - {"contention", "communication", "locks"}
        if unknown:
            raise ValueError(f"unknown idealisation {sorted(unknown)}")
        graph = replace(self, ideal=self.ideal | frozenset(what))
        if "communication" in what:
            graph.comm = [[tuple(0.0 for _ in costs) for costs in per_pred] for per_pred in self.comm]
            graph.mean_comm = [0.0] * self.n_threads
            graph.device_comm = [0.0] * self.n_threads
        return graph


# --------------------------------------------------------------------------------- structure
def _resource_tables(spec) -> tuple[list[str], np.ndarray, list[int]]:
    topo = spec.topology
    names = [r.name for r in topo.resources]
    capacity = np.array([r.capacity for r in topo.resources], dtype=float)
    levels = [topo.level_index(r.level) for r in topo.resources]
    return names, capacity, levels


def _demand_rows(spec, app: str, tasks: Sequence[str], resources: list[str]) -> tuple[np.ndarray, np.ndarray]:
    application = spec.applications[app]
    weights = np.array([application.tasks[t].work for t in tasks], dtype=float)
    busy = np.zeros((len(tasks), len(resources)))
    idle = np.zeros((len(tasks), len(resources)))
    for i, task in enumerate(tasks):
        spec_task = application.tasks[task]
        for j, r in enumerate(resources):
            busy[i, j] = spec_task.demand.get(r, 0.0)
            idle[i, j] = spec_task.idle_demand.get(r, 0.0)
    if len(tasks) == 1:
        return busy[0], idle[0]
    w = weights / weights.sum()
    return w @ busy, w @ idle


def binding_structure(spec) -> Structure:
    """The structure of a binding plan: every task of every instance is a group, run by one
    thread or by the task's `replicas` (threads adjacent in `spec.threads`).  Built once per
    spec (a spec is not changed once loaded; every plan of it shares the structure)."""
    cached = spec.__dict__.get("_binding_structure")
    if cached is None:
        cached = spec.__dict__["_binding_structure"] = _binding_structure(spec)
    return cached


def _binding_structure(spec) -> Structure:
    groups: list[tuple[int, str, tuple[str, ...], int]] = []
    names = []
    thread_lists: list[list[int]] = []
    instance_names = [f"{app}#{i}" for app, i in spec.instances]
    instance_index = {key: n for n, key in enumerate(spec.instances)}
    for t, ref in enumerate(spec.threads):
        names.append(ref.name)
        if ref.replica == 0:
            groups.append((instance_index[(ref.app, ref.instance)], ref.app, (ref.task,), 0))
            thread_lists.append([])
        thread_lists[-1].append(t)
    return _assemble(spec, names, instance_names, groups, thread_lists)


def pipeline_structure(spec, plan) -> Structure:
    """The structure of a pipeline plan (``plan.threads``); checks that it is runnable."""
    assert plan.threads is not None
    names = list(plan.threads)
    instance_index = {key: n for n, key in enumerate(spec.instances)}
    instance_names = [f"{app}#{i}" for app, i in spec.instances]
    keys: dict[tuple, list[tuple[int, int]]] = {}
    for t, name in enumerate(names):
        th = plan.threads[name]
        if th.app not in spec.applications or (th.app, th.instance) not in instance_index:
            raise InvalidPlanError(f"thread `{name}`: no instance {th.app}#{th.instance} in the workload")
        key = (th.app, th.instance, th.stage, tuple(th.tasks))
        keys.setdefault(key, []).append((th.replica, t))
    groups, thread_lists = [], []
    owner: dict[tuple[str, int, str], tuple] = {}
    for key, members in keys.items():
        app, instance, stage, tasks = key
        members.sort()
        replicas = [r for r, _ in members]
        if len(set(replicas)) != len(replicas):
            dup = [names[t] for r, t in members if replicas.count(r) > 1]
            raise InvalidPlanError(f"threads {', '.join(dup)} run the same tasks with the same replica number")
        application = spec.applications[app]
        if len(set(tasks)) != len(tasks):
            raise InvalidPlanError(f"thread `{names[members[0][1]]}` lists a task twice")
        position = {task: i for i, task in enumerate(tasks)}
        for task in tasks:
            if task not in application.tasks:
                raise InvalidPlanError(f"thread `{names[members[0][1]]}`: unknown task `{task}` of `{app}`")
            where = (app, instance, task)
            if where in owner:
                other = owner[where]
                raise InvalidPlanError(
                    f"task `{app}#{instance}.{task}` is run by two different thread groups "
                    f"(tasks {list(other[3])} at stage {other[2]} and {list(tasks)} at stage {stage})"
                )
            owner[where] = key
            for pred in application.predecessors[task]:
                if pred in position and position[pred] > position[task]:
                    raise InvalidPlanError(
                        f"thread `{names[members[0][1]]}` runs `{task}` before its predecessor `{pred}`"
                    )
        groups.append((instance_index[(app, instance)], app, tasks, stage))
        thread_lists.append([t for _, t in members])
    for app, i in spec.instances:
        for task in spec.applications[app].tasks:
            if (app, i, task) not in owner:
                raise InvalidPlanError(f"task `{app}#{i}.{task}` is run by no thread of the plan")
    return _assemble(spec, names, instance_names, groups, thread_lists)


def _task_cycles(spec, app: str, tasks) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]:
    """The tasks' cycles on the fastest kind of core, and on every kind (`specs.kind_work`)."""
    topo = spec.topology
    per_kind = tuple(kind_work(spec.applications[app].tasks[task], topo.kind_names, topo) for task in tasks)
    return tuple(min(kinds) for kinds in per_kind), per_kind


def _assemble(spec, names, instance_names, groups_spec, thread_lists) -> Structure:
    resources, capacity, levels = _resource_tables(spec)
    n = len(names)
    group_of = [0] * n
    replica_of = [0] * n
    instance_of = [0] * n
    task_cycles: list[tuple[float, ...]] = [()] * n
    task_kind_cycles: list[tuple[tuple[float, ...], ...]] = [()] * n
    demand = np.zeros((n, len(resources)))
    idle = np.zeros((n, len(resources)))
    task_group: dict[tuple[int, str], int] = {}
    for g, (inst, app, tasks, _stage) in enumerate(groups_spec):
        for task in tasks:
            task_group[(inst, task)] = g
        busy_row, idle_row = _demand_rows(spec, app, tasks, resources)
        cycles, per_kind = _task_cycles(spec, app, tasks)
        for r, t in enumerate(thread_lists[g]):
            group_of[t], replica_of[t], instance_of[t] = g, r, inst
            task_cycles[t], task_kind_cycles[t] = cycles, per_kind
            demand[t], idle[t] = busy_row, idle_row
    preds = _group_preds(spec, groups_spec, task_group)
    succs: list[list[int]] = [[] for _ in groups_spec]
    for g, by_pred in enumerate(preds):
        for p in by_pred:
            succs[p].append(g)
    order = _topological(len(groups_spec), [list(p) for p in preds], names, thread_lists)
    groups = []
    for g, (inst, app, tasks, stage) in enumerate(groups_spec):
        pred_list = sorted(preds[g], key=order.__getitem__)
        groups.append(
            Group(
                index=g,
                instance=inst,
                app=app,
                tasks=tuple(tasks),
                stage=stage,
                threads=tuple(thread_lists[g]),
                preds=tuple(pred_list),
                succs=tuple(sorted(succs[g])),
                edge_bytes=tuple(tuple(preds[g][p]) for p in pred_list),
                dispatch=_dispatch(spec, app, tasks, len(thread_lists[g])),
            )
        )
    locks, sync = sync_tables(spec, groups, instance_names, thread_lists, n)
    entry_group, sink_groups = [], []
    of_instance: list[list[Group]] = [[] for _ in instance_names]
    for grp in groups:
        of_instance[grp.instance].append(grp)
    for inst in range(len(instance_names)):
        mine = of_instance[inst]
        entries = [grp.index for grp in mine if not grp.preds]
        if len(entries) != 1:
            raise InvalidPlanError(
                f"instance {instance_names[inst]} has {len(entries)} entry thread groups; expected 1"
            )
        entry_group.append(entries[0])
        sink_groups.append(tuple(grp.index for grp in mine if not grp.succs))
    return Structure(
        names=list(names),
        instances=list(instance_names),
        groups=groups,
        group_of=group_of,
        replica_of=replica_of,
        instance_of=instance_of,
        task_cycles=task_cycles,
        resources=resources,
        capacity=capacity,
        resource_level=levels,
        demand=demand,
        idle_demand=idle,
        entry_group=entry_group,
        sink_groups=sink_groups,
        locks=locks,
        sync=sync,
        task_kind_cycles=task_kind_cycles,
        group_order=tuple(sorted(range(len(groups)), key=order.__getitem__)),
    )


def _group_preds(spec, groups_spec, task_group: dict[tuple[int, str], int]) -> list[dict[int, list[int]]]:
    """Per group: its predecessor groups, each with the bytes of every crossing task edge (in the
    order the application gives its edges)."""
    preds: list[dict[int, list[int]]] = [dict() for _ in groups_spec]
    into = {app: _edges_into(spec.applications[app]) for app in {group[1] for group in groups_spec}}
    for g, (inst, app, tasks, _stage) in enumerate(groups_spec):
        for _, source, size in sorted(edge for task in tasks for edge in into[app].get(task, ())):
            source_group = task_group[(inst, source)]
            if source_group != g:
                preds[g].setdefault(source_group, []).append(size)
    return preds


def _edges_into(application) -> dict[str, list[tuple[int, str, int]]]:
    """Task -> (index in the application's edges, source, bytes) of the edges into it."""
    out: dict[str, list[tuple[int, str, int]]] = {}
    for index, edge in enumerate(application.edges):
        out.setdefault(edge.target, []).append((index, edge.source, int(edge.bytes)))
    return out


def _dispatch(spec, app: str, tasks, replicas: int) -> str:
    """A group's dispatch: its task's `dispatch` when the spec replicates that one task (a binding
    spec's replicated task), else round robin (pipeline replicas take packets in turn)."""
    task = spec.applications[app].tasks[tasks[0]] if replicas > 1 and len(tasks) == 1 else None
    return task.dispatch if task is not None and task.replicas == replicas else "round_robin"


def _topological(n: int, preds: list[list[int]], names, thread_lists) -> list[int]:
    """Position of each group in a topological order (`specs.graphs`); raises on a cycle between threads."""
    try:
        order = topological_order(list(range(n)), preds.__getitem__)
    except CycleError as exc:
        stuck = [names[thread_lists[g][0]] for g in exc.args[1][:-1]]
        raise InvalidPlanError("the thread groups depend on each other in a cycle: " + ", ".join(stuck[:6])) from None
    position = [0] * n
    for rank, g in enumerate(order):
        position[g] = rank
    return position


# --------------------------------------------------------------------------------- compile
def attach(spec, structure: Structure, contexts: Sequence[int]) -> ThreadGraph:
    """Bind the threads of `structure` to `contexts` (one per thread, same order)."""
    topo = spec.topology
    if len(contexts) != structure.n_threads:
        raise InvalidPlanError(f"{len(contexts)} contexts for {structure.n_threads} threads")
    contexts = [int(c) for c in contexts]
    if len(set(contexts)) != len(contexts):
        raise InvalidPlanError("two threads are bound to the same hardware context")
    if topo.kinds:
        structure = structure.on_kinds([topo.context_kinds[c] for c in contexts])
    cache: dict[tuple[int, int], float] = {}

    def cost(level: int, size: int) -> float:
        key = (level, size)
        if key not in cache:
            cache[key] = float(topo.message_cycles(level, size))
        return cache[key]

    comm: list[list[tuple[float, ...]]] = [[] for _ in contexts]
    mean_comm = [0.0] * len(contexts)
    for group in structure.groups:
        for i, t in enumerate(group.threads):
            total_mean = 0.0
            for p, sizes in zip(group.preds, group.edge_bytes):
                producers = structure.groups[p].threads
                costs = tuple(
                    sum(cost(topo.shared_level(contexts[q], contexts[t]), b) for b in sizes) for q in producers
                )
                comm[t].append(costs)
                shares = producer_shares(group, i, structure.groups[p])
                total_mean += sum(w * c for w, c in zip(shares, costs))
            mean_comm[t] = total_mean
    device_comm = _device_comm(spec, structure, contexts)
    mean_comm = [m + d for m, d in zip(mean_comm, device_comm)]
    return ThreadGraph(
        structure=structure,
        clock=float(topo.clock),
        contexts=contexts,
        comm=comm,
        mean_comm=mean_comm,
        strides=list(topo.strides),
        device_comm=device_comm,
    )


def _device_comm(spec, structure: Structure, contexts: list[int]) -> list[float]:
    """Per thread, the cycles its tasks pay per packet to reach their devices (`specs.devices`)."""
    topo = spec.topology
    out = [0.0] * len(contexts)
    if not topo.devices:
        return out
    for group in structure.groups:
        tasks = spec.applications[group.app].tasks
        uses = [tasks[name].device for name in group.tasks if tasks[name].device is not None]
        for t in group.threads if uses else ():
            out[t] = sum(device_cycles(topo, use, contexts[t]) for use in uses)
    return out


def compile_plan(spec, plan, structure: Structure | None = None) -> ThreadGraph:
    """Compile a `specs.Plan` (binding or pipeline) for `spec`.

    `structure` may be passed to reuse `binding_structure(spec)` across many binding plans.
    Raises `InvalidPlanError` when the plan cannot run.
    """
    topo = spec.topology
    if plan.threads is None:
        structure = structure or binding_structure(spec)
        missing = [n for n in structure.names if n not in plan.bindings]
        if missing:
            raise InvalidPlanError(f"{len(missing)} thread(s) are not bound: {', '.join(missing[:5])}")
    else:
        structure = pipeline_structure(spec, plan)
        missing = [n for n in structure.names if n not in plan.bindings]
        if missing:
            raise InvalidPlanError(f"thread(s) not bound to a context: {', '.join(missing[:5])}")
    try:
        contexts = [topo.parse_context(plan.bindings[n]) for n in structure.names]
    except ValueError as exc:
        raise InvalidPlanError(str(exc)) from None
    return attach(spec, structure, contexts)


def compile_contexts(spec, contexts: Sequence[int], structure: Structure | None = None) -> ThreadGraph:
    """Compile a binding plan given as one context index per thread of `spec.threads`."""
    return attach(spec, structure or binding_structure(spec), contexts)
