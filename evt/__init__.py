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

from typing import TYPE_CHECKING

import lazy_loader

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

# submodule -> the names it exports, each imported on first access (lazy_loader: PEP 562)
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "analysis": ["analyze"],
        "atom": ["TopAtom", "beat_bound", "top_atom"],
        "endpoint": ["EndpointInterval", "endpoint_interval"],
        "errors": ["EVTError"],
        "gof": ["GoodnessOfFit", "goodness_of_fit"],
        "gpd": ["GPDFit", "fit_gpd", "gpd_loglik"],
        "io": ["read_samples"],
        "meanexcess": ["MeanExcess", "mean_excess"],
        "result": ["EVTResult", "SequentialResult", "SequentialStep"],
        "samplesize": ["capture_probability", "samples_needed"],
        "sequential": ["sequential"],
    },
)
