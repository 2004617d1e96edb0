"""tasksolve: which placement, how good is it, how good could it be.

The library API. Every name below is imported on first use (a module ``__getattr__``, PEP 562),
so ``import tasksolve`` and the command line's start load none of OR-Tools, SciPy, pandas,
statsmodels or matplotlib.

    import tasksolve

    spec = tasksolve.load_spec("t2-ipfwd-intadd-x2")        # a built-in name or a YAML path
    oracle = tasksolve.make_oracle(spec, "analytic")        # "des" (default), "analytic", "command"
    measured = oracle.evaluate(plan)                        # a Measurement with its half-width
    result = tasksolve.run(spec, "out/", seed=0)            # the main job: solve, certify, report
    print(result.summary())                                 # the verdict's sentence first
    result.verdict, result.positive, result.to_dict()      # the typed result and its JSON
    objective = tasksolve.Objective.of(spec.objective)      # direction, unit, the one formatter
    objective.format(result.solve.value)                    # "10.94 Mpps"
    sample = tasksolve.analyze(values)                      # EVT on any column of numbers

The four packages are importable as ``tasksolve.specs`` (the problem), ``tasksolve.simulate``
(the oracles), ``tasksolve.evt`` (the statistics) and ``tasksolve.solver`` (the methods, the
certificate, the CLI); docs/design.md, "Layout" says which imports which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import lazy_loader

# submodule -> the names it exports, each imported on first access (lazy_loader: PEP 562)
_lazy_getattr, _lazy_dir, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "evt.analysis": ["analyze"],
        "evt.result": ["EVTResult"],
        "simulate.measurement": ["Measurement"],
        "simulate.oracle": ["make_oracle"],
        "solver.api": ["certify", "run", "solve"],
        "solver.binding.report": ["SolveReport"],
        "solver.job.job": ["Job"],
        "solver.job.result": ["JobResult"],
        "solver.job.settings": ["JobSettings"],
        "specs.errors": ["SpecError"],
        "specs.loader": ["load_spec"],
        "specs.objective": ["Objective"],
        "specs.plan": ["Plan", "load_plan"],
        "specs.spec": ["Spec"],
    },
)


if TYPE_CHECKING:  # for type checkers and editors; never executed
    from tasksolve.evt.analysis import analyze
    from tasksolve.evt.result import EVTResult
    from tasksolve.simulate.measurement import Measurement
    from tasksolve.simulate.oracle import make_oracle
    from tasksolve.solver.api import certify, run, solve
    from tasksolve.solver.binding.report import SolveReport
    from tasksolve.solver.job.job import Job
    from tasksolve.solver.job.result import JobResult
    from tasksolve.solver.job.settings import JobSettings
    from tasksolve.specs.errors import SpecError
    from tasksolve.specs.loader import load_spec
    from tasksolve.specs.objective import Objective
    from tasksolve.specs.plan import Plan, load_plan
    from tasksolve.specs.spec import Spec


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("tasksolve")
        except PackageNotFoundError:  # pragma: no cover - always installed, see pyproject.toml
            return "0+unknown"
    return _lazy_getattr(name)


__all__ = sorted([*__all__, "__version__"])


def __dir__() -> list[str]:
    return [*__all__]
