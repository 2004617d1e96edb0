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

from importlib import import_module
from typing import TYPE_CHECKING, Any

# name -> module that defines it; each is imported on first access only
_EXPORTS: dict[str, str] = {
    # the problem
    "Spec": "tasksolve.specs.spec",
    "Plan": "tasksolve.specs.plan",
    "SpecError": "tasksolve.specs.errors",
    "Objective": "tasksolve.specs.objective",
    "load_spec": "tasksolve.specs.loader",
    "load_plan": "tasksolve.specs.plan",
    # measuring a plan
    "make_oracle": "tasksolve.simulate.oracle",
    "Measurement": "tasksolve.simulate.measurement",
    # the methods and the main job
    "solve": "tasksolve.solver.api",
    "certify": "tasksolve.solver.api",
    "run": "tasksolve.solver.api",
    "Job": "tasksolve.solver.job.job",
    "JobResult": "tasksolve.solver.job.result",
    "JobSettings": "tasksolve.solver.job.settings",
    "SolveReport": "tasksolve.solver.binding.report",
    # statistics on any column of numbers
    "analyze": "tasksolve.evt.analysis",
    "EVTResult": "tasksolve.evt.result",
}

__all__ = [
    "EVTResult",
    "Job",
    "JobResult",
    "JobSettings",
    "Measurement",
    "Objective",
    "Plan",
    "SolveReport",
    "Spec",
    "SpecError",
    "__version__",
    "analyze",
    "certify",
    "load_plan",
    "load_spec",
    "make_oracle",
    "run",
    "solve",
]

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
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tasksolve' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
