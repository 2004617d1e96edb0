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

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; never executed
    from tasksolve.simulate.analytic import BatchModel, BatchResult, evaluate
    from tasksolve.simulate.des import DesSettings, Simulation, simulate
    from tasksolve.simulate.errors import InvalidPlanError, OracleError
    from tasksolve.simulate.experiments import IDEALS, MaxRate, ideal_runs, max_rate
    from tasksolve.simulate.measurement import OBJECTIVES, Measurement
    from tasksolve.simulate.model import ThreadGraph, compile_contexts, compile_plan
    from tasksolve.simulate.oracle import AnalyticOracle, Oracle, SimulationOracle, make_oracle, plan_seed

# name -> module that defines it; each is imported on first access only
_EXPORTS: dict[str, str] = {
    "BatchModel": "tasksolve.simulate.analytic",
    "BatchResult": "tasksolve.simulate.analytic",
    "evaluate": "tasksolve.simulate.analytic",
    "DesSettings": "tasksolve.simulate.des",
    "Simulation": "tasksolve.simulate.des",
    "simulate": "tasksolve.simulate.des",
    "InvalidPlanError": "tasksolve.simulate.errors",
    "OracleError": "tasksolve.simulate.errors",
    "IDEALS": "tasksolve.simulate.experiments",
    "MaxRate": "tasksolve.simulate.experiments",
    "ideal_runs": "tasksolve.simulate.experiments",
    "max_rate": "tasksolve.simulate.experiments",
    "OBJECTIVES": "tasksolve.simulate.measurement",
    "Measurement": "tasksolve.simulate.measurement",
    "ThreadGraph": "tasksolve.simulate.model",
    "compile_contexts": "tasksolve.simulate.model",
    "compile_plan": "tasksolve.simulate.model",
    "AnalyticOracle": "tasksolve.simulate.oracle",
    "Oracle": "tasksolve.simulate.oracle",
    "SimulationOracle": "tasksolve.simulate.oracle",
    "make_oracle": "tasksolve.simulate.oracle",
    "plan_seed": "tasksolve.simulate.oracle",
}

__all__ = [
    "AnalyticOracle",
    "BatchModel",
    "BatchResult",
    "DesSettings",
    "IDEALS",
    "InvalidPlanError",
    "MaxRate",
    "Measurement",
    "OBJECTIVES",
    "Oracle",
    "OracleError",
    "Simulation",
    "SimulationOracle",
    "ThreadGraph",
    "compile_contexts",
    "compile_plan",
    "evaluate",
    "ideal_runs",
    "make_oracle",
    "max_rate",
    "plan_seed",
    "simulate",
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
