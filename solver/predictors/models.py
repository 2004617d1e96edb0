"""The prediction formulas of BlackBox (IEEE TPDS §3.1.2) and TSBSched (PPoPP'10 §3.3), one plan
at a time: the reference the vectorised `solver.predictors.batch` is tested against.

Both read a plan instance by instance.  Step 1: for instance i (application A) the *base* entry
is the placement of i's own threads alone (its symmetry class) in the base-time table.  Step 2:
each thread t of i has a *co-runner key* (every other thread in t's stress domain, by level) and
a *sibling key* (only the threads of i among them), `ProfileTables.stress_keys`.

* BlackBox (§3.1.2 Steps 2.1-2.3 and 3): ``slowdown_t = perf(target with its siblings) /
  perf(target with its co-runners)``; ``perf_i = base_perf(A, class_i) / max_t slowdown_t``; the
  plan's performance is ``sum_i perf_i``.  Step 2 models "the collision in hardware resources
  between threads that belong to different applications or different application instances",
  the base performance of Step 1 already holding the collision among an instance's own threads;
  so performance 1 of Step 2.1 ("Rtg executes alone on the processor core", R1 having no sibling
  there) is, for P2 of Step 2.3 (sibling R2 on its pipe), Ptg with one Rst on the pipe -- the
  baseline PPoPP'10 Step 2(ii) spells out, whose Step 2(iii) uses the same words ("interference
  with R1 and R2") for it.
* TSBSched (§3.3 Steps 1-3): ``time_t = base_time(A, class_i, t) + exe_time2 - exe_time1`` with
  ``exe_time2`` the target's busy time per packet with its co-runners and ``exe_time1`` with its
  siblings only -- Step 2(ii): "Since R2 and P2 belong to the same application instance, in Step
  1 we completely model the interference between them. So, in Step 2, we model only the impact
  of thread R1 on thread R2" (``exe_time1`` is the alone entry when t has no sibling in its
  domain, Step 2(i)); ``time_i = max_t time_t`` (the slowest stage sets the pace); ``perf_i =
  1 / time_i``; the plan's performance is ``sum_i perf_i``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tasksolve.solver.predictors.tables import ProfileTables


@dataclass
class Prediction:
    total: float
    per_instance: list[float]


def _readings(tables: ProfileTables, contexts: list[int]):
    """Per instance: its base entry and, per thread, (task, co-runner entry, sibling entry)."""
    members, instance_of, types = tables.layout()
    spec = tables.spec
    for i, threads in enumerate(members):
        app = spec.instances[i][0]
        base = tables.base_entry(app, tables.instance_form(contexts, threads))
        rows = []
        for t in threads:
            every, siblings = tables.stress_keys(contexts, t, instance_of, types)
            rows.append(
                (
                    types[t][1],
                    tables.slowdown_entry(types[t], every),
                    tables.slowdown_entry(types[t], siblings),
                )
            )
        yield base, rows


def predict_blackbox(tables: ProfileTables, contexts: list[int]) -> Prediction:
    """BlackBox's prediction for one binding plan (context per thread)."""
    per_instance = []
    for base, rows in _readings(tables, contexts):
        worst = max(
            siblings.throughput / stressed.throughput if stressed.throughput > 0 else float("inf")
            for _, stressed, siblings in rows
        )
        per_instance.append(base.throughput / worst)
    return Prediction(sum(per_instance), per_instance)


def predict_tsbsched(tables: ProfileTables, contexts: list[int]) -> Prediction:
    """TSBSched's prediction for one binding plan (context per thread)."""
    per_instance = []
    for base, rows in _readings(tables, contexts):
        slowest = max(
            base.thread_times[task] + stressed.thread_times[task] - siblings.thread_times[task]
            for task, stressed, siblings in rows
        )
        per_instance.append(1.0 / slowest if slowest > 0 else 0.0)
    return Prediction(sum(per_instance), per_instance)


PREDICTORS = {"blackbox": predict_blackbox, "tsbsched": predict_tsbsched}
