"""Calibration: per-task cycles and demands fitted to measured plans (`tasksolve calibrate`).

`experiments` chooses and measures the plans, `fitting` fits the closed form to them, `job` ties the
two together for the command line and writes the calibrated spec.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:  # for type checkers and editors; never executed
    from tasksolve.solver.calibration.fitting import Fit, FittedParameter, calibrated_spec, fit
    from tasksolve.solver.calibration.job import CalibrationResult, calibrate

# submodule -> the names it exports, each imported on first access (lazy_loader: PEP 562)
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "fitting": ["Fit", "FittedParameter", "calibrated_spec", "fit"],
        "job": ["CalibrationResult", "calibrate"],
    },
)
