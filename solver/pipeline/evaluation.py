"""The closed-form figures of a pipeline candidate: times, period, latency, stage latency (the
model of `solver.pipeline.problem`: for a mapped candidate, the binding closed form
`simulate.analytic` of its threads -- contention per domain and each replica's mean message
cost -- up to the stated rounding of demands), and how methods report their answers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from tasksolve.solver.pipeline.candidates import Candidate, Group, depth_stages, group_order, group_preds
from tasksolve.solver.pipeline.problem import PipelineEdge, PipelineError, PipelineProblem
from tasksolve.solver.pipeline.sync import early_ticks, lock_period, retry_ticks


@dataclass(frozen=True)
class Evaluation:
    """The closed-form figures of one candidate (ticks unless named otherwise)."""

    work: tuple[int, ...]  # per group: sum of task work
    comm: tuple  # per group: incoming communication (its costliest replica's mean; int or Fraction)
    times: tuple  # per group: T_g = its slowest replica's (work + comm) * slowdown (int or Fraction)
    replicas: tuple[int, ...]
    period: Fraction  # max_g T_g / R_g
    latency: int | Fraction  # longest path of T_g through the group graph
    stage_latency: int | Fraction  # sum over stages of max T_g (LATA's estimate, >= latency)
    stages: tuple[int, ...]
    finish: tuple  # per group: earliest finish time of a packet
    critical: tuple[int, ...]  # groups on one longest path, entry first
    bottleneck: int  # a group with the largest T_g / R_g
    threads: int
    pessimistic: bool
    scale: int
    clock: float
    latency_max: int | None
    slowdown: tuple = ()  # per group: its slowest replica's 1/rate (1 without contention)
    contention: bool = False  # whether resource contention was charged (mapped, with demands)
    instances: int = 1  # instances the plan repeats on (`PipelineProblem.instances`): throughput counts them all

    @property
    def period_cycles(self) -> float:
        return float(self.period) / self.scale

    @property
    def latency_cycles(self) -> float:
        return float(self.latency) / self.scale

    @property
    def throughput(self) -> float:
        """Packets per second, every instance's together (`instances` x one instance's)."""
        return self.instances * self.clock * self.scale / float(self.period)

    @property
    def latency_seconds(self) -> float:
        return float(self.latency) / self.scale / self.clock

    @property
    def feasible(self) -> bool:
        return self.latency_max is None or self.latency <= self.latency_max

    @property
    def stage_feasible(self) -> bool:
        return self.latency_max is None or self.stage_latency <= self.latency_max

    def rank(self) -> tuple:
        """Sort key, smaller is better: feasible first, then period, latency, threads."""
        return (0 if self.feasible else 1, self.period if self.feasible else self.latency, self.latency, self.threads)


def edge_cost(
    problem: PipelineProblem, cand: Candidate, edge: PipelineEdge, where: Sequence[int], pessimistic: bool = False
) -> int:
    """Ticks the consumer of `edge` pays per packet (0 inside a group) when every replica pair
    costs the same: the costliest level when `pessimistic` or unmapped, else the level holding
    both groups (the worst pair; `replica_comm` gives each replica's mean)."""
    a, b = where[edge.source], where[edge.target]
    if a == b:
        return 0
    ga, gb = cand.groups[a], cand.groups[b]
    if pessimistic or ga.contexts is None or gb.contexts is None:
        return edge.worst
    return edge.at(problem.lca_level(ga.contexts + gb.contexts))


def replica_comm(problem: PipelineProblem, cand: Candidate, where: Sequence[int]) -> list[list[Fraction]]:
    """Per group, per replica: the mean ticks of its incoming messages per packet.  Consumer
    replica ``i`` of ``R_g`` hears from producer replicas ``q == i (mod gcd(R_g, R_p))``, equally
    often (as `simulate.model.attach` compiles a plan)."""
    out = [[Fraction(0)] * g.replicas for g in cand.groups]
    incoming: dict[tuple[int, int], list[PipelineEdge]] = {}
    for e in problem.edges:
        a, b = where[e.source], where[e.target]
        if a != b:
            incoming.setdefault((a, b), []).append(e)
    for (p, g), edges in incoming.items():
        producers, consumers = cand.groups[p].contexts, cand.groups[g].contexts
        step = math.gcd(len(consumers), len(producers))
        for i, c in enumerate(consumers):
            seen = [
                sum(e.at(problem.pair_level(q, c)) for e in edges)
                for r, q in enumerate(producers)
                if r % step == i % step
            ]
            out[g][i] += Fraction(sum(seen), len(seen))
    return out


def group_demands(problem: PipelineProblem, cand: Candidate) -> list[tuple[int, ...]]:
    """Per group: its cycles-weighted mean demand of each resource, in thousandths rounded up."""
    out = []
    for g in cand.groups:
        w = sum(problem.work[t] for t in g.tasks)
        out.append(
            tuple(
                -(-sum(problem.work[t] * problem.demand[t][r] for t in g.tasks) // w)
                for r in range(len(problem.resources))
            )
        )
    return out


def slowdowns(problem: PipelineProblem, cand: Candidate) -> list[list[Fraction]]:
    """Per group, per replica: ``1/rate = max(1, max_r load/capacity)`` over the resources the
    group demands, every thread of the candidate loading its group's demand (module docstring
    of `solver.pipeline.problem`; multiples of ``1/Q``, rounded up)."""
    demands = group_demands(problem, cand)
    q = problem.slowdown_unit
    load: dict[tuple[int, int], int] = {}
    for g, grp in zip(demands, cand.groups):
        for c in grp.contexts:
            for r, d in enumerate(g):
                key = (r, problem.resource_domain(r, c))
                load[key] = load.get(key, 0) + d
    out = []
    for g, grp in zip(demands, cand.groups):
        row = []
        for c in grp.contexts:
            s = q
            for r, d in enumerate(g):
                if d > 0:
                    s = max(s, -(-q * load[r, problem.resource_domain(r, c)] // problem.resources[r].capacity))
            row.append(Fraction(s, q))
        out.append(row)
    return out


def _times(problem: PipelineProblem, cand: Candidate, where: Sequence[int], pessimistic: bool, comm: str):
    """Per group: work, incoming communication (its costliest replica's), each replica's slowdown
    and time ``T_g`` (its slowest replica's); contention only when mapped."""
    work = [sum(problem.work[t] for t in g.tasks) + retry_ticks(problem.sync, g.tasks) for g in cand.groups]
    if not cand.mapped:
        incoming = [0] * len(cand.groups)
        for e in problem.edges:
            incoming[where[e.target]] += edge_cost(problem, cand, e, where, True)
        ones = [[Fraction(1)] * g.replicas for g in cand.groups]
        return work, incoming, ones, [w + c for w, c in zip(work, incoming)]
    if pessimistic or comm == "lca":
        worst = [0] * len(cand.groups)
        for e in problem.edges:
            worst[where[e.target]] += edge_cost(problem, cand, e, where, pessimistic)
        per_replica = [[Fraction(c)] * g.replicas for c, g in zip(worst, cand.groups)]
    else:
        per_replica = replica_comm(problem, cand, where)
    slow = slowdowns(problem, cand)
    times = [max((w + c) * s for c, s in zip(cs, ss)) for w, cs, ss in zip(work, per_replica, slow)]
    return work, [max(cs) for cs in per_replica], slow, times


def evaluate(
    problem: PipelineProblem, cand: Candidate, *, pessimistic: bool | None = None, comm: str = "mean"
) -> Evaluation:
    """The closed-form figures of `cand` (module docstring of `solver.pipeline.problem`).  A mapped
    candidate is charged contention and each replica's mean message cost; ``comm="lca"`` charges
    every replica the level holding all contexts of both groups instead (the worst pair: what the
    CP-SAT model encodes, `solver.pipeline.model`); `pessimistic` charges every crossing edge its
    costliest level; an unmapped candidate is charged the costliest level and no contention.
    Raises `PipelineError` on a cycle between groups (check validity with `check_candidate`)."""
    pessimistic = (not cand.mapped) if pessimistic is None else (pessimistic or not cand.mapped)
    where = cand.group_of(problem.n)
    G = len(cand.groups)
    work, incoming, per_replica, times = _times(problem, cand, where, pessimistic, comm)
    slow = [max(ss) for ss in per_replica]
    order = group_order(problem, cand)
    if order is None:
        raise PipelineError("the groups depend on each other in a cycle")
    preds = group_preds(problem, cand)
    early = [early_ticks(problem.sync, problem.work, grp, s) for grp, s in zip(cand.groups, slow)]
    finish = [0] * G
    via = [-1] * G
    for g in order:
        start = 0
        for p in preds[g]:
            sent = finish[p] - early[p]
            if sent > start or (sent == start and via[g] == -1):
                start, via[g] = sent, p
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
    periods = [Fraction(t) / g.replicas for t, g in zip(times, cand.groups)]
    period = max(periods) if periods else Fraction(0)
    bottleneck = max(range(G), key=lambda g: (periods[g], -g)) if G else -1
    if problem.sync:
        busy, holder = lock_period(problem.sync, cand.groups, per_replica)
        if busy > period:
            period, bottleneck = busy, holder
    return Evaluation(
        work=tuple(work),
        comm=tuple(incoming),
        times=tuple(times),
        replicas=tuple(g.replicas for g in cand.groups),
        period=period,
        latency=latency,
        stage_latency=sum(per_stage.values()),
        stages=tuple(stages),
        finish=tuple(finish),
        critical=tuple(path),
        bottleneck=bottleneck,
        threads=cand.threads,
        pessimistic=pessimistic,
        scale=problem.scale,
        clock=problem.clock,
        latency_max=problem.latency_max,
        slowdown=tuple(slow),
        contention=cand.mapped and problem.contention,
        instances=problem.instances,
    )


# ------------------------------------------------------------------------------ method results
@dataclass
class MethodResult:
    """What a pipeline method returns: its best candidate (mapped), the closed-form figures and
    what the method itself claims."""

    method: str
    candidate: Candidate
    evaluation: Evaluation
    status: str = "HEURISTIC"  # OPTIMAL / FEASIBLE / INFEASIBLE / HEURISTIC / UNKNOWN
    bound: Fraction | None = None  # lower bound on the period (ticks), exact methods only
    claims_feasible: bool | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    trace: list[dict] = field(default_factory=list)
    alternatives: list[Candidate] = field(default_factory=list)  # next best plans (CP-SAT's top k)

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
