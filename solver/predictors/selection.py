"""TSBSched / BlackBox end to end: profile, predict every candidate, measure the predicted top N
(the Tuning phase of PPoPP'10 §3.3, the Selection phase of IEEE TPDS §3.1.3).

Selection sizes are the papers': TSBSched runs the ten best predicted plans ("running only ten
best predicted TSBs is enough", §3.3), BlackBox the five best ("only five predicted
best-performing thread assignments", §3.1.3).  The result keeps the top-1 (the method without
selection, TPDS Figure 7) and the best measured among the first n for n = 1..N (TPDS Figure 8's
curve: loss against the number of plans run in the selection phase).

Predictions stream over chunks of candidates (`solver.predictors.candidates`) with the
vectorised predictor (`solver.predictors.batch`): only the tables and the best few plans are
kept.  The top N are measured with the oracle's `evaluate_many` (the one executor).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tasksolve.solver.errors import BadProblemError
from tasksolve.solver.predictors.batch import BatchPredictor
from tasksolve.solver.predictors.candidates import Candidates
from tasksolve.solver.predictors.tables import OracleFactory, ProfileTables
from tasksolve.specs import Plan, Spec, UsableTree

SELECTION_SIZE = {"tsbsched": 10, "blackbox": 5}


@dataclass
class PredictorResult:
    method: str
    best_contexts: list[int]
    best_predicted: float
    best_measured: Any  # the oracle's Measurement
    ranked: list[tuple[float, list[int]]]  # predicted value, plan: the top N
    measured: list[Any]  # Measurements of the top N, same order
    experiments: int  # profiling runs made
    table_size: dict[str, int] = field(default_factory=dict)
    predicted_plans: int = 0
    predict_seconds: float = 0.0
    candidates: dict[str, Any] = field(default_factory=dict)

    def selection_curve(self, objective: str) -> list[float]:
        """Best measured value among the first n predicted, n = 1..N (TPDS Figure 8)."""
        values = [m.value(objective) for m in self.measured]
        return [max(values[:n]) for n in range(1, len(values) + 1)]


class _Top:
    """The `keep` highest predicted plans seen so far."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.values = np.empty(0)
        self.rows: np.ndarray | None = None

    def add(self, values: np.ndarray, rows: np.ndarray) -> None:
        if self.rows is not None:
            values, rows = np.concatenate([self.values, values]), np.concatenate([self.rows, rows])
        if len(values) > self.keep:
            best = np.argpartition(-values, self.keep - 1)[: self.keep]
            values, rows = values[best], rows[best]
        self.values, self.rows = values, rows

    def ranked(self, tree: UsableTree) -> list[tuple[float, list[int]]]:
        """Best first, one plan per placement class."""
        if self.rows is None:
            return []
        seen, out = set(), []
        for k in np.argsort(-self.values, kind="stable"):
            contexts = [int(c) for c in self.rows[k]]
            form = tree.canonical_form({c: t for t, c in enumerate(contexts)})
            if form not in seen:
                seen.add(form)
                out.append((float(self.values[k]), contexts))
        return out


def run_predictor(
    spec: Spec,
    method: str,
    oracle_factory: OracleFactory,
    candidates: Candidates | np.ndarray,
    top_n: int | None = None,
    seed: int = 0,
    tables: ProfileTables | None = None,
    objective: str = "total_throughput",
    oracle_kind: str | None = None,
    workers: int = 1,
    say: Callable[[str], None] | None = None,
    chunk: int = 16384,
) -> PredictorResult:
    """Predict every candidate (a `Candidates`, or rows of context indices), measure the top
    `top_n` predicted (default: the paper's selection size), keep the best measured."""
    if method == "tsbsched" and oracle_kind == "command":
        raise BadProblemError(
            "TSBSched needs each thread's busy time in its profiling experiments (PPoPP'10 §3.3), which a "
            "program measured by the command oracle does not report; use --method blackbox (with "
            "oracle.metric.instances), cpsat, random or balanced"
        )
    say = say or (lambda _: None)
    top_n = top_n or SELECTION_SIZE[method]
    tables = tables or ProfileTables(spec, oracle_factory, seed=seed, oracle_kind=oracle_kind, workers=workers, say=say)
    batch = BatchPredictor(tables)
    if isinstance(candidates, Candidates):
        chunks, info = candidates.chunks(chunk), candidates.describe()
        total = candidates.classes if candidates.exhaustive else candidates.samples
    else:
        rows = np.asarray(candidates)
        chunks = (rows[i : i + chunk] for i in range(0, len(rows), chunk))
        total, info = len(rows), {"exhaustive": False, "plans": len(rows)}
    top = _Top(4 * top_n)
    done, started, profiling_before = 0, time.perf_counter(), tables.profiling_seconds
    for rows in chunks:
        if len(rows):
            top.add(batch.values(method, rows, objective), rows)
        done += len(rows)
        say(f"predicted {done}" + (f"/{total}" if total else "") + " plans")
    predict_seconds = time.perf_counter() - started - (tables.profiling_seconds - profiling_before)
    ranked = top.ranked(UsableTree.of(spec.topology, spec.usable_contexts))[:top_n]
    if not ranked:
        raise BadProblemError(f"{spec.name}: no candidate plan satisfies the constraints")
    say(f"measuring the {len(ranked)} best predicted plans")
    oracle = oracle_factory(spec)
    plans = [Plan.from_contexts(spec, contexts, method=method) for _, contexts in ranked]
    measured = oracle.evaluate_many(plans, seed=seed, workers=workers)
    best = max(range(len(ranked)), key=lambda k: measured[k].value(objective))
    return PredictorResult(
        method,
        ranked[best][1],
        ranked[best][0],
        measured[best],
        ranked,
        measured,
        tables.experiments,
        tables.full_table_size(),
        done,
        predict_seconds,
        info,
    )
