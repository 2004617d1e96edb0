"""TSBSched / BlackBox end to end: profile, predict candidates, re-measure the predicted top N.

The candidates are plans from the samplers (TSBSched predicted about 5000 placements per second
on a 2010 laptop and ranked a random sample in the same way); the `top_n` best predicted ones
are measured on the oracle and the best measured is the answer (the selection phase).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from specs import Plan, Spec, UsableTree
from solver.predictors.models import PREDICTORS
from solver.predictors.tables import OracleFactory, ProfileTables


@dataclass
class PredictorResult:
    method: str
    best_contexts: list[int]
    best_predicted: float
    best_measured: Any                     # the oracle's Measurement
    ranked: list[tuple[float, list[int]]]  # predicted value, plan: the top N
    measured: list[Any]                    # Measurements of the top N, same order
    experiments: int                       # profiling runs made
    table_size: dict[str, int] = field(default_factory=dict)


def run_predictor(spec: Spec, method: str, oracle_factory: OracleFactory, candidates: np.ndarray,
                  top_n: int = 5, seed: int = 0, tables: ProfileTables | None = None,
                  objective: str = "total_throughput", oracle_kind: str | None = None,
                  workers: int = 1) -> PredictorResult:
    """Predict every candidate (rows of context indices), measure the top `top_n` predicted.

    With `oracle_kind` and `workers` > 1 the profiling experiments run in worker processes.
    """
    predict = PREDICTORS[method]
    tables = tables or ProfileTables(spec, oracle_factory, seed=seed, oracle_kind=oracle_kind)
    tables.prefetch(np.asarray(candidates), workers)
    seen: set = set()
    scored: list[tuple[float, list[int]]] = []
    tree = UsableTree.of(spec.topology, spec.usable_contexts)
    for row in np.asarray(candidates):
        contexts = [int(c) for c in row]
        form = tree.canonical_form({c: t for t, c in enumerate(contexts)})
        if form in seen:
            continue
        seen.add(form)
        prediction = predict(tables, contexts)
        value = prediction.total if objective == "total_throughput" else min(prediction.per_instance)
        scored.append((value, contexts))
    scored.sort(key=lambda item: -item[0])
    ranked = scored[:top_n]
    oracle = oracle_factory(spec)
    measured = [oracle.evaluate(Plan.from_contexts(spec, contexts, method=method), seed=seed) for _, contexts in ranked]
    best = max(range(len(ranked)), key=lambda k: measured[k].value(objective))
    return PredictorResult(method, ranked[best][1], ranked[best][0], measured[best], ranked, measured,
                           tables.experiments, tables.full_table_size())
