"""LATA's figures of a schedule and the helpers its steps share (Kuang & Bhuyan, DAC'10 §2.2-2.4,
§3.1; see `solver.pipeline.lata` for the method as a whole).

* `with_estimate` -- every edge charged the **location-independent estimate of Eq. 1-2** (§2.2,
  `PipelineEdge.estimate`), the costliest level, or one sharing level;
* `fits` -- a node's code fits the instruction cache (§4), and its tasks fix no two different
  replica counts (`solver.pipeline.candidates`, "Fixed replicas"; not the paper's);
* `figures` -- the **schedule length** ``L = sum over stages of the largest computation time of a
  node of the stage + sum over adjacent stages of CCP_i``, ``CCP_i = max c_{a,b}`` over nodes
  ``a`` in stage ``i`` and ``b`` in stage ``i+1`` (§3.1), and ``T_max``, the largest node time
  over its replicas (a node's time is its computation plus its incoming messages, as the closed
  form of `solver.pipeline.problem` charges them);
* `build`, `parts`, `successors`, `trace_step` -- building a schedule and recording a step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from tasksolve.solver.pipeline.candidates import Candidate, Group, NoPlan, fixed_count, normalize_stages
from tasksolve.solver.pipeline.evaluation import evaluate
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem


# ------------------------------------------------------------------------------ estimates
def with_estimate(problem: PipelineProblem, profile: str | int) -> PipelineProblem:
    """The problem with every edge costing the same wherever its ends run: the Eq. 2 estimate
    (``"eq2"``, the paper's), the costliest level (``"worst"``) or the cost at sharing level
    `profile` (an int)."""
    edges = []
    for e in problem.edges:
        if profile == "eq2":
            c = e.estimate
        elif profile == "worst":
            c = e.worst
        else:
            c = e.at(int(profile))
        edges.append(replace(e, cost=(c,) * len(e.cost), estimate=c))
    return replace(problem, edges=tuple(edges))


def estimate_profiles(problem: PipelineProblem) -> list[str | int]:
    """Distinct communication estimates: Eq. 2, the costliest level, then each sharing level."""
    out, seen = [], set()
    for p in ["eq2", "worst"] + list(range(-1, problem.n_levels - 1)):
        key = tuple(e.cost for e in with_estimate(problem, p).edges)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def fits(problem: PipelineProblem, tasks) -> bool:
    """The tasks may be one node: their code fits one context's instruction cache (§4; always
    without `icache`) and no two of them fix different replica counts (`fixed_count`)."""
    if problem.fixed_replicas and fixed_count(problem, tasks) is None:
        return False
    return problem.icache is None or sum(problem.code[t] for t in tasks) <= problem.icache


def node_error(problem: PipelineProblem, message: str) -> PipelineError:
    """The error of a node that does not `fit`: `NoPlan` (this method has no plan; another may)
    when the spec fixes replica counts, which may be the cause, else `PipelineError`."""
    if any(problem.fixed_replicas):
        return NoPlan(f"{message}, or its tasks' fixed replica counts differ")
    return PipelineError(message)


# ------------------------------------------------------------------------------ figures
@dataclass(frozen=True)
class Figures:
    """LATA's figures of a schedule (ticks; module docstring)."""

    length: int  # what the steps reduce and bound: the larger of `schedule_length` and `latency`
    schedule_length: int  # the paper's L: stage computation maxima plus CCPs
    tmax: Fraction  # largest node time over its replicas
    at_tmax: int  # nodes at T_max (a tie-break: decomposition progresses when it falls)
    ccp: tuple[tuple[int, int, int, int], ...]  # (weight, stage i, node in i, node in i+1), heaviest first
    work: tuple[int, ...]  # per node: computation
    times: tuple[int, ...]  # per node: computation + incoming messages
    latency: int  # the closed form's longest path with the estimate (for the trace)

    @property
    def ccp_total(self) -> int:
        """The sum over adjacent stages of their CCP."""
        return _ccp_sum(self.ccp)


def _ccp_sum(ccp) -> int:
    best: dict[int, int] = {}
    for w, s, _, _ in ccp:
        best[s] = max(best.get(s, 0), w)
    return sum(best.values())


def figures(problem: PipelineProblem, cand: Candidate) -> Figures:
    """``L`` and ``T_max`` of `cand` under `problem`'s (estimated) edge costs (§2.3, §3.1)."""
    ev = evaluate(problem, cand, pessimistic=True)
    stages = ev.stages
    top: dict[int, int] = {}
    for g, s in enumerate(stages):
        top[s] = max(top.get(s, 0), ev.work[g])
    where = cand.group_of(problem.n)
    pair: dict[tuple[int, int], int] = {}
    for e in problem.edges:
        a, b = where[e.source], where[e.target]
        if a != b and stages[b] == stages[a] + 1:
            pair[(a, b)] = pair.get((a, b), 0) + e.worst
    ccp = sorted(((w, stages[a], a, b) for (a, b), w in pair.items()), key=lambda x: (-x[0], x[1], x[2], x[3]))
    periods = [Fraction(t, r) for t, r in zip(ev.times, ev.replicas)]
    tmax = max(periods)
    paper = sum(top.values()) + _ccp_sum(ccp)
    return Figures(
        length=max(paper, ev.latency),
        schedule_length=paper,
        tmax=tmax,
        at_tmax=sum(1 for p in periods if p == tmax),
        ccp=tuple(ccp),
        work=ev.work,
        times=ev.times,
        latency=ev.latency,
    )


# ------------------------------------------------------------------------------ helpers
def build(problem: PipelineProblem, groups: list[tuple[tuple[int, ...], int]], stages: list[int]) -> Candidate | None:
    """Candidate from (tasks, replicas) and stage labels (empty groups dropped), labels made valid,
    a node whose replicas the spec fixes given that count; None when the groups form a cycle or
    a node does not `fit`."""
    keep = [i for i, (tasks, _) in enumerate(groups) if tasks]
    if not all(fits(problem, groups[i][0]) for i in keep):
        return None
    cand = Candidate(
        tuple(Group(tuple(sorted(groups[i][0])), fixed_count(problem, groups[i][0]) or groups[i][1]) for i in keep),
        tuple(stages[i] for i in keep),
    )
    return normalize_stages(problem, cand)


def parts(cand: Candidate) -> tuple[list[tuple[tuple[int, ...], int]], list[int]]:
    """The (tasks, replicas) of each node and the stage labels, as `build` takes them."""
    return [(g.tasks, g.replicas) for g in cand.groups], list(cand.stages)


def task_names(problem: PipelineProblem, tasks) -> str:
    return "+".join(problem.tasks[t] for t in tasks)


def trace_step(trace: list[dict] | None, problem: PipelineProblem, name: str, detail: str, f: Figures, threads: int):
    if trace is not None:
        trace.append(
            {
                "step": name,
                "detail": detail,
                "period": problem.cycles(f.tmax),
                "stage_latency": problem.cycles(f.schedule_length),
                "latency": problem.cycles(f.latency),
                "threads": threads,
            }
        )


def successors(cand: Candidate, preds: list[set[int]]) -> list[set[int]]:
    """The successor nodes of each node, from its predecessors (`group_preds`)."""
    out: list[set[int]] = [set() for _ in cand.groups]
    for g, ps in enumerate(preds):
        for p in ps:
            out[p].add(g)
    return out
