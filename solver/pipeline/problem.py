"""The parallel-pipeline problem of LATA (Kuang & Bhuyan, DAC'10 §2.3: maximise throughput under a
latency bound; the model was written from docs/design.md before the paper's text was at hand) and
the one closed-form model every pipeline method is judged by.

Every method of `solver.pipeline` -- LATA, the comparison systems, the CP-SAT model, the chain
dynamic programme and the brute force -- builds `Candidate` values and reads their figures from
`evaluate`, so their answers can be compared exactly.

The model
=========

An application is a DAG of tasks with work ``w_t`` (cycles per packet) and edges ``u -> v``
carrying ``bytes``.  A **candidate** is a list of **groups**; group ``g`` is an ordered list of
tasks that one thread runs for each packet, run by ``R_g >= 1`` **replicas** (threads that take
packets in turn: packet ``k`` goes to replica ``k mod R_g``), each bound to its own hardware
context.  Every task is in exactly one group; the order inside a group respects the edges.

* **Group graph.**  Group ``g`` precedes group ``h`` when an edge goes from a task of ``g`` to a
  task of ``h``.  It must be acyclic (this is LATA's rule "a task's predecessors are in earlier
  stages or earlier in the same thread").  A group starts a packet once the messages of all its
  predecessor groups have arrived (join) and sends its messages when it has finished it.  The
  **stage** of a group is its depth in the group graph (longest chain of predecessor groups)
  unless a method labels stages itself (LATA's latency hiding moves groups to later/earlier
  stages); labels must keep every predecessor group in an earlier stage.
* **Communication** (LATA Eq. 1-2, `specs.Topology.message_cycles`).  An edge inside one group is
  free.  An edge ``e`` between two groups costs the consumer replica ``message_cycles(l, bytes_e)``
  per packet from a producer replica, ``l`` the innermost level the two contexts share; with a
  replicated producer, the mean over the producer replicas it hears from (below).  Unmapped
  candidates pay the costliest level (`pessimistic` evaluation, below).
* **Group time** ``T_g`` = the largest time per packet of its replicas: work (sum of ``w_t``
  over its tasks) plus incoming messages, times the contention slowdown (below); without
  contention and with one replica, ``sum of w_t + sum of the incoming edges' costs``.
* **Period** ``P = max_g T_g / R_g``: a group run by ``R`` replicas finishes ``R`` packets every
  ``T_g`` cycles, so **replication divides the group's period by R**.  The stage time of LATA is
  ``max over the stage's groups of T_g / R_g`` and the period is the largest stage time.
  **Throughput** ``= clock / P`` packets per second.
* **Latency** = the longest path through the group graph, each group weighing ``T_g`` (its work
  plus its incoming communication; **replication does not shorten it**: a packet still spends
  ``T_g`` in one replica).  This is the latency of `simulate.analytic` (no queueing).  LATA reasons with the coarser **stage latency**
  ``sum over stages of max_{g in stage} T_g`` ("sum of stage times plus the critical
  communication between stages"), reported as `Evaluation.stage_latency`; it is never
  smaller than the latency, so a stage latency within the bound guarantees the latency is.
* **Objective** (LATA's problem): maximise throughput (minimise ``P``) subject to
  ``latency <= L0`` and at most the usable contexts (``sum_g R_g <= C``; `--cores` lowers C).
  Ties are broken by lower latency, then fewer threads.
* **Resource contention** (docs/design.md, "Semantics every oracle shares"; the same charge as
  the binding closed form `simulate.analytic`).  A mapped candidate *is* a binding of its
  threads: a thread (one replica of a group) loads each resource ``r`` with its group's demand
  ``d_g[r]``, the cycles-weighted mean of its tasks' demands; ``load_r(D)`` sums the demands of
  every thread in domain ``D`` of r's level (all of them counted, always); a thread's slowdown is
  ``S_t = max(1, max over r with d_g[r] > 0 of load_r(D_r(t)) / capacity_r)`` and its time
  ``s_t = work_t * S_t``, where ``work_t`` = the group's work + its incoming messages, a
  replicated producer's messages **averaged over the producer replicas this replica hears from**
  (consumer replica ``i`` of ``R_g`` hears from producer replicas ``q = i mod gcd(R_g, R_p)``,
  equally often: exactly how `simulate.model` compiles a plan).  The group time is
  ``T_g = max over its replicas of s_t``.  With the integer scalings below, the figures of a
  mapped candidate are those of `simulate.analytic` on `to_plan` of it
  (`tests/pipeline/test_model.py`, property test).
* **Unmapped candidates** (LATA's scheduling steps, the comparison systems before mapping) have no
  contexts: they are charged **no contention** and every crossing edge its **costliest** level
  (`pessimistic` evaluation).  That is an estimate, not a bound: the costliest message is an upper
  bound of any mapping's, the absent contention a lower bound.  Every reported answer is mapped,
  so every figure a method reports carries contention.

* **Several instances** of the application in the workload (`solver.pipeline.blocks`): the
  problem is one instance's on block 0 of isomorphic blocks of contexts, one per instance, and a
  plan repeats its candidate on every block (`copies`, `placements`, `plans.to_plan`).  Throughput
  counts every instance (``instances x clock / P``), exact when the blocks share no demanded
  resource domain and an overestimate otherwise (the contention of the other blocks' threads is
  not charged); the oracles measure every instance together.

* **NPIRE's synchronisation** (`solver.pipeline.sync`): a lock's busy time per packet bounds
  the period, optimistic sections add their mean retries to the work, an early signal lets the
  successors start earlier -- as `simulate.analytic` charges them; the CP-SAT model leaves them
  out (it then claims no proven optimum).

Units: all times are integers in **ticks** before contention, ``scale`` ticks per cycle (the
smallest of 1, 10, 100, 1000 that makes every task's work and every message cost integral;
otherwise 1000 and rounded), so that CP-SAT, the dynamic programme and the brute force compare
exactly.  Demands and capacities are integers in **thousandths**; a group's demand is its mean
**rounded up** to a thousandth; a slowdown is a multiple of ``1/Q`` with ``Q`` the least common
multiple of the scaled capacities (at most `Q_MAX`, else ``Q_MAX`` and rounded up), so
``load/capacity`` is exact.  Times with contention, periods and latencies are
`fractions.Fraction` of ticks.  Against the exact rationals of `simulate.analytic`, the one
difference is the rounding of demands: each thread's load is over by less than ``k/1000`` for
``k`` threads in the domain (none when every task demand is a multiple of 0.001 and each group's
mean is too).

"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property

from tasksolve.solver.errors import BadProblemError
from tasksolve.solver.pipeline.blocks import NoBlocks, instance_blocks
from tasksolve.solver.pipeline.sync import TaskSync, has_sync, task_sync
from tasksolve.specs.kind_work import kind_work

SCALES = (1, 10, 100, 1000)
DEMAND_SCALE = 1000  # demands and capacities in thousandths (as `solver.binding.model`)
Q_MAX = 10_000  # largest slowdown unit; beyond it slowdowns are rounded up to 1/Q_MAX


class PipelineError(BadProblemError):
    """The pipeline problem cannot be set up or solved as asked (bad input)."""


def format_cycles(cycles: float, clock: float) -> str:
    """``2800 cycles (1.4us)``."""
    seconds = cycles / clock
    if seconds >= 1e-3:
        text = f"{seconds * 1e3:.4g}ms"
    elif seconds >= 1e-6:
        text = f"{seconds * 1e6:.4g}us"
    else:
        text = f"{seconds * 1e9:.4g}ns"
    return f"{cycles:.6g} cycles ({text})"


# ------------------------------------------------------------------------------ the problem
@dataclass(frozen=True)
class PipelineEdge:
    """Edge ``source -> target`` (task indices) of `bytes`; ``cost[l + 1]`` is the message cost
    in ticks when the two ends share level ``l`` (``l = -1`` is the machine)."""

    source: int
    target: int
    bytes: int
    cost: tuple[int, ...]
    estimate: int = 0  # LATA Eq. 2: the location-independent cost (ticks), `Topology.average_message_cycles`

    def at(self, level: int) -> int:
        return self.cost[level + 1]

    @property
    def worst(self) -> int:
        return max(self.cost)


@dataclass(frozen=True)
class PipelineResource:
    """A shared resource with a finite capacity that some task demands: its topology `level`
    (-1 the machine) and `capacity` in thousandths of a unit per cycle."""

    name: str
    level: int
    capacity: int


@dataclass(frozen=True)
class PipelineProblem:
    """One application instance to pipeline over some hardware contexts (see the module
    docstring).  Build it with `PipelineProblem.from_spec`."""

    name: str
    app: str
    instance: int
    tasks: tuple[str, ...]  # a topological order; task index = position here
    work: tuple[int, ...]  # ticks per packet
    edges: tuple[PipelineEdge, ...]
    contexts: tuple[int, ...]  # usable context indices (C = len)
    strides: tuple[int, ...]  # topology strides (contexts per domain of each level)
    level_names: tuple[str, ...]
    context_names: tuple[str, ...]  # names of all contexts of the topology
    clock: float
    scale: int = 1
    latency_max: int | None = None  # ticks
    max_threads: tuple[tuple[int, int], ...] = ()  # (level, cap per domain)
    exact_units: bool = True  # False when costs had to be rounded to 1/1000 cycle
    resources: tuple[PipelineResource, ...] = ()
    demand: tuple[tuple[int, ...], ...] = ()  # per task, per resource: thousandths
    code: tuple[int, ...] = ()  # per task: instructions (`Task.code_size`, 0 when not given)
    icache: int | None = None  # instructions a context's i-cache holds (`Topology.icache`)
    sync: tuple[TaskSync | None, ...] = ()  # per task: NPIRE's synchronisation (`solver.pipeline.sync`); () if none
    fixed_replicas: tuple[int, ...] = ()  # per task: its stage's replicas fixed by the spec, 0 free (`candidates`)
    # the workload's other instances of `app` (`solver.pipeline.blocks`): (instance, its block's contexts), each
    # block position by position the image of `block`, the block `contexts` is drawn from; () with one instance
    block: tuple[int, ...] = ()
    copies: tuple[tuple[int, tuple[int, ...]], ...] = ()
    unused: tuple[int, ...] = ()  # usable contexts in no instance's block
    block_level: int = -1  # the level whose domains the blocks are made of (-1: one instance)

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_spec(
        cls,
        spec,
        app: str | None = None,
        *,
        latency_max: float | str | None = "spec",
        cores: int | None = None,
        instance: int = 0,
    ) -> PipelineProblem:
        """The problem of pipelining one instance of `app` (the only application of the
        workload when omitted) over `spec.usable_contexts` -- with several instances of `app` in
        the workload, over block 0 of `solver.pipeline.blocks.find_blocks`, the other instances
        being `copies` that repeat its plan on their blocks (`instances`).

        `latency_max`: ``"spec"`` takes ``constraints.latency_max``; a float is cycles; a string
        is ``75%`` (a fraction of the sequential time, the sum of the works) or a duration
        (``1.4us``, ``2800`` cycles); None means no bound.  `cores` keeps the first `cores`
        usable contexts (in topology order, so they fill the innermost domains first) -- of each
        instance's block with several instances.
        """
        app = _choose_app(spec, app)
        application = spec.applications[app]
        topo = spec.topology
        order = list(application.topological_order)
        index = {name: i for i, name in enumerate(order)}
        n_levels = len(topo.levels)
        shared = list(range(-1, n_levels - 1))  # levels two distinct contexts can share
        # with kinds of core, each task's work on the fastest kind (`specs.cpu_kinds`): the period
        # bound stays a bound; plans are measured on the kinds they run on
        raw_work = [float(min(kind_work(application.tasks[t], topo.kind_names, topo))) for t in order]
        raw_edges = []
        for edge in application.edges:
            costs = [float(topo.message_cycles(level, int(edge.bytes))) for level in shared]
            costs.append(float(topo.average_message_cycles(int(edge.bytes))))  # last: LATA Eq. 2
            raw_edges.append((index[edge.source], index[edge.target], int(edge.bytes), costs))
        values = raw_work + [c for *_, costs in raw_edges for c in costs[:-1]]  # the estimate is rounded
        scale, exact = _choose_scale(values)
        work = tuple(max(1, round(w * scale)) for w in raw_work)
        edges = tuple(
            PipelineEdge(s, t, b, tuple(round(c * scale) for c in costs[:-1]), round(costs[-1] * scale))
            for s, t, b, costs in raw_edges
        )
        caps = tuple((topo.level_index(level), int(cap)) for level, cap in spec.constraints.max_threads.items())
        try:
            placed = instance_blocks(spec, app, caps, instance)
        except NoBlocks as exc:
            raise PipelineError(str(exc)) from None
        contexts = _contexts(spec, placed, cores)
        caps = placed.pop("caps", caps)
        resources, demand = _resource_tables(topo, [application.tasks[t] for t in order])
        problem = cls(
            name=spec.name,
            app=app,
            instance=instance,
            tasks=tuple(order),
            work=work,
            edges=edges,
            contexts=tuple(contexts),
            strides=tuple(topo.strides),
            level_names=tuple(topo.level_names),
            context_names=tuple(topo.context_names),
            clock=float(topo.clock),
            scale=scale,
            max_threads=caps,
            exact_units=exact,
            resources=resources,
            demand=demand,
            code=tuple(application.tasks[t].code_size or 0 for t in order),
            icache=topo.icache,
            sync=_sync_table([application.tasks[t] for t in order], scale),
            fixed_replicas=tuple(r if (r := application.tasks[t].replicas) > 1 else 0 for t in order),
            **placed,
        )
        bound = resolve_latency(spec, problem, latency_max)
        return replace(problem, latency_max=bound)

    def with_bound(self, latency_ticks: int | None) -> PipelineProblem:
        return replace(self, latency_max=latency_ticks)

    def with_cores(self, cores: int) -> PipelineProblem:
        if not 1 <= cores <= len(self.contexts):
            raise PipelineError(f"--cores {cores}: between 1 and {len(self.contexts)}")
        return replace(self, contexts=self.contexts[:cores])

    # ----------------------------------------------------------------- instances
    @property
    def instances(self) -> int:
        """Instances the plans cover: this one and its `copies`."""
        return 1 + len(self.copies)

    def placements(self) -> list[tuple[int, dict[int, int] | None]]:
        """(instance, its context of each of block 0's contexts; None: the identity), this
        instance first."""
        return [(self.instance, None)] + [(i, dict(zip(self.block, mapped))) for i, mapped in self.copies]

    # ----------------------------------------------------------------- structure
    @property
    def n(self) -> int:
        return len(self.tasks)

    @property
    def n_contexts(self) -> int:
        return len(self.contexts)

    @property
    def n_levels(self) -> int:
        return len(self.strides)

    @cached_property
    def preds(self) -> tuple[tuple[int, ...], ...]:
        out: list[list[int]] = [[] for _ in self.tasks]
        for e in self.edges:
            out[e.target].append(e.source)
        return tuple(tuple(p) for p in out)

    @cached_property
    def succs(self) -> tuple[tuple[int, ...], ...]:
        out: list[list[int]] = [[] for _ in self.tasks]
        for e in self.edges:
            out[e.source].append(e.target)
        return tuple(tuple(s) for s in out)

    @cached_property
    def in_edges(self) -> tuple[tuple[PipelineEdge, ...], ...]:
        out: list[list[PipelineEdge]] = [[] for _ in self.tasks]
        for e in self.edges:
            out[e.target].append(e)
        return tuple(tuple(x) for x in out)

    @cached_property
    def ancestors(self) -> tuple[frozenset[int], ...]:
        anc: list[set[int]] = [set() for _ in self.tasks]
        for t in range(self.n):  # topological order
            for p in self.preds[t]:
                anc[t] |= anc[p] | {p}
        return tuple(frozenset(a) for a in anc)

    @property
    def sequential(self) -> int:
        """Ticks to run every task on one thread (no communication): the sequential time."""
        return sum(self.work)

    @cached_property
    def levels(self) -> tuple[int, ...]:
        """ASAP level of each task: edges on the longest chain of predecessors (LATA's list
        scheduling by levels)."""
        lev = [0] * self.n
        for t in range(self.n):
            for p in self.preds[t]:
                lev[t] = max(lev[t], lev[p] + 1)
        return tuple(lev)

    @cached_property
    def b_levels(self) -> tuple[int, ...]:
        """Longest work path from each task to an exit, its own work included (HLFET's static
        level; communication ignored)."""
        bottom = list(self.work)
        for t in reversed(range(self.n)):
            for s in self.succs[t]:
                bottom[t] = max(bottom[t], self.work[t] + bottom[s])
        return tuple(bottom)

    @property
    def critical_path(self) -> int:
        """Longest work path (ticks), communication free: no candidate has a lower latency."""
        return max(self.b_levels)

    # ----------------------------------------------------------------- topology
    def lca_level(self, contexts: Iterable[int]) -> int:
        """Innermost level one domain of which holds all `contexts` (-1: only the machine)."""
        ctx = list(contexts)
        for k in range(self.n_levels - 1, -1, -1):
            d = ctx[0] // self.strides[k]
            if all(c // self.strides[k] == d for c in ctx):
                return k
        return -1

    def pair_level(self, a: int, b: int) -> int:
        for k in range(self.n_levels - 1, -1, -1):
            if a // self.strides[k] == b // self.strides[k]:
                return k
        return -1

    @property
    def contention(self) -> bool:
        """Whether some task demands a resource of finite capacity."""
        return bool(self.resources)

    @cached_property
    def slowdown_unit(self) -> int:
        """``Q``: slowdowns are multiples of ``1/Q`` (module docstring, "Units")."""
        q = math.lcm(*(r.capacity for r in self.resources)) if self.resources else 1
        return q if q <= Q_MAX else Q_MAX

    def resource_domain(self, resource: int, context: int) -> int:
        level = self.resources[resource].level
        return 0 if level < 0 else context // self.strides[level]

    # ----------------------------------------------------------------- units
    def cycles(self, ticks: float | Fraction) -> float:
        return float(ticks) / self.scale

    def ticks(self, cycles: float) -> int:
        """Cycles -> ticks, rounded down (for bounds: a bound in cycles never loosens)."""
        return int(math.floor(cycles * self.scale + 1e-9))

    def throughput(self, period_ticks: Fraction | float) -> float:
        """Packets per second of every instance together (`instances` x one instance's) for a
        period in ticks."""
        return self.instances * self.clock * self.scale / float(period_ticks) if period_ticks else math.inf

    def seconds(self, ticks: float | Fraction) -> float:
        return float(ticks) / self.scale / self.clock

    def describe_bound(self) -> str:
        if self.latency_max is None:
            return "none"
        return format_cycles(self.cycles(self.latency_max), self.clock)


def _choose_app(spec, app: str | None) -> str:
    """`app`, or the workload's one application; refuses several without a choice."""
    if app is None:
        apps = sorted({item.app for item in spec.workload})
        if len(apps) != 1:
            counts = ", ".join(f"`{a}` x{spec.instance_count(a)}" for a in apps)
            raise PipelineError(
                f"the workload holds several applications ({counts}); a pipeline plan covers the instances of "
                "one: choose it with `tasksolve pipeline --app` (the plan then leaves the others out)"
            )
        app = apps[0]
    if app not in spec.applications:
        from tasksolve.specs.errors import did_you_mean

        raise PipelineError(f"unknown application `{app}`{did_you_mean(app, spec.applications)}")
    return app


def _contexts(spec, placed: dict, cores: int | None) -> list[int]:
    """The problem's contexts: the usable ones, or block 0's with several instances; the fastest
    kind's first; the first `cores` of them."""
    topo = spec.topology
    contexts = list(placed.get("block") or spec.usable_contexts)
    if topo.kinds:  # the fastest kind's contexts first, in topology order within a kind
        rate = [kind.ipc * speed for kind, speed in zip(topo.kinds.values(), topo.kind_speeds)]
        contexts.sort(key=lambda c: -rate[topo.context_kinds[c]])
    if cores is not None:
        if cores < 1:
            raise PipelineError(f"--cores must be at least 1 (got {cores})")
        if cores > len(contexts):
            each = " in each instance's block" if placed else ""
            raise PipelineError(f"--cores {cores}: the spec has only {len(contexts)} usable contexts{each}")
        contexts = contexts[:cores]
    return contexts


def _sync_table(tasks, scale: int) -> tuple[TaskSync | None, ...]:
    """Per task its `TaskSync` in ticks; () when no task has a critical section or a signal."""
    table = tuple(task_sync(task, scale) for task in tasks)
    return table if has_sync(table) else ()


def _resource_tables(topo, tasks) -> tuple[tuple[PipelineResource, ...], tuple[tuple[int, ...], ...]]:
    """The resources of finite capacity some task demands, and the demands in thousandths."""
    kept = [
        r
        for r in topo.resources
        if math.isfinite(float(r.capacity)) and any(float(t.demand.get(r.name, 0.0)) > 0 for t in tasks)
    ]
    resources = tuple(
        PipelineResource(r.name, topo.level_index(r.level), max(1, round(float(r.capacity) * DEMAND_SCALE)))
        for r in kept
    )
    demand = tuple(tuple(round(float(t.demand.get(r.name, 0.0)) * DEMAND_SCALE) for r in kept) for t in tasks)
    return resources, demand


def _choose_scale(values: Sequence[float]) -> tuple[int, bool]:
    for scale in SCALES:
        if all(abs(v * scale - round(v * scale)) <= 1e-6 * max(1.0, abs(v * scale)) for v in values):
            return scale, True
    return SCALES[-1], False


def resolve_latency(spec, problem: PipelineProblem, latency_max) -> int | None:
    """The latency bound in ticks (see `PipelineProblem.from_spec`)."""
    from tasksolve.specs.units import UnitError, parse_duration

    if isinstance(latency_max, str) and latency_max == "spec":
        bound = spec.constraints.latency_max
        return None if bound is None else problem.ticks(bound.to_cycles(problem.clock))
    if latency_max is None:
        return None
    if isinstance(latency_max, (int, float)) and not isinstance(latency_max, bool):
        if latency_max <= 0:
            raise PipelineError(f"a latency bound must be positive (got {latency_max!r})")
        return problem.ticks(float(latency_max))
    text = str(latency_max).strip()
    try:
        if text.endswith("%"):
            fraction = float(text[:-1]) / 100.0
            if not 0 < fraction:
                raise UnitError("positive")
            return int(math.floor(problem.sequential * fraction + 1e-9))
        duration = parse_duration(text)
    except (UnitError, ValueError):
        raise PipelineError(
            f"--latency-max: expected a time such as `1.4us`, a number of cycles, or a share of the "
            f"sequential time such as `75%` (got {latency_max!r})"
        ) from None
    return problem.ticks(duration.to_cycles(problem.clock))
