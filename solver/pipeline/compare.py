"""Running the pipeline methods side by side, and measuring their plans with the simulation.

`run_method` runs one method by name; `compare` runs several on one problem (LATA first, so
CP-SAT is hinted with its answer); `Measurer` runs a plan through `simulate.oracle` (the
discrete-event simulation or the analytic model with contention) -- measurement is optional
everywhere.  `Steps` counts the steps of a job for an optional progress callback
``progress(text, done, total)``, called when a step starts; the library is quiet without one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tasksolve.simulate.registry import DEFAULT_KIND
from tasksolve.solver.pipeline import baselines
from tasksolve.solver.pipeline.candidates import NoPlan, fixed_violations
from tasksolve.solver.pipeline.evaluation import MethodResult
from tasksolve.solver.pipeline.lata import lata
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem

METHOD_NAMES = ("cpsat", "lata", "parallel", "list", "greedy", "random", "bipar")

Progress = Callable[[str, int, int], None]


class Steps:
    """The steps of a job, for a progress callback: `start(text)` announces a step with the number
    of steps finished before it and the total known so far (`add` grows it, `skip` passes steps)."""

    def __init__(self, progress: Progress | None = None, total: int = 0) -> None:
        self.progress = progress
        self.total = total
        self.done = 0
        self._open = False

    def add(self, n: int) -> None:
        self.total += n

    def skip(self, n: int) -> None:
        self._close()
        self.done += n

    def start(self, text: str) -> None:
        self._close()
        self._open = True
        if self.progress is not None:
            self.progress(text, self.done, max(self.total, self.done + 1))

    def _close(self) -> None:
        if self._open:
            self.done += 1
            self._open = False


def method_label(name: str, time_limit: float) -> str:
    """What a step running `name` is called (CP-SAT says how long it may take)."""
    return f"cpsat (CP-SAT, up to {time_limit:g} s)" if name == "cpsat" else name


def run_method(
    problem: PipelineProblem,
    name: str,
    *,
    time_limit: float = 30.0,
    workers: int = 2,
    seed: int = 0,
    hint=None,
    top_k: int = 1,
    hints=(),
) -> MethodResult:
    """One method by name (`METHOD_NAMES`); CP-SAT keeps its `top_k` best distinct plans."""
    if name == "lata":
        return lata(problem)
    if name == "cpsat":
        from tasksolve.solver.pipeline import cpsat

        return cpsat.solve(
            problem, time_limit=time_limit, workers=workers, seed=seed, hint=hint, hints=hints, top_k=top_k
        )
    if name == "random":
        return baselines.random_pipeline(problem, seed)
    if name in baselines.METHODS:
        return baselines.METHODS[name](problem)
    raise PipelineError(f"unknown method `{name}` (one of {', '.join(METHOD_NAMES)}, all)")


def compare(
    problem: PipelineProblem,
    methods: list[str],
    *,
    time_limit: float = 30.0,
    workers: int = 2,
    seed: int = 0,
    steps: Steps | None = None,
    label: str = "",
    top_k: int = 1,
    no_plan: dict[str, str] | None = None,
) -> dict[str, MethodResult]:
    """Run `methods`; the heuristics first, so CP-SAT is hinted with the best of their plans
    once `solver.pipeline.cpsat.remap` has improved each one's mapping.  Each method is one of `steps` (``label`` prefixes it).
    A method with no plan that keeps the fixed replica counts (`NoPlan`) is left out of the
    results, its reason in `no_plan` (method -> text) when given; so is a plan breaking them
    (never expected: `fixed_violations` is the guard that no such plan is compared)."""
    order = sorted(methods, key=lambda m: (m == "cpsat", METHOD_NAMES.index(m) if m in METHOD_NAMES else 99))
    results: dict[str, MethodResult] = {}
    for name in order:
        if steps is not None:
            steps.start(f"{label}{method_label(name, time_limit)}")
        hint, hints = None, ()
        if name == "cpsat" and results:
            hint = min(results.values(), key=lambda r: (r.evaluation.rank(), r.method != "lata")).candidate
            hints = [r.candidate for r in results.values()]  # each mapping repaired, the best kept
        try:
            result = run_method(
                problem, name, time_limit=time_limit, workers=workers, seed=seed, hint=hint, top_k=top_k, hints=hints
            )
        except NoPlan as exc:
            (no_plan if no_plan is not None else {})[name] = str(exc)
            continue
        broken = fixed_violations(problem, result.candidate)
        if broken:
            (no_plan if no_plan is not None else {})[name] = f"its plan breaks the fixed replica counts: {broken[0]}"
            continue
        results[name] = result
    return {m: results[m] for m in methods if m in results}


# ------------------------------------------------------------------------------ measurement
def spec_for_problem(spec, problem: PipelineProblem):
    """`spec` with its workload reduced to the instances the problem's plans run (its
    application's `PipelineProblem.instances`: one, or every instance of it); the spec itself
    when it already is."""
    count = problem.instances
    if len(spec.workload) == 1 and spec.workload[0].app == problem.app and spec.workload[0].instances == count:
        return spec
    import yaml

    from tasksolve.specs import dump_spec, load_spec_text

    data = yaml.safe_load(dump_spec(spec))
    data["workload"] = [{"app": problem.app, "instances": count}]
    return load_spec_text(yaml.safe_dump(data, sort_keys=False), file=f"{spec.name} ({problem.app} only)")


@dataclass
class Measured:
    """One plan measured on an oracle: the saturated figures (`throughput`, `latency_mean`,
    `latency_p99`: every queue full, so that latency grows with ``oracle.queue_capacity``) and
    the latency at the offered load `load` x the plan's maximum rate (`loaded_latency_mean`,
    `loaded_latency_p99`, at `rate` packets/s; `simulate.experiments.latency_at_load`), the one a
    latency bound is checked on.  The closed form has no queues: its loaded latency is its
    latency.  None where the oracle cannot offer a load (the command oracle)."""

    throughput: float
    latency_mean: float
    latency_p99: float
    half_width: float
    oracle: str
    seconds: float
    notes: list[str] = field(default_factory=list)
    loaded_latency_mean: float | None = None
    loaded_latency_p99: float | None = None
    load: float | None = None
    rate: float | None = None
    max_rate: float | None = None

    @property
    def latency(self) -> float:
        """The latency a bound is checked on: at the offered load when measured, else saturated."""
        return self.latency_mean if self.loaded_latency_mean is None else self.loaded_latency_mean

    def to_dict(self) -> dict[str, Any]:
        return {
            "oracle": self.oracle,
            "throughput": self.throughput,
            "latency_mean": self.latency_mean,
            "latency_p99": self.latency_p99,
            "half_width": self.half_width,
            "seconds": self.seconds,
            "loaded_latency_mean": self.loaded_latency_mean,
            "loaded_latency_p99": self.loaded_latency_p99,
            "load": self.load,
            "rate": self.rate,
            "max_rate": self.max_rate,
        }


class Measurer:
    """Measures plans of one problem with one oracle kind (``des`` or ``analytic``); with the
    simulation also the latency at `load` (default ``oracle.load``) of the maximum rate, found by
    bisection to `load_tolerance` (relative; default ``oracle.precision``).  With saturated
    sources in the spec the bisection's saturated run is the measurement (same settings and seed
    as the oracle's), so a plan costs the bisection and one run at the load."""

    def __init__(
        self,
        spec,
        problem: PipelineProblem,
        kind: str = DEFAULT_KIND,
        seed: int = 0,
        load: float | None = None,
        load_tolerance: float | None = None,
        **overrides,
    ) -> None:
        from tasksolve.simulate.oracle import make_oracle

        self.kind = kind
        self.seed = seed
        self.spec = spec_for_problem(spec, problem)
        self.oracle = make_oracle(self.spec, kind, **overrides)
        self.overrides = overrides
        self.load = float(self.spec.oracle.load if load is None else load)
        self.load_tolerance = load_tolerance

    def measure(self, plan) -> Measured:
        t0 = time.perf_counter()
        loaded = None
        if self.kind == "des":
            from tasksolve.simulate.experiments import latency_at_load

            loaded = latency_at_load(
                self.spec, plan, self.load, tolerance=self.load_tolerance, seed=self.seed, **self.overrides
            )
        if loaded is not None and self.spec.oracle.arrival.process == "saturated":
            m = loaded.saturated  # the bisection's saturated run is the oracle's run (same settings, same seed)
        else:
            m = self.oracle.evaluate(plan, seed=self.seed)  # oracles without randomness ignore the seed
        out = Measured(
            throughput=float(m.throughput),
            latency_mean=float(m.latency_mean),
            latency_p99=float(m.latency_p99),
            half_width=float(m.half_width),
            oracle=self.kind,
            seconds=0.0,
            notes=list(getattr(m, "notes", [])),
        )
        if loaded is not None:
            out.loaded_latency_mean = float(loaded.measurement.latency_mean)
            out.loaded_latency_p99 = float(loaded.measurement.latency_p99)
            out.load, out.rate, out.max_rate = loaded.load, loaded.rate, loaded.max_rate.rate
        elif self.kind == "analytic":  # no queues: the latency is the same at any load
            out.loaded_latency_mean, out.loaded_latency_p99 = out.latency_mean, out.latency_p99
        out.seconds = time.perf_counter() - t0
        return out
