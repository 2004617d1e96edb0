"""Calibration: per-task cycles and demands fitted to measured plans (`tasksolve calibrate`).

`experiments` chooses and measures the plans, `fitting` fits the closed form to them, `job` ties the
two together for the command line and writes the calibrated spec.
"""

from tasksolve.solver.calibration.fitting import Fit, FittedParameter, calibrated_spec, fit
from tasksolve.solver.calibration.job import CalibrationResult, calibrate

__all__ = ["CalibrationResult", "Fit", "FittedParameter", "calibrate", "calibrated_spec", "fit"]
