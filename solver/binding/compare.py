"""`tasksolve solve`: the binding methods side by side, each re-measured on the oracle.

Methods (docs/design.md, "Methods and their sources"):

* ``random`` -- the best predicted of an iid uniform sample (ASPLOS'12 Step 1), and the naive
  baseline: the average and the worst of a few random plans measured on the oracle;
* ``balanced`` -- the Linux/Solaris-like aim (equal thread counts per domain at every level):
  average and worst of a few balanced plans measured on the oracle;
* ``tsbsched`` / ``blackbox`` -- profile with the oracle, predict every placement class (a random
  sample when there are too many, `solver.predictors.candidates`), measure the predicted top N
  (the papers' N: 10 and 5), keep the best measured (selection phase); the top 1 is reported
  too, and ``details[method]["selection_curve"]`` holds the best measured among the first n;
* ``cpsat`` -- the closed form solved exactly, hinted with the best random plan improved by local
  search; the K best distinct plans are measured on the oracle and the best measured is the
  answer.  For total throughput the bound is the tighter of CP-SAT's and the configuration LP's.

Every figure in the comparison is measured with the same oracle and the same seeds, so rows
can be compared; `predicted` is the closed form's value for the same plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simulate.analytic import BatchModel
from simulate.measurement import Measurement
from simulate.oracle import make_oracle
from simulate.registry import DEFAULT_KIND
from solver.binding.conflicts import explain_infeasible
from solver.binding.cpsat import solve_binding
from solver.binding.problem import BindingProblem
from solver.binding.samplers import SamplerError, balanced_plans, uniform_plans
from solver.errors import Infeasible, SolverFailed
from specs import Plan, Spec

METHODS = ("cpsat", "blackbox", "tsbsched", "random", "balanced")


@dataclass
class Row:
    """One line of the comparison."""

    method: str
    predicted: float | None  # closed-form value of the plan (objective's unit)
    simulated: float | None  # measured value
    half_width: float | None
    contexts: list[int] | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "predicted": self.predicted,
            "simulated": self.simulated,
            "half_width": self.half_width,
            "note": self.note,
        }


@dataclass
class SolveReport:
    method: str
    objective: str
    status: str
    model_objective: float | None
    bound: float | None
    gap: float | None
    plan: Plan | None
    predicted: float | None
    measured: Measurement | None
    comparison: list[Row] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    failed_steps: list[str] = field(default_factory=list)  # solver steps that failed: the answer may be weaker

    def _details(self, best: float | None) -> dict[str, Any]:
        """`details`, each predictor's selection curve also as a loss against the best measured
        row (TPDS Figure 8)."""
        details = dict(self.details)
        for method in ("tsbsched", "blackbox"):
            entry = details.get(method)
            if entry and entry.get("selection_curve") and best and self.objective != "latency":
                details[method] = {**entry, "selection_loss": [1.0 - v / best for v in entry["selection_curve"]]}
        return details

    def to_dict(self) -> dict[str, Any]:
        best = max((r.simulated for r in self.comparison if r.simulated is not None), default=None)
        rows = []
        for row in self.comparison:
            entry = row.to_dict()
            if best and row.simulated is not None and self.objective != "latency":
                entry["loss"] = 1.0 - row.simulated / best
            rows.append(entry)
        return {
            "method": self.method,
            "objective_kind": self.objective,
            "status": self.status,
            "objective": self.model_objective,
            "bound": self.bound,
            "gap": self.gap,
            "plan": self.plan.to_dict() if self.plan else None,
            "predicted": self.predicted,
            "simulated": self.measured.to_dict() if self.measured else None,
            "comparison": rows,
            "details": self._details(best),
            "failed_steps": self.failed_steps,
        }


def solve(
    spec: Spec,
    methods: list[str],
    *,
    oracle_kind: str = DEFAULT_KIND,
    top_k: int = 5,
    time_limit: float = 30.0,
    workers: int = 2,
    seed: int = 0,
    samples: int = 5000,
    baseline_plans: int = 10,
    top_n: int | None = None,
    deterministic: bool = False,
    progress: Callable[[str], None] | None = None,
) -> SolveReport:
    """Run `methods` on a binding spec; the answer is CP-SAT's when it ran, else the best measured."""
    say = progress or (lambda _: None)
    count = getattr(progress, "update", None) or say  # counts inside a phase (Phases.update)
    objective = spec.objective
    problem = BindingProblem(spec)
    batch = BatchModel(spec)
    oracle = make_oracle(spec, oracle_kind)

    def predicted(contexts: list[int]) -> float:
        return float(batch.evaluate(np.array([contexts])).values(objective)[0])

    def measure(plans: list[list[int]], label: str) -> list[Measurement]:
        say(f"measuring {len(plans)} {label} plan(s) on the {oracle_kind} oracle")
        return oracle.evaluate_many(
            [Plan.from_contexts(spec, c, method=label) for c in plans], seed=seed, workers=workers
        )

    say(f"sampling {samples} random plans")
    try:
        sample = uniform_plans(spec, samples, seed)
    except SamplerError as exc:
        if "cpsat" not in methods:
            raise Infeasible(f"{exc}; try --method cpsat") from None
        say(f"no random sample ({exc}); CP-SAT runs without a hint, sampling methods are skipped")
        methods = ["cpsat"]
        sample = np.empty((0, len(spec.threads)), dtype=np.intp)
    sample_values = batch.evaluate(sample).values(objective) if len(sample) else np.empty(0)
    rows: list[Row] = []
    answer: tuple[str, list[int], Measurement] | None = None
    report_details: dict[str, Any] = {"samples": int(len(sample))}
    cp_status, cp_value, cp_bound, cp_gap = "NOT_RUN", None, None, None

    if "random" in methods:
        best_index = int(np.argmax(sample_values))
        naive = [list(map(int, r)) for r in sample[:baseline_plans]]
        chosen = [list(map(int, sample[best_index]))] + naive
        results = measure(chosen, "random")
        rows.append(
            Row(
                f"random best of {len(sample)}",
                float(sample_values[best_index]),
                results[0].value(objective),
                results[0].half_width,
                chosen[0],
            )
        )
        values = [m.value(objective) for m in results[1:]]
        worst = int(np.argmin(values))
        rows.append(
            Row(
                f"naive avg of {len(values)}",
                float(np.mean(sample_values[: len(naive)])),
                float(np.mean(values)),
                None,
                note="unaware scheduler",
            )
        )
        rows.append(
            Row(
                f"naive worst of {len(values)}",
                float(sample_values[worst]),
                values[worst],
                results[1 + worst].half_width,
                naive[worst],
            )
        )

    if "balanced" in methods:
        try:
            plans = [list(map(int, r)) for r in balanced_plans(spec, baseline_plans, seed)]
        except SamplerError as exc:
            say(f"balanced: {exc}")
            plans = []
        if plans:
            results = measure(plans, "balanced")
            values = [m.value(objective) for m in results]
            preds = batch.evaluate(np.array(plans)).values(objective)
            worst = int(np.argmin(values))
            rows.append(Row(f"balanced avg of {len(plans)}", float(np.mean(preds)), float(np.mean(values)), None))
            rows.append(
                Row(
                    f"balanced worst of {len(plans)}",
                    float(preds[worst]),
                    values[worst],
                    results[worst].half_width,
                    plans[worst],
                )
            )

    tables = None
    for method in ("tsbsched", "blackbox"):
        if method not in methods:
            continue
        from solver.predictors.candidates import Candidates
        from solver.predictors.selection import run_predictor
        from solver.predictors.tables import ProfileTables

        # one set of profiling tables serves both predictors: the experiments are the same
        tables = tables or ProfileTables(
            spec, lambda s: make_oracle(s, oracle_kind), seed=seed, oracle_kind=oracle_kind, workers=workers, say=count
        )
        candidates = Candidates.of(spec, samples=samples, seed=seed)
        say(f"{method}: profiling with the {oracle_kind} oracle and predicting {candidates.label}")
        result = run_predictor(
            spec,
            method,
            lambda s: make_oracle(s, oracle_kind),
            candidates,
            top_n=top_n,
            seed=seed,
            objective=objective,
            oracle_kind=oracle_kind,
            workers=workers,
            tables=tables,
            say=count,
        )
        n = len(result.measured)
        top1 = result.measured[0]
        rows.append(
            Row(
                f"{method} top 1",
                predicted(result.ranked[0][1]),
                top1.value(objective),
                top1.half_width,
                result.ranked[0][1],
                note="no selection phase",
            )
        )
        rows.append(
            Row(
                f"{method} top {n}",
                predicted(result.best_contexts),
                result.best_measured.value(objective),
                result.best_measured.half_width,
                result.best_contexts,
                note=f"{result.experiments} profiling runs",
            )
        )
        report_details[method] = {
            "experiments": result.experiments,
            "table_size": result.table_size,
            "candidates": result.candidates,
            "predicted_plans": result.predicted_plans,
            "predict_seconds": result.predict_seconds,
            "profiling_seconds": tables.profiling_seconds,
            "selection_size": n,
            "selection_curve": result.selection_curve(objective),
        }
        if answer is None or result.best_measured.value(objective) > answer[2].value(objective):
            if "cpsat" not in methods:
                answer = (method, result.best_contexts, result.best_measured)

    if "cpsat" in methods:
        say(f"cpsat: solving the closed form (time limit {time_limit:g}s, {workers} workers)")
        hint = list(map(int, sample[int(np.argmax(sample_values))])) if len(sample) else None
        result = solve_binding(
            problem,
            objective=objective,
            top_k=top_k,
            time_limit=time_limit,
            workers=workers,
            seed=seed,
            hint=hint,
            deterministic_time=time_limit if deterministic else None,
        )
        cp_status = result.status
        if result.status == "INFEASIBLE":
            raise Infeasible(explain_infeasible(problem))
        if not result.solutions:
            raise SolverFailed(f"CP-SAT found no plan within {time_limit:g}s (status {result.status})")
        best_solution = result.solutions[0]
        cp_value, cp_bound, cp_gap = best_solution.objective, best_solution.bound, best_solution.gap
        plans = [s.contexts for s in result.solutions]
        measured = measure(plans, "cpsat")
        k = max(range(len(plans)), key=lambda i: measured[i].value(objective))
        rows.insert(
            0,
            Row(
                f"cpsat top {len(plans)}",
                predicted(plans[k]),
                measured[k].value(objective),
                measured[k].half_width,
                plans[k],
                note=f"{result.status}, model rank {k + 1}",
            ),
        )
        answer = ("cpsat", plans[k], measured[k])
        heuristic, configuration = result.local_search, result.configuration_bound
        report_details["cpsat"] = {
            "status": result.status,
            "wall_time": result.wall_time,
            "symmetry_constraints": result.symmetry_constraints,
            "bound_source": best_solution.bound_source,
            "found_by": best_solution.found_by,
            "local_search": None
            if heuristic is None
            else {"value": heuristic.value, "rounds": heuristic.rounds, "wall_time": heuristic.wall_time},
            "configuration_bound": None
            if configuration is None
            else {
                "value": configuration.value,
                "level": configuration.level,
                "configurations": configuration.configurations,
                "columns": configuration.columns,
                "converged": configuration.converged,
                "wall_time": configuration.wall_time,
            },
            "notes": result.notes,
            "steps": [step.to_dict() for step in result.steps],
            "failed_steps": [step.step for step in result.failed_steps],
            "top_k": [
                {"predicted": s.objective, "measured": m.value(objective)} for s, m in zip(result.solutions, measured)
            ],
        }

    if answer is None:
        candidates = [r for r in rows if r.contexts is not None and r.simulated is not None]
        best_row = max(candidates, key=lambda r: r.simulated)
        measurement = oracle.evaluate(Plan.from_contexts(spec, best_row.contexts), seed=seed)
        answer = (best_row.method.split(" ")[0], best_row.contexts, measurement)
        cp_status = "NOT_RUN"

    method, contexts, measurement = answer
    plan = Plan.from_contexts(spec, contexts, method=method)
    failed = report_details.get("cpsat", {}).get("failed_steps", [])
    return SolveReport(
        failed_steps=list(failed),
        method=method,
        objective=objective,
        status=cp_status,
        model_objective=cp_value,
        bound=cp_bound,
        gap=cp_gap,
        plan=plan,
        predicted=predicted(contexts),
        measured=measurement,
        comparison=rows,
        details=report_details,
    )
