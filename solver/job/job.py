"""The main job as one object: take the output directory, solve, certify, write the report.

`Job.run` is what ``tasksolve run``, ``tasksolve certify``, the library calls of `solver.api` and
the benchmarks run (docs/design.md, "Purpose"). It writes into one output directory

* ``plan.yaml`` -- the chosen plan (binding: CP-SAT's K best, selected on the oracle; pipeline:
  CP-SAT's grouping, `solver.pipeline.job`);
* ``pinning.txt`` -- the plan as ``taskset`` lines (``tasksolve pin`` writes other formats);
* ``samples.jsonl`` -- every sample measured for the certificate (resumable; random plans or
  local optima, see `solver.certify.designs`);
* ``certificate.json`` -- the certificate, with the solve's report under ``"solve"``;
* ``report.html`` -- one self-contained page (plan, comparison, certificate and plots);
* ``solve.pickle`` -- the finished solve, which ``--resume`` reuses when the spec and the
  solve's settings are unchanged (`solver.job.solve_record`).

What differs between problem kinds -- the solve, the bound, the known plans, the sampler, the
report's sections -- is the `Strategy`'s (`solver.job.strategy`); the settings are resolved once
into a `JobSettings`. Every file is written atomically, and nothing is written before the step
that produces it has finished, so an interruption never leaves a half-written file; the output
directory is taken in one place (`Job.take_out_dir`) before anything is written.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from tasksolve.evt.errors import EVTError
from tasksolve.solver.errors import SolverFailed
from tasksolve.solver.job.binding import BindingStrategy
from tasksolve.solver.job.pipeline import PipelineStrategy
from tasksolve.solver.job.result import JobResult
from tasksolve.solver.job.settings import JobSettings
from tasksolve.solver.job.solve_record import reuse_or_solve
from tasksolve.solver.job.strategy import Strategy
from tasksolve.specs import Spec

#: one strategy per problem kind (the spec's ``problem``)
STRATEGIES: dict[str, type[Strategy]] = {"binding": BindingStrategy, "pipeline": PipelineStrategy}


def strategy_for(spec: Spec, settings: JobSettings) -> Strategy:
    """The strategy of `spec`'s problem kind."""
    return STRATEGIES[spec.problem](spec, settings)


class Job:
    """One main job on `spec` into `out_dir`: `settings` (or `options`, resolved by
    `JobSettings.resolve`), a `strategy` (default: the spec's problem kind, `strategy_for`);
    `say` receives one line per phase."""

    def __init__(
        self,
        spec: Spec,
        out_dir: str | Path,
        settings: JobSettings | None = None,
        *,
        strategy: Strategy | None = None,
        say: Callable[[str], None] | None = None,
        **options: Any,
    ) -> None:
        if settings is not None and options:
            raise TypeError("give either settings or options, not both")
        self.spec = spec
        self.out_dir = Path(out_dir)
        self.settings = settings or JobSettings.resolve(spec, **options)
        self.strategy = strategy or strategy_for(spec, self.settings)
        self.started: float | None = None  # `run`'s start: the time limit is the whole job's
        self._bounds: list | None = None  # the bounds of the first certification (`certify`)
        self.say = say
        self.seconds: dict[str, float] = {}

    def run(self) -> JobResult:
        """Take the output directory, solve, certify, then write the plan, the certificate and
        the report. The plan files come after the certificate's samples, so a ``--resume``
        refused for a changed spec leaves a finished run's files alone."""
        self.strategy.check()
        self.started = time.monotonic()
        taken = self.take_out_dir()
        try:
            with self._timed("solve"):  # --resume: the solve recorded in the directory, when it is this job's
                reuse_or_solve(self.strategy, self.out_dir, self.say)
            design = self.settings.design.replace("-", " ")
            self._say(f"certifying the plan: bounds, then a sample of {self.strategy.samples_name} plans ({design})")
            with self._timed("certify"):
                outcome = self.certify()
                adopted = next(filter(None, map(self.strategy.adopt, outcome.better)), None)
                if adopted:  # the job's answer is the best plan it measured
                    self._say(f"{adopted}; certifying it")
                    first, outcome = outcome, self.certify(resume=True, first=outcome)
                    _carry_short(first, outcome)
            files = self.write_plan_files()
            result = JobResult(
                self.spec.name,
                self.strategy.kind,
                self.strategy.report,
                outcome,
                files,
                self.seconds,
                adopted or None,
                self.strategy.plan,
            )
            with self._timed("report"):
                self.write_results(result)
            return result
        finally:
            taken.release()

    def take_out_dir(self):
        """The one place where the job takes its output directory, before anything is written
        (`solver.certify.outdir.take_output_dir`: a directory, no link, FIFO or device among the
        files it uses, the lock, then finished samples that neither --resume nor --force covers
        refused, before minutes of solving). Returns the taken directory; `release` frees it."""
        from tasksolve.solver.certify.outdir import take_output_dir

        return take_output_dir(self.out_dir, resume=self.settings.resume, force=self.settings.force)

    def write_plan_files(self) -> dict[str, Path]:
        """plan.yaml and pinning.txt (one taskset line per thread: `pinning.summary_text`), each
        atomically, when the strategy writes them; the paths of every file by name."""
        from tasksolve.specs.exporters.pinning import summary_text
        from tasksolve.specs.files import write_text_atomic

        self.out_dir.mkdir(parents=True, exist_ok=True)
        names = ("certificate.json", "samples.jsonl", *self.strategy.plan_files)
        files = {name: self.out_dir / name for name in names}
        plan = self.strategy.plan
        if "plan.yaml" in files and plan is not None:
            plan.save(files["plan.yaml"], self.spec)  # records where the spec is: `pin` finds it again
            write_text_atomic(files["pinning.txt"], summary_text(self.spec, plan))
        return files

    def certify(self, resume: bool = False, first=None):
        """The certificate of the strategy's plan (`solver.certify.run.certify`), the sampler,
        bound and known plans the strategy's; a sample EVT cannot analyse is a solver failure.
        `resume`: continue the samples of an earlier certification in this job (of another
        plan: the samples do not depend on it).  `first`: that certification's outcome, after an
        adoption: its bounds (they do not depend on the plan) and the plans that beat the old
        answer are reused, no probe runs again, and the budget is what the job's time limit has
        left (`JobSettings.recertify_seconds`), with no floor of its own: no sample forced."""
        from tasksolve.solver.certify.run import certify

        strategy = self.strategy
        started = time.monotonic()  # the budget covers the bounds and the probe too
        clock = time.perf_counter()  # the bounds and the strategy's own probe, timed as "bounds"
        if first is None or self._bounds is None:
            rigorous = strategy.bound()
            self._bounds = ([rigorous] if rigorous is not None else []) + strategy.oracle_bounds()
        bounds = list(self._bounds)
        elapsed = started - (self.started or started)
        settings = self.settings.certify_settings(elapsed=elapsed)
        if first is not None:
            settings = replace(settings, budget_s=self.settings.recertify_seconds(elapsed), probes=0, floor=False)
        else:  # a better binding plan met before sampling is certified in this one's place
            settings = replace(settings, adopts=strategy.kind == "binding")
        if resume:
            settings = replace(settings, resume=True, force=False)
        balanced = self.settings.balanced if self.settings.balanced is not None else strategy.balanced
        if balanced is not None:
            settings = replace(settings, balanced=balanced)
        sampler = strategy.sampler()
        if sampler.probes is not None and first is None:
            settings = replace(settings, probes=sampler.probes)
        known = strategy.known_plans()
        probed = strategy.probe()
        if probed is not None:
            known.append(probed)
        if first is not None and strategy.plan is not None:  # binding plans met the first time, but the plan
            own = tuple(strategy.plan.contexts(self.spec)) if strategy.kind == "binding" else None
            known += [k for k in first.better if k.contexts is not None and k.contexts != own]
        bound_s = time.perf_counter() - clock
        try:
            outcome = certify(
                sampler.spec,
                self.out_dir,
                settings,
                plan=strategy.plan,
                bounds=bounds,
                known=known,
                pipeline=sampler.pipeline,
                started=started,
            )
        except EVTError as exc:
            raise SolverFailed(f"the sample of {strategy.samples_name} plans cannot be analysed: {exc}") from None
        outcome.seconds = {"bounds": bound_s, **(outcome.seconds or {})}
        return outcome

    def write_results(self, result: JobResult) -> None:
        """certificate.json (`JobResult.certificate_dict`) and report.html, each atomically;
        `result.files` names them."""
        from tasksolve.specs.files import write_json_atomic

        files = result.files
        files["samples.jsonl"] = result.outcome.service.path
        certificate = result.certificate_dict()
        write_json_atomic(files["certificate.json"], certificate)
        sections = self.strategy.report_sections()
        if sections is not None:
            files["report.html"] = self.out_dir / "report.html"
            _write_report(files["report.html"], self.spec, self.strategy.plan, certificate, result.outcome, sections)

    def _say(self, text: str) -> None:
        if self.say:
            self.say(text)

    @contextmanager
    def _timed(self, phase: str) -> Iterator[None]:
        clock = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[phase] = time.perf_counter() - clock


def _carry_short(first, outcome) -> None:
    """The steps of the first certification (of the plan the job replaced) that ran short of its
    budget, in front of the final certificate's own (``budget.short``): both count in the job's time."""
    before = (first.certificate.budget or {}).get("short") or []
    final = outcome.certificate.budget
    if before and final is not None:
        final["short"] = [f"first certification, of the replaced plan: {s}" for s in before] + list(final["short"])


def _write_report(path: Path, spec: Spec, plan, certificate: dict[str, Any], outcome, sections: dict) -> None:
    from tasksolve.solver.report.html import write_report
    from tasksolve.solver.report.render import plan_text
    from tasksolve.specs.exporters.pinning import taskset_lines

    sections = dict(sections)
    comparison = sections.pop("comparison")
    write_report(
        path,
        spec,
        plan,
        certificate,
        outcome.analysis,
        outcome.history,
        comparison,
        plan_text(spec, plan),
        taskset_lines(spec, plan),
        **sections,
    )


def run(spec: Spec, out_dir: str | Path, *, say: Callable[[str], None] | None = None, **options: Any) -> JobResult:
    """The main job on `spec` (`Job`), `options` by `JobSettings`'s names."""
    return Job(spec, out_dir, say=say, **options).run()
