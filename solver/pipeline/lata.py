"""LATA: latency- and throughput-aware parallel pipelining (Kuang & Bhuyan, "LATA: a latency and
throughput-aware packet processing system", DAC 2010), step by step in the order of the paper.

The schedule is built on *virtual* nodes (one processor each) before anything is mapped, so every
crossing edge is charged the **location-independent estimate of Eq. 1-2** (§2.2:
`Topology.average_message_cycles`, carried by `PipelineEdge.estimate`): `with_estimate(problem,
"eq2")`.  A task's work is its cycles times its frequency (§2.4, `Task.work`).  A node's code must
fit the instruction cache (§4, `Topology.icache`, `Task.code_size`): no step builds a node that
does not.

LATA's own figures (§2.3, Fig. 2-4), computed by `figures` (`solver.pipeline.lata_figures`):

* the **schedule length** ``L = sum over stages of the largest computation time of a node of the
  stage + sum over adjacent stages of CCP_i``, where ``CCP_i = max c_{a,b}`` over nodes ``a`` in
  stage ``i`` and ``b`` in stage ``i+1`` (§3.1), ``c_{a,b}`` the estimated cost of the edges from
  ``a`` to ``b`` (`Figures.schedule_length`);
* ``T_max`` = the largest node time over its replicas; a node's time is its computation plus its
  incoming messages (the paper does not say whether a stage time holds its communication; the
  closed form of `solver.pipeline.problem` charges it to the consumer, so we do too).

The steps reduce and bound ``max(L, the closed form's longest path under the estimate)``
(`Figures.length`; our addition): the paper's ``L`` charges a join only its largest incoming
message and ignores edges that skip a stage, which the closed form -- and the simulation -- pay.

Steps (1-4 in `solver.pipeline.lata_steps`; each function's docstring cites its section):

1. `by_levels` -- list-based pipeline scheduling (§3.1);
2. `hide` -- latency hiding, BaH / FoH (§3.2.1, computation reduction);
3. `shorten` -- CCP elimination and CCP reduction (BaS / FoS) ranked by ``Q = dL / dTh`` while
   ``L > L0`` (§3.2.1, communication reduction);
4. `decompose` -- SeD / PaD / BaD / FoD on the ``T_max`` node while it lowers ``T_max`` and
   ``L <= L0`` (§3.2.2);
5. pre-mapping onto ``C`` virtual processors (§3.3.1, `solver.pipeline.lata_premap`), then the
   cache-aware real mapping (§3.3.2, `solver.pipeline.mapping.lata_map`).

Our additions, stated: (a) the plan is judged by the exact closed form after mapping
(`evaluate`), where a pair on two sockets pays memory where Eq. 2 charged an average, so LATA is
run with several internal bounds -- ``L0``, then the shares 95%, 90%, ... 50% of the sequential
time below it (`internal_bounds`), and ``L0`` lowered by the mapped plan's overshoot (at most
`TIGHTEN` times) -- with the Eq. 2 estimate and with the costliest level (``"worst"``), and the
schedule whose every CCP is eliminated (one node, replicated on every processor by pre-mapping)
when its code fits (that plan is Parallel's: `lata(..., one_node=False)` leaves it out); the
best plan by exact evaluation is kept and its note says which run produced it.  `lata(..., profiles=["eq2"], tighten=0)` is the paper's run alone.  (b) When no
run meets ``L0``, the lowest-latency plan loses replicas until it does (`unreplicate`).  (c)
Decomposition keeps at most ``C`` nodes (the paper's "spare nodes" are the processors the
latency reduction left free).  (d) The steps bound ``Figures.length`` rather than ``L`` (above).
(e) Replica counts a spec fixes (`solver.pipeline.candidates`, "Fixed replicas"; the paper's
LATA chooses every count): tasks of different counts are never one node, a fixed node keeps its
count through every step and gets no extra processor, `unreplicate` leaves it alone, and each
run's plan is checked by `respect_fixed`; a run that cannot keep them is dropped, and LATA with
no run left raises `NoPlan`.
"""

from __future__ import annotations

import time

from tasksolve.solver.pipeline.candidates import Candidate, Group, NoPlan, fixed_count, respect_fixed
from tasksolve.solver.pipeline.evaluation import MethodResult, evaluate, first_contexts, sequential_candidate
from tasksolve.solver.pipeline.lata_figures import Figures, estimate_profiles, figures, fits, task_names, with_estimate
from tasksolve.solver.pipeline.lata_premap import premap_nodes
from tasksolve.solver.pipeline.lata_steps import by_levels, decompose, eliminate, hide, schedule, shorten, switch
from tasksolve.solver.pipeline.mapping import lata_map
from tasksolve.solver.pipeline.problem import PipelineProblem

# the steps and figures, importable from here as before the split
__all__ = [
    "TIGHTEN",
    "Figures",
    "by_levels",
    "decompose",
    "eliminate",
    "estimate_profiles",
    "figures",
    "fits",
    "hide",
    "internal_bounds",
    "lata",
    "run_once",
    "schedule",
    "shorten",
    "switch",
    "unreplicate",
    "with_estimate",
]

TIGHTEN = 6  # re-runs with a lowered internal bound when the mapped plan misses L0 (our addition)


# ------------------------------------------------------------------------------ LATA
def run_once(problem: PipelineProblem, profile: str | int, bound: int | None, trace: list[dict]) -> Candidate:
    """One LATA run: schedule with the `profile` estimate and internal bound `bound`, pre-map onto
    the contexts (§3.3.1), map (§3.3.2)."""
    estimate = with_estimate(problem, profile).with_bound(bound)
    cand = respect_fixed(problem, premap_nodes(estimate, schedule(estimate, trace), trace))
    if cand is None:
        raise NoPlan("the pre-mapped nodes' fixed replica counts exceed the contexts")
    return lata_map(problem, cand)


def internal_bounds(problem: PipelineProblem) -> list[int | None]:
    """The internal bounds LATA is run with (our addition, module docstring): ``L0`` itself, then
    the shares 95%, 90%, ..., 50% of the sequential time below it (a grid that does not depend
    on ``L0``, so a looser ``L0`` never loses a run of a tighter one), down to the critical path."""
    bound = problem.latency_max
    if bound is None:
        return [None]
    grid = [problem.sequential * k // 20 for k in range(20, 9, -1)]
    return [bound] + [b for b in grid if problem.critical_path <= b < bound]


def _mapped_step(trace: list[dict], problem: PipelineProblem, step: str, detail: str, ev) -> None:
    trace.append(
        {
            "step": step,
            "detail": detail,
            "period": ev.period_cycles,
            "stage_latency": problem.cycles(ev.stage_latency),
            "latency": ev.latency_cycles,
            "threads": ev.threads,
        }
    )


def _mapped_run(problem: PipelineProblem, profile, bound, attempt):
    trace: list[dict] = []
    if profile == "one":
        one = respect_fixed(problem, sequential_candidate(problem, problem.n_contexts))  # `fits`: one count at most
        if one is None:
            raise NoPlan(f"a fixed replica count exceeds the {problem.n_contexts} contexts")
        mapped = first_contexts(problem, one)
        detail = "every CCP eliminated: one node replicated on every processor"
    else:
        mapped = run_once(problem, profile, bound, trace)
        detail = "pre-mapping onto the contexts, cache-aware real mapping"
    ev = evaluate(problem, mapped)
    _mapped_step(trace, problem, "map", detail, ev)
    return ev, mapped, trace, profile, attempt, bound


def _kept_run(problem: PipelineProblem, profile, bound, attempt, no_plan: list[str]):
    """`_mapped_run`, or None when the run cannot keep the fixed replica counts (why: `no_plan`)."""
    try:
        return _mapped_run(problem, profile, bound, attempt)
    except NoPlan as exc:
        no_plan.append(str(exc))
        return None


def unreplicate(problem: PipelineProblem, run):
    """Our addition: a mapped plan that misses ``L0`` loses replicas one at a time -- each time
    the one whose removal gives the lowest exact latency (then period) -- until it meets the
    bound or none is left: replicas spread a node over outer domains, whose messages then pay the
    outer level (the closed form charges a replicated node its worst pair)."""
    ev, mapped, trace, profile, attempt, bound = run
    cand, trace = mapped.unmapped(), list(trace)
    while not ev.feasible:
        best = None
        for g, group in enumerate(cand.groups):
            if group.replicas > 1 and not fixed_count(problem, group.tasks):
                groups = tuple(Group(x.tasks, x.replicas - (i == g)) for i, x in enumerate(cand.groups))
                trial = lata_map(problem, Candidate(groups, cand.stages))
                e = evaluate(problem, trial)
                if best is None or (e.latency, e.period, g) < best[0]:
                    best = ((e.latency, e.period, g), trial, e, g)
        if best is None:
            break
        _, mapped, ev, g = best
        cand = mapped.unmapped()
        _mapped_step(
            trace, problem, "unreplicate", f"{task_names(problem, cand.groups[g].tasks)} x{cand.groups[g].replicas}", ev
        )
    return ev, mapped, trace, profile, attempt, bound


def lata(
    problem: PipelineProblem,
    *,
    profiles: list[str | int] | None = None,
    tighten: int = TIGHTEN,
    one_node: bool = True,
) -> MethodResult:
    """LATA on `problem` (module docstring): for each estimate of `profiles` (default Eq. 2, then
    the costliest level) and each internal bound of `internal_bounds` (unless `tighten` is 0:
    then ``L0`` only), a run; the run with ``L0`` is re-run up to `tighten` times with the
    internal bound lowered by the mapped plan's overshoot; and the schedule whose every CCP is
    eliminated (one node, replicated on every processor by pre-mapping, §3.3.2; with `one_node`
    False it is not among the runs: that plan is Parallel's, so a LATA that reaches Parallel's
    throughput without it got there by its own steps); when none meets ``L0``, the one of lowest
    latency loses replicas (`unreplicate`).  The best plan
    by exact evaluation (meets the bound, then throughput, latency, threads) is returned with the
    trace of its run."""
    t0 = time.perf_counter()
    runs, no_plan = [], []
    for profile in profiles or ["eq2", "worst"]:
        bounds = internal_bounds(problem) if tighten else [problem.latency_max]
        for k, bound in enumerate(bounds):
            run = _kept_run(problem, profile, bound, 0, no_plan)
            runs += [run] if run is not None else []
            for attempt in range(1, tighten + 1 if k == 0 and run is not None else 0):
                ev = run[0]
                if ev.feasible or bound is None:
                    break
                bound -= ev.latency - problem.latency_max
                if bound < problem.critical_path:
                    break
                run = _kept_run(problem, profile, bound, attempt, no_plan)
                if run is None:
                    break
                runs.append(run)
    if tighten and one_node and fits(problem, range(problem.n)):
        runs += [run for run in [_kept_run(problem, "one", None, 0, no_plan)] if run is not None]
    if not runs:
        raise NoPlan(f"no LATA run keeps the fixed replica counts ({no_plan[0]})")
    if tighten and not any(r[0].feasible for r in runs):
        runs.append(unreplicate(problem, min(runs, key=lambda r: (r[0].latency, r[0].period))))
    ev, mapped, trace, profile, attempt, bound = min(runs, key=lambda r: r[0].rank())
    label = {"eq2": "Eq. 2", "worst": "the costliest level", "one": "none"}.get(profile, f"level {profile}")
    note = f"scheduled with communication estimated by {label}"
    if bound is not None and bound != problem.latency_max:
        note += f", internal bound {problem.cycles(bound):.6g} cycles"
    if any(step["step"] == "unreplicate" for step in trace):
        note += ", replicas removed to meet L0"
    return MethodResult(
        method="lata",
        candidate=mapped,
        evaluation=ev,
        status="HEURISTIC",
        claims_feasible=ev.feasible,
        seconds=time.perf_counter() - t0,
        notes=[note],
        trace=trace,
    )
