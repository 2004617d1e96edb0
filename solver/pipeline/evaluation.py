"""The closed-form figures of a pipeline candidate: times, period, latency, stage latency (the
model of `solver.pipeline.problem`), and how methods report their answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from solver.pipeline.candidates import Candidate, Group, depth_stages, group_order, group_preds
from solver.pipeline.problem import PipelineEdge, PipelineError, PipelineProblem


@dataclass(frozen=True)
class Evaluation:
    """The closed-form figures of one candidate (ticks unless named otherwise)."""

    work: tuple[int, ...]  # per group: sum of task work
    comm: tuple[int, ...]  # per group: incoming communication
    times: tuple[int, ...]  # per group: T_g = work + comm
    replicas: tuple[int, ...]
    period: Fraction  # max_g T_g / R_g
    latency: int  # longest path of T_g through the group graph
    stage_latency: int  # sum over stages of max T_g (LATA's estimate, >= latency)
    stages: tuple[int, ...]
    finish: tuple[int, ...]  # per group: earliest finish time of a packet
    critical: tuple[int, ...]  # groups on one longest path, entry first
    bottleneck: int  # a group with the largest T_g / R_g
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
        return (0 if self.feasible else 1, self.period if self.feasible else self.latency, self.latency, self.threads)


def edge_cost(
    problem: PipelineProblem, cand: Candidate, edge: PipelineEdge, where: Sequence[int], pessimistic: bool = False
) -> int:
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
        work=tuple(work),
        comm=tuple(comm),
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
