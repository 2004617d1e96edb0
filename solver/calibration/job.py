"""`calibrate`: measure the experiments' plans on an oracle, fit, and build the calibrated spec."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tasksolve.solver.calibration.experiments import calibration_plans, measure
from tasksolve.solver.calibration.fitting import Fit, calibrated_spec, fit
from tasksolve.solver.errors import BadProblemError
from tasksolve.specs import Spec
from tasksolve.specs.oracles import noun


@dataclass
class CalibrationResult:
    spec: Spec  # the calibrated spec
    fit: Fit
    plans: np.ndarray
    measured: np.ndarray
    thread_times: bool  # whether the oracle's per-thread times were fitted too
    oracle: str
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "oracle": self.oracle,
            "plans": len(self.plans),
            "thread_times": self.thread_times,
            "starts": self.fit.starts,
            "residuals": {
                "rms": self.fit.rms,
                "worst": self.fit.worst,
                "rms_before": self.fit.rms_before,
            },
            "worse_than_spec": self.fit.worse_than_spec,
            "identified": self.fit.identified,
            "warning": self.fit.warning,
            "parameters": [p.to_dict() for p in self.fit.parameters],
            "seconds": self.seconds,
        }


def calibrate(
    spec: Spec,
    *,
    oracle_kind: str,
    plans: int = 100,
    starts: int = 8,
    seed: int = 0,
    workers: int = 1,
    fit_all_resources: bool = False,
    fit_communication: bool = False,
    progress: Callable[[str], None] | None = None,
) -> CalibrationResult:
    """Measure `plans` random plans (plus packed and balanced ones) on `oracle_kind` and fit the
    spec's cycles and demands to them (`solver.calibration.fitting`)."""
    if spec.problem != "binding":
        raise BadProblemError(f"{spec.name}: calibration measures binding plans; this spec is a pipeline problem")
    say = progress or (lambda _: None)
    start = time.perf_counter()
    chosen = calibration_plans(spec, plans, seed)
    say(f"measuring {len(chosen)} plans on the {noun(oracle_kind)}")
    measured, times = measure(spec, chosen, oracle_kind, seed=seed, workers=workers)
    bad = ~np.isfinite(measured) | (measured <= 0)
    if bad.any():
        rows = sorted(set(np.nonzero(bad)[0].tolist()))
        raise BadProblemError(
            f"{len(rows)} of {len(chosen)} plans measured no throughput for some instance "
            f"(first: plan {rows[0]}); calibration needs every instance to run"
        )
    say(
        f"fitting {spec.name}'s cycles and demands ({starts + 1} starts"
        + (", thread times included)" if times is not None else ", throughputs only)")
    )
    result = fit(
        spec,
        chosen,
        measured,
        times,
        starts=starts,
        seed=seed,
        fit_all_resources=fit_all_resources,
        fit_communication=fit_communication,
    )
    return CalibrationResult(
        calibrated_spec(spec, result.parameters),
        result,
        chosen,
        measured,
        times is not None,
        oracle_kind,
        time.perf_counter() - start,
    )
