"""Calibration: per-task cycles and demands fitted to measured plans (`tasksolve calibrate`).

`experiments` chooses and measures the plans, `fitting` fits the closed form to them, `job` ties the
two together for the command line and writes the calibrated spec.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; never executed
    from tasksolve.solver.calibration.fitting import Fit, FittedParameter, calibrated_spec, fit
    from tasksolve.solver.calibration.job import CalibrationResult, calibrate

# name -> module that defines it; each is imported on first access only
_EXPORTS: dict[str, str] = {
    "Fit": "tasksolve.solver.calibration.fitting",
    "FittedParameter": "tasksolve.solver.calibration.fitting",
    "calibrated_spec": "tasksolve.solver.calibration.fitting",
    "fit": "tasksolve.solver.calibration.fitting",
    "CalibrationResult": "tasksolve.solver.calibration.job",
    "calibrate": "tasksolve.solver.calibration.job",
}

__all__ = ["CalibrationResult", "Fit", "FittedParameter", "calibrate", "calibrated_spec", "fit"]


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
