"""The prediction formulas of BlackBox (IEEE TPDS) and TSBSched (PPoPP'10).

Both read a plan instance by instance.  For instance i (application A) the *base* entry is the
placement of i's own threads alone (its symmetry class), and each thread t of i has a *stress
key*: the threads of other instances that share t's stress domain, by level.

* BlackBox: ``perf_i = base_perf(A, class_i) / max_t slowdown_t`` with
  ``slowdown_t = perf(target alone) / perf(target with its stressors)`` from the slowdown table
  (a ratio of performances); the plan's performance is ``sum_i perf_i``.
* TSBSched: ``time_t = base_time(A, class_i, t) + (time(target with stressors) - time(target
  alone))`` (an additive slowdown in busy time per packet); ``time_i = max_t time_t`` (the slowest
  thread sets the pace); ``perf_i = 1 / time_i``; the plan's performance is ``sum_i perf_i``.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.predictors.tables import ProfileTables


@dataclass
class Prediction:
    total: float
    per_instance: list[float]


def _readings(tables: ProfileTables, contexts: list[int]):
    """Per instance: its base entry and, per thread, (task, stressed entry, alone entry)."""
    members, instance_of, types = tables.layout()
    spec = tables.spec
    for i, threads in enumerate(members):
        app = spec.instances[i][0]
        base = tables.base_entry(app, tables.instance_form(contexts, threads))
        rows = []
        for t in threads:
            key = tables.stress_key(contexts, t, instance_of, types)
            stressed, alone = tables.slowdown_entry(types[t], key)
            rows.append((types[t][1], stressed, alone))
        yield base, rows


def predict_blackbox(tables: ProfileTables, contexts: list[int]) -> Prediction:
    """BlackBox's prediction for one binding plan (context per thread)."""
    per_instance = []
    for base, rows in _readings(tables, contexts):
        worst = 1.0
        for _, stressed, alone in rows:
            worst = max(worst, alone.throughput / stressed.throughput if stressed.throughput > 0 else float("inf"))
        per_instance.append(base.throughput / worst)
    return Prediction(sum(per_instance), per_instance)


def predict_tsbsched(tables: ProfileTables, contexts: list[int]) -> Prediction:
    """TSBSched's prediction for one binding plan (context per thread)."""
    per_instance = []
    for base, rows in _readings(tables, contexts):
        slowest = max(base.thread_times[task] + stressed.thread_times[task] - alone.thread_times[task]
                      for task, stressed, alone in rows)
        per_instance.append(1.0 / slowest if slowest > 0 else 0.0)
    return Prediction(sum(per_instance), per_instance)


PREDICTORS = {"blackbox": predict_blackbox, "tsbsched": predict_tsbsched}
