"""The library calls behind ``tasksolve.solve``, ``tasksolve.certify`` and ``tasksolve.run``.

Each takes a `Spec` (or a built-in name or YAML path, loaded with `load_spec`) and keyword
options named as the command line names them; each returns a typed result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tasksolve.specs import Spec, load_spec


def _spec(spec: Spec | str | Path) -> Spec:
    return spec if isinstance(spec, Spec) else load_spec(spec)


def solve(spec: Spec | str | Path, methods: list[str] | tuple[str, ...] = ("cpsat",), **options: Any):
    """Search plans with `methods` and measure each on the spec's oracle (``tasksolve solve``)."""
    from tasksolve.solver.binding.compare import solve as solve_binding

    return solve_binding(_spec(spec), list(methods), **options)


def certify(spec: Spec | str | Path, out_dir: str | Path, **options: Any):
    """Certify a plan against a sample of plans (``tasksolve certify``)."""
    from tasksolve.solver.certify.run import certify as certify_plan

    return certify_plan(_spec(spec), out_dir=Path(out_dir), **options)


def run(spec: Spec | str | Path, out_dir: str | Path, **options: Any):
    """The main job (``tasksolve run``): solve, certify the chosen plan, write the report."""
    from tasksolve.solver.certify.job import run as run_job

    return run_job(_spec(spec), Path(out_dir), **options)
