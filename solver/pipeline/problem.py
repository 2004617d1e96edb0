"""The parallel-pipeline problem of LATA (Kuang & Bhuyan, DAC'10; the paper's text was not
available to us: the problem is taken from the tasksolve issue and DESIGN.md) and the one
closed-form model every pipeline method is judged by.

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
  free.  An edge ``e`` between two groups costs the consumer ``message_cycles(l, bytes_e)`` per
  packet, where ``l`` is the innermost topology level one domain of which holds *every* context
  of both groups -- equivalently the outermost level that any producer replica and any consumer
  replica share.  For unreplicated groups this is exactly the pair's shared level; for
  replicated groups it is the worst pair, a pessimistic bound of the mean the simulation
  measures (`simulate.model`: consumer replica ``i`` hears from producer replicas
  ``r = i mod gcd``).  When a candidate is not mapped yet (no contexts), every crossing edge is
  charged its **costliest** level (`pessimistic` evaluation), an upper bound of any mapping's
  cost.
* **Group time** ``T_g = sum of w_t over its tasks + sum of the costs of its incoming crossing
  edges`` (cycles per packet, for one replica).
* **Period** ``P = max_g T_g / R_g``: a group run by ``R`` replicas finishes ``R`` packets every
  ``T_g`` cycles, so **replication divides the group's period by R**.  The stage time of LATA is
  ``max over the stage's groups of T_g / R_g`` and the period is the largest stage time.
  **Throughput** ``= clock / P`` packets per second.
* **Latency** = the longest path through the group graph, each group weighing ``T_g`` (its work
  plus its incoming communication; **replication does not shorten it**: a packet still spends
  ``T_g`` in one replica).  This is the unloaded latency of the simulation (`simulate.analytic`
  without contention).  LATA reasons with the coarser **stage latency**
  ``sum over stages of max_{g in stage} T_g`` ("sum of stage times plus the critical
  communication between stages"), reported as `Evaluation.stage_latency`; it is never
  smaller than the latency, so a stage latency within the bound guarantees the latency is.
* **Objective** (LATA's problem): maximise throughput (minimise ``P``) subject to
  ``latency <= L0`` and at most the usable contexts (``sum_g R_g <= C``; `--cores` lowers C).
  Ties are broken by lower latency, then fewer threads.

Resource contention (the `demand`s of DESIGN.md) is not part of this model; the simulation
measures it.  Without contention the model is an upper bound of the simulation's closed form
(`simulate.analytic`): a replicated group is charged its worst replica pair where the simulation
averages the pairs that actually exchange packets, so every packet's unloaded latency there is at
most `latency` here and the simulated period at most `period` -- a latency bound met here is
met packet by packet.  With unreplicated groups (or placement-independent costs) the two agree
exactly (`tests/pipeline/test_model.py`).

Units: all times are integers in **ticks**, ``scale`` ticks per cycle (the smallest of 1, 10,
100, 1000 that makes every task's work and every message cost integral; otherwise 1000 and
rounded), so that CP-SAT, the dynamic programme and the brute force compare exactly.  Periods are
`fractions.Fraction` of ticks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cached_property
from typing import Iterable, Sequence

from solver.errors import BadProblemError

SCALES = (1, 10, 100, 1000)


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

    def at(self, level: int) -> int:
        return self.cost[level + 1]

    @property
    def worst(self) -> int:
        return max(self.cost)


@dataclass(frozen=True)
class PipelineProblem:
    """One application instance to pipeline over some hardware contexts (see the module
    docstring).  Build it with `PipelineProblem.from_spec`."""

    name: str
    app: str
    instance: int
    tasks: tuple[str, ...]              # a topological order; task index = position here
    work: tuple[int, ...]               # ticks per packet
    edges: tuple[PipelineEdge, ...]
    contexts: tuple[int, ...]           # usable context indices (C = len)
    strides: tuple[int, ...]            # topology strides (contexts per domain of each level)
    level_names: tuple[str, ...]
    context_names: tuple[str, ...]      # names of all contexts of the topology
    clock: float
    scale: int = 1
    latency_max: int | None = None      # ticks
    max_threads: tuple[tuple[int, int], ...] = ()   # (level, cap per domain)
    exact_units: bool = True            # False when costs had to be rounded to 1/1000 cycle

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_spec(cls, spec, app: str | None = None, *, latency_max: float | str | None = "spec",
                  cores: int | None = None, instance: int = 0) -> "PipelineProblem":
        """The problem of pipelining one instance of `app` (the only application of the
        workload when omitted) over `spec.usable_contexts`.

        `latency_max`: ``"spec"`` takes ``constraints.latency_max``; a float is cycles; a string
        is ``75%`` (a fraction of the sequential time, the sum of the works) or a duration
        (``1.4us``, ``2800`` cycles); None means no bound.  `cores` keeps the first `cores`
        usable contexts (in topology order, so they fill the innermost domains first).
        """
        if app is None:
            apps = sorted({item.app for item in spec.workload})
            if len(apps) != 1:
                raise PipelineError(f"the workload holds several applications ({', '.join(apps)}); choose one with --app")
            app = apps[0]
        if app not in spec.applications:
            from specs.errors import did_you_mean
            raise PipelineError(f"unknown application `{app}`{did_you_mean(app, spec.applications)}")
        application = spec.applications[app]
        topo = spec.topology
        order = list(application.topological_order)
        index = {name: i for i, name in enumerate(order)}
        n_levels = len(topo.levels)
        shared = list(range(-1, n_levels - 1))  # levels two distinct contexts can share
        raw_work = [float(application.tasks[t].cycles) for t in order]
        raw_edges = []
        for edge in application.edges:
            costs = [float(topo.message_cycles(level, int(edge.bytes))) for level in shared]
            raw_edges.append((index[edge.source], index[edge.target], int(edge.bytes), costs))
        values = raw_work + [c for *_, costs in raw_edges for c in costs]
        scale, exact = _choose_scale(values)
        work = tuple(max(1, round(w * scale)) for w in raw_work)
        edges = tuple(PipelineEdge(s, t, b, tuple(round(c * scale) for c in costs)) for s, t, b, costs in raw_edges)
        contexts = list(spec.usable_contexts)
        if cores is not None:
            if cores < 1:
                raise PipelineError(f"--cores must be at least 1 (got {cores})")
            if cores > len(contexts):
                raise PipelineError(f"--cores {cores}: the spec has only {len(contexts)} usable contexts")
            contexts = contexts[:cores]
        caps = tuple((topo.level_index(level), int(cap)) for level, cap in spec.constraints.max_threads.items())
        problem = cls(
            name=spec.name, app=app, instance=instance, tasks=tuple(order), work=work, edges=edges,
            contexts=tuple(contexts), strides=tuple(topo.strides), level_names=tuple(topo.level_names),
            context_names=tuple(topo.context_names), clock=float(topo.clock), scale=scale,
            max_threads=caps, exact_units=exact)
        bound = resolve_latency(spec, problem, latency_max)
        return replace(problem, latency_max=bound)

    def with_bound(self, latency_ticks: int | None) -> "PipelineProblem":
        return replace(self, latency_max=latency_ticks)

    def with_cores(self, cores: int) -> "PipelineProblem":
        if not 1 <= cores <= len(self.contexts):
            raise PipelineError(f"--cores {cores}: between 1 and {len(self.contexts)}")
        return replace(self, contexts=self.contexts[:cores])

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

    # ----------------------------------------------------------------- units
    def cycles(self, ticks: float | Fraction) -> float:
        return float(ticks) / self.scale

    def ticks(self, cycles: float) -> int:
        """Cycles -> ticks, rounded down (for bounds: a bound in cycles never loosens)."""
        return int(math.floor(cycles * self.scale + 1e-9))

    def throughput(self, period_ticks: Fraction | float) -> float:
        """Packets per second for a period in ticks."""
        return self.clock * self.scale / float(period_ticks) if period_ticks else math.inf

    def seconds(self, ticks: float | Fraction) -> float:
        return float(ticks) / self.scale / self.clock

    def describe_bound(self) -> str:
        if self.latency_max is None:
            return "none"
        return format_cycles(self.cycles(self.latency_max), self.clock)


def _choose_scale(values: Sequence[float]) -> tuple[int, bool]:
    for scale in SCALES:
        if all(abs(v * scale - round(v * scale)) <= 1e-6 * max(1.0, abs(v * scale)) for v in values):
            return scale, True
    return SCALES[-1], False


def resolve_latency(spec, problem: PipelineProblem, latency_max) -> int | None:
    """The latency bound in ticks (see `PipelineProblem.from_spec`)."""
    from specs.units import UnitError, parse_duration

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
            f"sequential time such as `75%` (got {latency_max!r})") from None
    return problem.ticks(duration.to_cycles(problem.clock))


# ------------------------------------------------------------------------------ candidates
@dataclass(frozen=True)
class Group:
    """Tasks (indices, in the order the thread runs them) and the replicas that run them;
    `contexts` (one per replica) once mapped."""

    tasks: tuple[int, ...]
    replicas: int = 1
    contexts: tuple[int, ...] | None = None

    @property
    def threads(self) -> int:
        return self.replicas


@dataclass(frozen=True)
class Candidate:
    """A parallel pipeline: groups, optional stage labels (one per group), optional mapping."""

    groups: tuple[Group, ...]
    stages: tuple[int, ...] | None = None

    @property
    def mapped(self) -> bool:
        return all(g.contexts is not None for g in self.groups)

    @property
    def threads(self) -> int:
        return sum(g.replicas for g in self.groups)

    def unmapped(self) -> "Candidate":
        return Candidate(tuple(Group(g.tasks, g.replicas) for g in self.groups), self.stages)

    def with_contexts(self, contexts: Sequence[Sequence[int]]) -> "Candidate":
        return Candidate(tuple(Group(g.tasks, g.replicas, tuple(int(c) for c in cs))
                               for g, cs in zip(self.groups, contexts)), self.stages)

    def group_of(self, n: int) -> list[int]:
        where = [-1] * n
        for gi, g in enumerate(self.groups):
            for t in g.tasks:
                where[t] = gi
        return where

    def key(self) -> tuple:
        """Identity up to group order and stage labels (for deduplication)."""
        return tuple(sorted((g.tasks, g.replicas, g.contexts or ()) for g in self.groups))


def check_candidate(problem: PipelineProblem, cand: Candidate) -> list[str]:
    """Everything that makes `cand` invalid: tasks missing or repeated, an order inside a group
    against an edge, a cycle between groups (a task's predecessors must be in earlier stages or
    earlier in its own thread), stage labels against the group graph, replicas < 1, contexts
    repeated, unusable, miscounted or over `max_threads`, more threads than contexts."""
    out: list[str] = []
    seen: dict[int, int] = {}
    for gi, g in enumerate(cand.groups):
        if not g.tasks:
            out.append(f"group {gi} is empty")
        if g.replicas < 1:
            out.append(f"group {gi} has {g.replicas} replicas")
        for t in g.tasks:
            if not 0 <= t < problem.n:
                out.append(f"group {gi} names task index {t}")
                continue
            if t in seen:
                out.append(f"task `{problem.tasks[t]}` is in groups {seen[t]} and {gi}")
            seen[t] = gi
        position = {t: i for i, t in enumerate(g.tasks)}
        for t in g.tasks:
            for p in problem.preds[t] if 0 <= t < problem.n else ():
                if p in position and position[p] > position[t]:
                    out.append(f"group {gi} runs `{problem.tasks[t]}` before its predecessor `{problem.tasks[p]}`")
    missing = [problem.tasks[t] for t in range(problem.n) if t not in seen]
    if missing:
        out.append(f"tasks in no group: {', '.join(missing)}")
    if out:
        return out
    order = group_order(problem, cand)
    if order is None:
        out.append("the groups depend on each other in a cycle")
        return out
    if cand.stages is not None:
        if len(cand.stages) != len(cand.groups):
            out.append(f"{len(cand.stages)} stage labels for {len(cand.groups)} groups")
        else:
            for gi, preds in enumerate(group_preds(problem, cand)):
                for p in preds:
                    if cand.stages[p] >= cand.stages[gi]:
                        out.append(f"group {gi} (stage {cand.stages[gi]}) depends on group {p} "
                                   f"(stage {cand.stages[p]}), not in an earlier stage")
    if cand.threads > problem.n_contexts:
        out.append(f"{cand.threads} threads for {problem.n_contexts} usable contexts")
    if cand.mapped:
        usable = set(problem.contexts)
        used: list[int] = []
        for gi, g in enumerate(cand.groups):
            assert g.contexts is not None
            if len(g.contexts) != g.replicas:
                out.append(f"group {gi}: {len(g.contexts)} contexts for {g.replicas} replicas")
            for c in g.contexts:
                if c not in usable:
                    out.append(f"group {gi}: context {c} is not usable")
            used.extend(g.contexts)
        if len(set(used)) != len(used):
            out.append("a context runs two threads")
        for level, cap in problem.max_threads:
            counts: dict[int, int] = {}
            for c in used:
                d = 0 if level < 0 else c // problem.strides[level]
                counts[d] = counts.get(d, 0) + 1
            if counts and max(counts.values()) > cap:
                out.append(f"more than {cap} threads in one domain of level {level}")
    return out


def group_preds(problem: PipelineProblem, cand: Candidate) -> list[set[int]]:
    where = cand.group_of(problem.n)
    preds: list[set[int]] = [set() for _ in cand.groups]
    for e in problem.edges:
        a, b = where[e.source], where[e.target]
        if a != b:
            preds[b].add(a)
    return preds


def group_order(problem: PipelineProblem, cand: Candidate) -> list[int] | None:
    """A topological order of the group graph (Kahn, ties by index), or None on a cycle."""
    preds = group_preds(problem, cand)
    succs: list[list[int]] = [[] for _ in cand.groups]
    indeg = [len(p) for p in preds]
    for g, ps in enumerate(preds):
        for p in ps:
            succs[p].append(g)
    import heapq
    ready = [g for g, d in enumerate(indeg) if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        g = heapq.heappop(ready)
        order.append(g)
        for s in succs[g]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, s)
    return order if len(order) == len(cand.groups) else None


def depth_stages(problem: PipelineProblem, cand: Candidate) -> tuple[int, ...]:
    """Stage of each group = its depth in the group graph (0 for the entry group)."""
    order = group_order(problem, cand)
    if order is None:
        raise PipelineError("the groups depend on each other in a cycle")
    preds = group_preds(problem, cand)
    depth = [0] * len(cand.groups)
    for g in order:
        depth[g] = max((depth[p] + 1 for p in preds[g]), default=0)
    return tuple(depth)


def normalize_stages(problem: PipelineProblem, cand: Candidate) -> Candidate | None:
    """Stage labels made valid and dense: each group goes to ``max(its label, 1 + the stage of
    its latest predecessor group)``, then empty stages are removed.  None when the groups form a
    cycle.  Labels absent: depth stages."""
    order = group_order(problem, cand)
    if order is None:
        return None
    preds = group_preds(problem, cand)
    labels = list(cand.stages) if cand.stages is not None else [0] * len(cand.groups)
    stage = [0] * len(cand.groups)
    for g in order:
        stage[g] = max([labels[g]] + [stage[p] + 1 for p in preds[g]])
    dense = {s: i for i, s in enumerate(sorted(set(stage)))}
    return Candidate(cand.groups, tuple(dense[s] for s in stage))


# ------------------------------------------------------------------------------ evaluation
@dataclass(frozen=True)
class Evaluation:
    """The closed-form figures of one candidate (ticks unless named otherwise)."""

    work: tuple[int, ...]             # per group: sum of task work
    comm: tuple[int, ...]             # per group: incoming communication
    times: tuple[int, ...]            # per group: T_g = work + comm
    replicas: tuple[int, ...]
    period: Fraction                  # max_g T_g / R_g
    latency: int                      # longest path of T_g through the group graph
    stage_latency: int                # sum over stages of max T_g (LATA's estimate, >= latency)
    stages: tuple[int, ...]
    finish: tuple[int, ...]           # per group: earliest finish time of a packet
    critical: tuple[int, ...]         # groups on one longest path, entry first
    bottleneck: int                   # a group with the largest T_g / R_g
    threads: int
    pessimistic: bool
    scale: int
    clock: float
    latency_max: int | None

    @property
    def period_cycles(self) -> float:
        return float(self.period) / self.scale

    @property
    def latency_cycles(self) -> float:
        return self.latency / self.scale

    @property
    def throughput(self) -> float:
        """Packets per second."""
        return self.clock * self.scale / float(self.period)

    @property
    def latency_seconds(self) -> float:
        return self.latency / self.scale / self.clock

    @property
    def feasible(self) -> bool:
        return self.latency_max is None or self.latency <= self.latency_max

    @property
    def stage_feasible(self) -> bool:
        return self.latency_max is None or self.stage_latency <= self.latency_max

    def rank(self) -> tuple:
        """Sort key, smaller is better: feasible first, then period, latency, threads."""
        return (0 if self.feasible else 1, self.period if self.feasible else self.latency,
                self.latency, self.threads)


def edge_cost(problem: PipelineProblem, cand: Candidate, edge: PipelineEdge, where: Sequence[int],
              pessimistic: bool = False) -> int:
    """Ticks the consumer of `edge` pays per packet (0 inside a group)."""
    a, b = where[edge.source], where[edge.target]
    if a == b:
        return 0
    ga, gb = cand.groups[a], cand.groups[b]
    if pessimistic or ga.contexts is None or gb.contexts is None:
        return edge.worst
    return edge.at(problem.lca_level(ga.contexts + gb.contexts))


def evaluate(problem: PipelineProblem, cand: Candidate, *, pessimistic: bool | None = None) -> Evaluation:
    """The closed-form figures of `cand` (module docstring).  `pessimistic` charges every
    crossing edge its costliest level; it is forced for unmapped candidates.  Raises
    `PipelineError` on a cycle between groups (check validity with `check_candidate`)."""
    if pessimistic is None:
        pessimistic = not cand.mapped
    elif not pessimistic and not cand.mapped:
        pessimistic = True
    where = cand.group_of(problem.n)
    G = len(cand.groups)
    work = [sum(problem.work[t] for t in g.tasks) for g in cand.groups]
    comm = [0] * G
    for e in problem.edges:
        c = edge_cost(problem, cand, e, where, pessimistic)
        if c:
            comm[where[e.target]] += c
    times = [w + c for w, c in zip(work, comm)]
    order = group_order(problem, cand)
    if order is None:
        raise PipelineError("the groups depend on each other in a cycle")
    preds = group_preds(problem, cand)
    finish = [0] * G
    via = [-1] * G
    for g in order:
        start = 0
        for p in preds[g]:
            if finish[p] > start or (finish[p] == start and via[g] == -1):
                start, via[g] = finish[p], p
        finish[g] = start + times[g]
    latency = max(finish) if finish else 0
    end = max(range(G), key=lambda g: (finish[g], -g)) if G else -1
    path = []
    while end != -1:
        path.append(end)
        end = via[end]
    path.reverse()
    stages = cand.stages if cand.stages is not None and len(cand.stages) == G else depth_stages(problem, cand)
    per_stage: dict[int, int] = {}
    for g, s in enumerate(stages):
        per_stage[s] = max(per_stage.get(s, 0), times[g])
    periods = [Fraction(t, g.replicas) for t, g in zip(times, cand.groups)]
    period = max(periods) if periods else Fraction(0)
    bottleneck = max(range(G), key=lambda g: (periods[g], -g)) if G else -1
    return Evaluation(
        work=tuple(work), comm=tuple(comm), times=tuple(times),
        replicas=tuple(g.replicas for g in cand.groups), period=period, latency=latency,
        stage_latency=sum(per_stage.values()), stages=tuple(stages), finish=tuple(finish),
        critical=tuple(path), bottleneck=bottleneck, threads=cand.threads, pessimistic=pessimistic,
        scale=problem.scale, clock=problem.clock, latency_max=problem.latency_max)


# ------------------------------------------------------------------------------ method results
@dataclass
class MethodResult:
    """What a pipeline method returns: its best candidate (mapped), the closed-form figures and
    what the method itself claims."""

    method: str
    candidate: Candidate
    evaluation: Evaluation
    status: str = "HEURISTIC"          # OPTIMAL / FEASIBLE / INFEASIBLE / HEURISTIC / UNKNOWN
    bound: Fraction | None = None      # lower bound on the period (ticks), exact methods only
    claims_feasible: bool | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    trace: list[dict] = field(default_factory=list)

    @property
    def gap(self) -> float | None:
        """Relative gap ``(period - bound) / period`` (0 when proven optimal)."""
        if self.bound is None or not self.evaluation.period:
            return None
        return max(0.0, float((self.evaluation.period - self.bound) / self.evaluation.period))

    def throughput_bound(self, problem: PipelineProblem) -> float | None:
        return None if self.bound is None or self.bound <= 0 else problem.throughput(self.bound)


def better(a: Evaluation, b: Evaluation | None) -> bool:
    return b is None or a.rank() < b.rank()


def sequential_candidate(problem: PipelineProblem, replicas: int = 1) -> Candidate:
    """Every task on one thread (in topological order), `replicas` replicas."""
    return Candidate((Group(tuple(range(problem.n)), replicas),), (0,))


def first_contexts(problem: PipelineProblem, cand: Candidate) -> Candidate:
    """Map threads in stage order onto the usable contexts in index order (neighbouring stages on
    neighbouring contexts, which share the innermost caches): the mapping of the comparison
    systems that do not map themselves."""
    cand = cand if cand.stages is not None else Candidate(cand.groups, depth_stages(problem, cand))
    order = sorted(range(len(cand.groups)), key=lambda g: (cand.stages[g], g))
    free = list(problem.contexts)
    contexts: list[list[int]] = [[] for _ in cand.groups]
    for g in order:
        for _ in range(cand.groups[g].replicas):
            contexts[g].append(free.pop(0))
    return cand.with_contexts(contexts)


__all__ = [
    "Candidate", "Evaluation", "Group", "MethodResult", "PipelineEdge", "PipelineError", "PipelineProblem",
    "better", "check_candidate", "depth_stages", "evaluate", "first_contexts", "format_cycles", "group_order",
    "group_preds", "normalize_stages", "resolve_latency", "sequential_candidate",
]
