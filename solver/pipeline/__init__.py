"""Latency-constrained parallel-pipeline scheduling (LATA, DAC'10), exact and heuristic.

* `problem` -- the pipeline problem and the one closed-form model every method is judged by
  (group times with contention, period, throughput, latency; read its docstring first);
  `evaluation` computes it;
* `lata` -- LATA step by step; `lata_premap` -- its pre-mapping onto the processors; `mapping` --
  the placement on contexts and its cache-aware real mapping;
* `baselines` -- Parallel, List (HLFET), Greedy, Random, Bipar;
* `model`, `bins`, `cpsat` -- the exact CP-SAT model (grouping, replication, mapping,
  contention) and its solves (the best plan, the next best ones);
* `chain_dp` -- the dynamic-programming optimum for chains; `brute` -- brute force for tiny DAGs;
* `plans` -- conversion to and from `specs.Plan`, dependency validity;
* `compare`, `sweep` -- running methods side by side, measuring, Figures 14-15.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; never executed
    from tasksolve.solver.pipeline.candidates import Candidate, Group, check_candidate
    from tasksolve.solver.pipeline.evaluation import Evaluation, MethodResult, evaluate
    from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem

# name -> module that defines it; each is imported on first access only
_EXPORTS: dict[str, str] = {
    "Candidate": "tasksolve.solver.pipeline.candidates",
    "Group": "tasksolve.solver.pipeline.candidates",
    "check_candidate": "tasksolve.solver.pipeline.candidates",
    "Evaluation": "tasksolve.solver.pipeline.evaluation",
    "MethodResult": "tasksolve.solver.pipeline.evaluation",
    "evaluate": "tasksolve.solver.pipeline.evaluation",
    "PipelineError": "tasksolve.solver.pipeline.problem",
    "PipelineProblem": "tasksolve.solver.pipeline.problem",
}

__all__ = [
    "Candidate",
    "Evaluation",
    "Group",
    "MethodResult",
    "PipelineError",
    "PipelineProblem",
    "check_candidate",
    "evaluate",
]


def __getattr__(name: str) -> Any:
    """Import an exported name on first access (PEP 562); later lookups find it in globals()."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
