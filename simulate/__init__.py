"""How good is this plan?  The cost oracles of tasksolve.

* `simulate.analytic` -- the closed-form model (`evaluate`, the vectorised `BatchModel`);
* `simulate.des` -- the SimPy discrete-event simulation (`simulate`, `Simulation`, `DesSettings`),
  a package: settings, ports, tables, dynamics, the run loop, results;
* `simulate.oracle` -- the interface the solver and the certifier call (`Oracle`,
  `AnalyticOracle`, `SimulationOracle`, `make_oracle`);
* `simulate.registry` -- the oracle kinds (``des``, ``analytic``, ``command``): a new oracle is
  one module plus one line there;
* `simulate.command`, `simulate.pinning` -- the command oracle: the user's program run pinned;
* `simulate.experiments` -- maximum sustainable arrival rate, idealised runs;
* `simulate.model` -- the thread graph both oracles evaluate;
* `simulate.output` -- warm-up removal and batch means.

Every oracle implements the semantics of docs/design.md ("Semantics every oracle shares").  This
package never imports `solver` or `evt`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:  # for type checkers and editors; never executed
    from tasksolve.simulate.analytic import BatchModel, BatchResult, evaluate
    from tasksolve.simulate.des import DesSettings, Simulation, simulate
    from tasksolve.simulate.errors import InvalidPlanError, OracleError
    from tasksolve.simulate.experiments import IDEALS, MaxRate, ideal_runs, max_rate
    from tasksolve.simulate.measurement import OBJECTIVES, Measurement
    from tasksolve.simulate.model import ThreadGraph, compile_contexts, compile_plan
    from tasksolve.simulate.oracle import AnalyticOracle, Oracle, SimulationOracle, make_oracle, plan_seed

# submodule -> the names it exports, each imported on first access (lazy_loader: PEP 562)
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "analytic": ["BatchModel", "BatchResult", "evaluate"],
        "des": ["DesSettings", "Simulation", "simulate"],
        "errors": ["InvalidPlanError", "OracleError"],
        "experiments": ["IDEALS", "MaxRate", "ideal_runs", "max_rate"],
        "measurement": ["Measurement", "OBJECTIVES"],
        "model": ["ThreadGraph", "compile_contexts", "compile_plan"],
        "oracle": ["AnalyticOracle", "Oracle", "SimulationOracle", "make_oracle", "plan_seed"],
    },
)
