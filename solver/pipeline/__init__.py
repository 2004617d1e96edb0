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

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:  # for type checkers and editors; never executed
    from tasksolve.solver.pipeline.candidates import Candidate, Group, check_candidate
    from tasksolve.solver.pipeline.evaluation import Evaluation, MethodResult, evaluate
    from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem

# submodule -> the names it exports, each imported on first access (lazy_loader: PEP 562)
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "candidates": ["Candidate", "Group", "check_candidate"],
        "evaluation": ["Evaluation", "MethodResult", "evaluate"],
        "problem": ["PipelineError", "PipelineProblem"],
    },
)
