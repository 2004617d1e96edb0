"""How good could it be? Extreme Value Theory on any column of numbers (imports nothing of ours).

Peaks over threshold (Coles 2001, "An Introduction to Statistical Modeling of Extreme Values",
chapter 4) as used by ASPLOS'12 (Radojkovic et al., "Optimal task assignment in multithreaded
processors: a statistical approach"): choose a threshold, fit a Generalized Pareto distribution
to the excesses by maximum likelihood, estimate the upper endpoint ``u - sigma/xi`` of the
distribution (the best possible value) with a profile-likelihood interval, and say how far the
best observed value is from it.

Public API::

    analyze(sample, *, minimize=False, confidence=0.95, threshold="auto", max_fraction=0.05,
            gof_bootstrap=200, seed=0) -> EVTResult
    sequential(sampler, *, n_init=1000, n_delta=500, target_gap=0.05, confidence=0.95,
               max_n=10000, minimize=False, ...) -> SequentialResult
    top_atom(sample, *, minimize=False, confidence=0.95) -> TopAtom | None  (best value hit twice or more)
    capture_probability(p, n) -> float;  samples_needed(p, prob) -> int
    mean_excess(sample) -> MeanExcess
    read_samples(path, column=None) -> numpy array
    fit_gpd(excesses) -> GPDFit;  endpoint_interval(excesses, fit, confidence) -> EndpointInterval
    evt.plots.plot_ecdf / plot_mean_excess / plot_qq / plot_profile / plot_sequential / write_plots
    EVTError (a ValueError) for every bad input
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; never executed
    from tasksolve.evt.analysis import analyze
    from tasksolve.evt.atom import TopAtom, beat_bound, top_atom
    from tasksolve.evt.endpoint import EndpointInterval, endpoint_interval
    from tasksolve.evt.errors import EVTError
    from tasksolve.evt.gof import GoodnessOfFit, goodness_of_fit
    from tasksolve.evt.gpd import GPDFit, fit_gpd, gpd_loglik
    from tasksolve.evt.io import read_samples
    from tasksolve.evt.meanexcess import MeanExcess, mean_excess
    from tasksolve.evt.result import EVTResult, SequentialResult, SequentialStep
    from tasksolve.evt.samplesize import capture_probability, samples_needed
    from tasksolve.evt.sequential import sequential

# name -> module that defines it; each is imported on first access only
_EXPORTS: dict[str, str] = {
    "analyze": "tasksolve.evt.analysis",
    "TopAtom": "tasksolve.evt.atom",
    "beat_bound": "tasksolve.evt.atom",
    "top_atom": "tasksolve.evt.atom",
    "EndpointInterval": "tasksolve.evt.endpoint",
    "endpoint_interval": "tasksolve.evt.endpoint",
    "EVTError": "tasksolve.evt.errors",
    "GoodnessOfFit": "tasksolve.evt.gof",
    "goodness_of_fit": "tasksolve.evt.gof",
    "GPDFit": "tasksolve.evt.gpd",
    "fit_gpd": "tasksolve.evt.gpd",
    "gpd_loglik": "tasksolve.evt.gpd",
    "read_samples": "tasksolve.evt.io",
    "MeanExcess": "tasksolve.evt.meanexcess",
    "mean_excess": "tasksolve.evt.meanexcess",
    "EVTResult": "tasksolve.evt.result",
    "SequentialResult": "tasksolve.evt.result",
    "SequentialStep": "tasksolve.evt.result",
    "capture_probability": "tasksolve.evt.samplesize",
    "samples_needed": "tasksolve.evt.samplesize",
    "sequential": "tasksolve.evt.sequential",
}

__all__ = [
    "EVTError",
    "EVTResult",
    "EndpointInterval",
    "GPDFit",
    "GoodnessOfFit",
    "MeanExcess",
    "SequentialResult",
    "SequentialStep",
    "TopAtom",
    "analyze",
    "beat_bound",
    "capture_probability",
    "endpoint_interval",
    "fit_gpd",
    "goodness_of_fit",
    "gpd_loglik",
    "mean_excess",
    "read_samples",
    "samples_needed",
    "sequential",
    "top_atom",
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


class _Package(ModuleType):
    """This package's module type: importing the submodule `evt.sequential` must not hide the
    function `sequential` of the same name (the import system binds a submodule on its parent)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
