"""The library calls behind ``tasksolve.solve``, ``tasksolve.certify`` and ``tasksolve.run``.

Each takes a `Spec` (or a built-in name or YAML path, loaded with `load_spec`) and keyword
options named as `solver.job.JobSettings` names them (the command line's names: ``samples``,
``target_gap``, ``seed``, ``workers``, ``oracle_kind``, ``time_limit``, ``design``, ``resume``,
...; None or left out: the spec's value), resolved once by `JobSettings.resolve`. Each returns a
typed result with ``summary()`` and ``to_dict()``:

* `solve` -- `solver.binding.report.SolveReport` (binding) or `solver.pipeline.job.PipelineResult`;
* `certify`, `run` -- `solver.job.JobResult` (``verdict``, ``positive``, ``certificate``,
  ``solve``, ``files``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tasksolve.specs import Plan, Spec, load_spec


def _spec(spec: Spec | str | Path) -> Spec:
    return spec if isinstance(spec, Spec) else load_spec(spec)


def solve(spec: Spec | str | Path, methods: str | list[str] | None = None, **options: Any):
    """Search plans with `methods` (``all``, a comma-separated string or a list; None: the main
    job's default) and measure each on the spec's oracle -- the main job's solve, without the
    certificate. ``solve_samples`` sets the random plans of the binding comparison."""
    from tasksolve.solver.job import JobSettings, strategy_for

    spec = _spec(spec)
    return strategy_for(spec, JobSettings.resolve(spec, methods, **options)).solve(None)


def certify(spec: Spec | str | Path, out_dir: str | Path, plan: Plan | str | Path | None = None, **options: Any):
    """Certify `plan` (a `Plan` or a plan file; None: the best random plan) against a sample of
    random plans or local optima written to ``out_dir/samples.jsonl`` (``tasksolve certify``);
    writes ``out_dir/certificate.json``. Binding specs."""
    from tasksolve.solver.job import Job, JobSettings
    from tasksolve.solver.job.given import GivenPlan
    from tasksolve.specs import load_plan

    spec = _spec(spec)
    if plan is not None and not isinstance(plan, Plan):
        plan = load_plan(Path(plan), spec)
    settings = JobSettings.resolve(spec, **options)
    return Job(spec, out_dir, settings, strategy=GivenPlan(spec, settings, plan)).run()


def run(
    spec: Spec | str | Path,
    out_dir: str | Path,
    methods: str | list[str] | None = None,
    *,
    say: Callable[[str], None] | None = None,
    **options: Any,
):
    """The main job (``tasksolve run``): solve, certify the chosen plan, write plan.yaml,
    pinning.txt, samples.jsonl, certificate.json and report.html into `out_dir`; `say` receives
    one line per phase."""
    from tasksolve.solver.job import Job, JobSettings

    spec = _spec(spec)
    return Job(spec, out_dir, JobSettings.resolve(spec, methods, **options), say=say).run()
