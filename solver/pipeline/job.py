"""The `tasksolve pipeline` job as library calls: solve one latency-constrained pipeline problem
with several methods side by side, or sweep it (LATA, DAC'10).

`solve_pipeline` groups one instance of a task graph into threads, stages and replicas with the
chosen methods (LATA Section 3, its comparison systems and the exact CP-SAT model) -- with several
instances of it in the workload, on one block of contexts per instance, the plan repeated on every
block (`solver.pipeline.blocks`; the applications `--app` leaves out are `PipelineResult.left_out`)
--, judges every answer by the one closed-form model of `solver.pipeline.problem` (period = max over groups of
time / replicas, latency = longest path of thread times; LATA Eq. 1-2 for the messages, the
binding closed form's contention for mapped plans), picks the reported plan (CP-SAT's when it
found one, else the best by that model), optionally measures every plan with a cost oracle --
CP-SAT's `search.top_k` best plans too, keeping the best measured one whose measured latency
meets the bound (`remeasure_cpsat`) -- and explains an infeasible latency bound by the minimum
latency CP-SAT can reach.  A measured plan's latency bound is checked on its latency at the
offered load (``oracle.load`` of its maximum rate, `solver.pipeline.compare.Measured`), not on
the saturated latency, which grows with the queues' capacity.  (`solver.pipeline.sweep.sweep_pipeline`
runs the methods over a range of latency bounds or core counts.)

It takes an optional ``progress(text, done, total)`` callback called when a step starts (see
`solver.pipeline.compare.Steps`); they print nothing themselves.  Bad input raises
`PipelineError` (exit 2 in the CLI), a solver failing on a valid input `SolverFailed` (exit 3); a
failing oracle is not fatal: the measurement is left out and said so in ``notes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tasksolve.simulate.registry import KINDS as ORACLE_KINDS
from tasksolve.solver.errors import SolverFailed
from tasksolve.solver.pipeline.compare import METHOD_NAMES, Measured, Measurer, Progress, Steps, compare
from tasksolve.solver.pipeline.evaluation import MethodResult
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem, format_cycles
from tasksolve.specs.oracles import noun

ORACLE_CHOICES = (*ORACLE_KINDS, "none")
EXPLAIN_TIME_LIMIT = 20.0  # seconds CP-SAT may spend finding the minimum latency


def parse_methods(text: str) -> list[str]:
    """``all`` or a comma-separated list of `METHOD_NAMES`, in the order given, without repeats."""
    from tasksolve.specs.errors import did_you_mean

    names = [m.strip().lower() for m in str(text).split(",") if m.strip()]
    if not names:
        raise PipelineError(f"--method: expected one of {', '.join(METHOD_NAMES)}, all (or a comma-separated list)")
    if "all" in names:
        return list(METHOD_NAMES)
    for m in names:
        if m not in METHOD_NAMES:
            raise PipelineError(
                f"--method: unknown method `{m}` (one of {', '.join(METHOD_NAMES)}, all){did_you_mean(m, METHOD_NAMES)}"
            )
    return list(dict.fromkeys(names))


def build_problem(
    spec, app: str | None = None, *, latency_max: str | None = None, cores: int | None = None
) -> PipelineProblem:
    """The pipeline problem of `spec`; `latency_max` None keeps the spec's bound, ``none`` drops it."""
    bound: object = "spec"
    if latency_max is not None:
        bound = None if latency_max.strip().lower() == "none" else latency_max.strip()
    return PipelineProblem.from_spec(spec, app, latency_max=bound, cores=cores)


def instance_note(spec, problem: PipelineProblem) -> str | None:
    """What the plan covers when the workload is more than one instance: every instance of the
    application on its own block (`solver.pipeline.blocks`), and the applications it leaves out."""
    notes = _block_notes(problem) if problem.instances > 1 else []
    left = left_out(spec, problem)
    if left:
        notes.append(f"the plan covers `{problem.app}` only; left out of the workload: {', '.join(left)}")
    return "; ".join(notes) or None


def _block_notes(problem: PipelineProblem) -> list[str]:
    names, level = problem.context_names, problem.block_level
    if 0 <= level < problem.n_levels - 1:  # whole domains: their names (``socket1``)
        names = [".".join(name.split(".")[: level + 1]) for name in names]
        what = f"contexts, whole `{problem.level_names[level]}` domains"
    else:
        what = "contexts"
    blocks = [(problem.instance, problem.block), *problem.copies]
    where = "; ".join(f"#{i}: {_span(list(dict.fromkeys(names[c] for c in block)))}" for i, block in blocks)
    notes = [
        f"{problem.instances} instances of `{problem.app}`, each on its own block of {len(problem.block)} {what} "
        f"({where}): one instance's plan, solved on block #{problem.instance}, repeated on every block; "
        "throughputs count every instance"
    ]
    if problem.unused:
        unused = _span([problem.context_names[c] for c in problem.unused])
        notes.append(
            f"{len(problem.unused)} usable contexts in no block (no split into blocks of one shape uses them): {unused}"
        )
    return notes


def left_out(spec, problem: PipelineProblem) -> list[str]:
    """The workload's applications the plan does not run (``b x2``), none when it covers it."""
    apps = dict.fromkeys(item.app for item in spec.workload if item.app != problem.app)
    return [f"`{a}` x{spec.instance_count(a)}" for a in apps]


def _span(names: list[str]) -> str:
    return ", ".join(names) if len(names) <= 4 else f"{names[0]}, {names[1]}, ... {names[-1]} ({len(names)})"


def choose_method(results: dict[str, MethodResult]) -> str:
    """The method whose plan is reported: CP-SAT when it found a plan, else the best one."""
    if "cpsat" in results and results["cpsat"].status in ("OPTIMAL", "FEASIBLE"):
        return "cpsat"
    return min((r.evaluation.rank(), name) for name, r in results.items())[1]


def check_fixed_plans(problem: PipelineProblem, results: dict[str, MethodResult], no_plan: dict[str, str]) -> None:
    """Raise `PipelineError` when no method has a plan that keeps the fixed replica counts
    (`solver.pipeline.candidates`, "Fixed replicas"), naming each method's reason."""
    if results:
        return
    from tasksolve.solver.pipeline.candidates import fixed_threads

    fixed = ", ".join(f"`{t}` x{n}" for t, n in zip(problem.tasks, problem.fixed_replicas) if n)
    reasons = "; ".join(f"{m}: {why}" for m, why in no_plan.items())
    raise PipelineError(
        f"no plan keeps the replica counts the spec fixes ({fixed}: at least {fixed_threads(problem)} threads "
        f"on {problem.n_contexts} contexts, each count a stage of its own, different counts never in one stage): {reasons}"
    )


def check_critical_path(problem: PipelineProblem) -> None:
    """Raise `PipelineError` when the bound is below the critical path (no plan can meet it)."""
    if problem.latency_max is not None and problem.latency_max < problem.critical_path:
        raise PipelineError(
            f"latency bound {problem.describe_bound()} cannot be met: it is below the critical path of "
            f"{_cycles(problem, problem.critical_path)}, the minimum latency with free communication "
            f"(sequential time {_cycles(problem, problem.sequential)})"
        )


def explain_infeasible(problem: PipelineProblem, *, time_limit: float, workers: int, seed: int) -> None:
    """Raise `PipelineError` naming the bound and the smallest achievable latency, unless CP-SAT
    finds a plan within the bound after all (then the methods merely missed it)."""
    from tasksolve.solver.pipeline import cpsat

    best, lower, status = cpsat.min_latency(
        problem, time_limit=min(time_limit, EXPLAIN_TIME_LIMIT), workers=workers, seed=seed
    )
    if best is not None and best <= problem.latency_max:
        return
    if best is not None and status == "OPTIMAL":
        minimum = f"the minimum achievable latency is {_cycles(problem, best)}"
    elif best is not None:
        minimum = f"the minimum achievable latency lies between {_cycles(problem, lower)} and {_cycles(problem, best)}"
    else:
        minimum = f"no plan beats the critical path of {_cycles(problem, lower)}"
    raise PipelineError(
        f"latency bound {_cycles(problem, problem.latency_max)} cannot be met: {minimum} "
        f"(sequential time {_cycles(problem, problem.sequential)})"
    )


def _cycles(problem: PipelineProblem, ticks) -> str:
    return format_cycles(problem.cycles(ticks), problem.clock)


def oracle_kind(requested: str | None, spec) -> str:
    """A registered oracle's name (`simulate.registry`) or ``none``; default the spec's oracle."""
    kind = (requested or spec.oracle.kind).strip().lower()
    if kind not in ORACLE_CHOICES:
        raise PipelineError(f"--oracle: expected {', '.join(ORACLE_CHOICES)} (got {requested!r})")
    return kind


def make_measurer(
    spec, problem: PipelineProblem, kind: str, *, seed: int, packets: int | None = None, load: float | None = None
) -> Measurer:
    """The one `Measurer` of a solve (``packets`` applies to the simulation only); raises
    `simulate.errors.OracleError` when the oracle is unavailable."""
    overrides = {"packets": packets} if packets is not None and kind == "des" else {}
    return Measurer(spec, problem, kind, seed=seed, load=load, **overrides)


def measure_all(
    measurer: Measurer,
    problem: PipelineProblem,
    results: dict[str, MethodResult],
    kind: str,
    *,
    steps: Steps | None = None,
) -> tuple[dict[str, Measured], list[str]]:
    """Every method's plan measured by `measurer` (oracle `kind`); a failing oracle becomes a note."""
    from tasksolve.simulate.errors import OracleError
    from tasksolve.solver.pipeline.plans import to_plan

    measured: dict[str, Measured] = {}
    notes: list[str] = []
    for name, r in results.items():
        if steps is not None:
            steps.start(f"measuring the {name} plan ({kind})")
        try:
            measured[name] = measurer.measure(to_plan(problem, r.candidate, name))
        except OracleError as exc:
            notes.append(f"{name}: not measured: the {noun(kind)} failed: {exc}")
    return measured, notes


def remeasure_cpsat(
    measurer: Measurer,
    problem: PipelineProblem,
    results: dict[str, MethodResult],
    measured: dict[str, Measured],
    kind: str,
    *,
    steps: Steps | None = None,
) -> list[str]:
    """CP-SAT's next best plans measured too; the best *measured* throughput whose measured
    latency at the offered load (`Measured.latency`, `measured_meets_bound`) meets the bound
    replaces CP-SAT's result in `results` and `measured` (the model's best stays when none meets
    it).  Returns notes."""
    from tasksolve.simulate.errors import OracleError
    from tasksolve.solver.pipeline.evaluation import evaluate
    from tasksolve.solver.pipeline.plans import to_plan

    first = results["cpsat"]
    options = [(first.candidate, measured["cpsat"])]
    for i, cand in enumerate(first.alternatives):
        if steps is not None:
            steps.add(1)
            steps.start(f"measuring CP-SAT's plan {i + 2} of {len(first.alternatives) + 1} ({kind})")
        try:
            options.append((cand, measurer.measure(to_plan(problem, cand, "cpsat"))))
        except OracleError as exc:
            return [f"cpsat: plan {i + 2} not measured: the {noun(kind)} failed: {exc}"]
    meeting = [i for i, (_, m) in enumerate(options) if measured_meets_bound(problem, m) is not False]
    if not meeting:
        return [f"cpsat: none of its {len(options)} best plans meets the bound measured; kept the model's best"]
    best = max(meeting, key=lambda i: (options[i][1].throughput, -i))
    if best == 0:
        return []
    cand, m = options[best]
    first.notes.append(f"plan {best + 1} of the {len(options)} best by the model, chosen as the best measured")
    first.candidate, first.evaluation = cand, evaluate(problem, cand)
    first.claims_feasible = first.evaluation.feasible
    measured["cpsat"] = m
    return [f"cpsat: chose its plan {best + 1} of {len(options)}, the best measured that meets the bound"]


@dataclass
class PipelineResult:
    """The answer of `solve_pipeline`: every method's result, the chosen one and its plan."""

    spec_name: str
    problem: PipelineProblem
    results: dict[str, MethodResult]
    chosen: str
    plan: Any  # specs.Plan of the chosen method
    measured: dict[str, Measured] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    written: Path | None = None
    left_out: list[str] = field(default_factory=list)  # the workload's applications the plan does not run

    @property
    def covers_workload(self) -> bool:
        """Whether the plan runs every instance of the workload (not when ``--app`` chose one of
        several applications)."""
        return not self.left_out

    @property
    def result(self) -> MethodResult:
        return self.results[self.chosen]

    @property
    def meets_bound(self) -> bool:
        return bool(self.result.evaluation.feasible)

    def summary(self) -> str:
        """The chosen plan first (method, model throughput and latency, measured throughput),
        then the other methods and the notes."""
        from tasksolve.specs import display

        lines = []
        for name, result in self.results.items():
            ev, m = result.evaluation, self.measured.get(name)
            measured = "" if m is None else f", measured {display.rate(m.throughput)}"
            over = "" if ev.feasible else " (over the latency bound)"
            lines.append(
                f"{name}: throughput {display.rate(ev.throughput)}, latency {display.seconds(ev.latency_seconds)}"
                f"{measured}{over}"
            )
        chosen = lines.pop(list(self.results).index(self.chosen))
        return "\n".join([f"{self.chosen} plan ({self.result.status}) -- {chosen}", *lines, *self.notes])

    def rows(self) -> list[dict]:
        return [comparison_row(self.problem, name, r, self.measured.get(name)) for name, r in self.results.items()]

    def to_dict(self) -> dict:
        p, result, ev = self.problem, self.result, self.result.evaluation
        bounded = p.latency_max is not None
        return {
            "spec": self.spec_name,
            "app": p.app,
            "contexts": p.n_contexts,
            "instances": p.instances,
            "blocks": [[p.context_names[c] for c in block] for block in (p.block, *(b for _, b in p.copies)) if block],
            "covers_workload": self.covers_workload,
            "left_out": list(self.left_out),
            "sequential_cycles": p.cycles(p.sequential),
            "critical_path_cycles": p.cycles(p.critical_path),
            "latency_max": p.seconds(p.latency_max) if bounded else None,
            "latency_max_cycles": p.cycles(p.latency_max) if bounded else None,
            "method": self.chosen,
            "status": result.status,
            "bound": None
            if result.bound is None
            else {"period_cycles": p.cycles(result.bound), "throughput": result.throughput_bound(p)},
            "gap": result.gap,
            "latency": ev.latency_seconds,
            "throughput": ev.throughput,
            "meets_bound": ev.feasible,
            "plan": self.plan.to_dict(),
            "comparison": self.rows(),
            "trace": self.results["lata"].trace if "lata" in self.results else None,
            "notes": list(self.notes),
            "written": str(self.written) if self.written is not None else None,
        }


def measured_meets_bound(problem: PipelineProblem, measured: Measured | None) -> bool | None:
    """Whether the measured latency at the offered load is within ``latency_max`` (None: no
    bound, or not measured)."""
    if problem.latency_max is None or measured is None:
        return None
    return bool(measured.latency <= problem.seconds(problem.latency_max) * (1.0 + 1e-9))


def comparison_row(problem: PipelineProblem, name: str, result: MethodResult, measured: Measured | None) -> dict:
    ev = result.evaluation
    row = {
        "method": name,
        "status": result.status,
        "latency": ev.latency_seconds,
        "throughput": ev.throughput,
        "latency_cycles": ev.latency_cycles,
        "period_cycles": ev.period_cycles,
        "stage_latency_cycles": problem.cycles(ev.stage_latency),
        "threads": ev.threads,
        "stages": (max(ev.stages) + 1) if ev.stages else 0,
        "meets_bound": ev.feasible,
        "seconds": result.seconds,
        "simulated": measured.to_dict() if measured is not None else None,
        "measured_meets_bound": measured_meets_bound(problem, measured),
    }
    if result.bound is not None:
        row["period_bound_cycles"] = problem.cycles(result.bound)
        row["gap"] = result.gap
    if result.notes:
        row["notes"] = list(result.notes)
    return row


def prepare_out_dir(out_dir: Path | str) -> Path:
    """`out_dir` created if needed; an existing file there is an error (``--out`` is a directory)."""
    path = Path(out_dir)
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(20, "not a directory (--out takes the directory to write into)", str(path))
    path.mkdir(parents=True, exist_ok=True)
    return path


def solve_pipeline(
    spec,
    *,
    app: str | None = None,
    methods: list[str] | str = "all",
    latency_max: str | None = None,
    cores: int | None = None,
    time_limit: float | None = None,
    workers: int = 1,
    seed: int = 0,
    oracle: str | None = None,
    packets: int | None = None,
    out_dir: Path | str | None = None,
    progress: Progress | None = None,
    load: float | None = None,
) -> PipelineResult:
    """Solve the pipeline problem of `spec` with `methods` (module docstring); with `out_dir`, write
    the chosen plan to ``out_dir/plan.yaml``.  Raises `PipelineError` for an unmeetable bound."""
    from tasksolve.solver.pipeline.plans import to_plan

    methods = parse_methods(methods) if isinstance(methods, str) else list(methods)
    kind = oracle_kind(oracle, spec)
    limit = float(time_limit if time_limit is not None else spec.search.time_limit)
    problem = build_problem(spec, app, latency_max=latency_max, cores=cores)
    check_critical_path(problem)
    steps = Steps(progress, len(methods) * (1 if kind == "none" else 2))
    top_k = 1 if kind == "none" else int(spec.search.top_k)
    no_plan: dict[str, str] = {}
    results = compare(
        problem, methods, time_limit=limit, workers=workers, seed=seed, steps=steps, top_k=top_k, no_plan=no_plan
    )
    check_fixed_plans(problem, results, no_plan)
    if "cpsat" in results and results["cpsat"].status == "MODEL_INVALID":
        raise SolverFailed(f"CP-SAT rejected the pipeline model of `{problem.app}` (MODEL_INVALID)")
    if problem.latency_max is not None and (
        ("cpsat" in results and results["cpsat"].status == "INFEASIBLE")
        or not any(r.evaluation.feasible for r in results.values())
    ):
        steps.add(1)
        steps.start(f"finding the minimum latency (CP-SAT, up to {min(limit, EXPLAIN_TIME_LIMIT):g} s)")
        explain_infeasible(problem, time_limit=limit, workers=workers, seed=seed)
    chosen = choose_method(results)
    notes = [n for n in [instance_note(spec, problem)] if n] + [f"{m}: no plan: {why}" for m, why in no_plan.items()]
    measured: dict[str, Measured] = {}
    if kind != "none":
        from tasksolve.simulate.errors import OracleError

        try:
            measurer = make_measurer(spec, problem, kind, seed=seed, packets=packets, load=load)
        except OracleError as exc:
            measurer = None
            notes.append(f"not measured: the {noun(kind)} is unavailable: {exc}")
        if measurer is not None:
            measured, failed = measure_all(measurer, problem, results, kind, steps=steps)
            notes += failed
            if "cpsat" in measured and results["cpsat"].alternatives:
                notes += remeasure_cpsat(measurer, problem, results, measured, kind, steps=steps)
        if measured_meets_bound(problem, measured.get(chosen)) is False:
            m = measured[chosen]
            at = "" if m.load is None else f" at {m.load:.0%} of its maximum rate"
            notes.append(
                f"the {chosen} plan meets the latency bound in the model but not measured ({kind}): "
                f"{m.latency * 1e6:.4g}us{at} > {problem.seconds(problem.latency_max) * 1e6:.4g}us"
            )
    job = PipelineResult(
        spec_name=spec.name,
        problem=problem,
        results=results,
        chosen=chosen,
        plan=to_plan(problem, results[chosen].candidate, chosen),
        measured=measured,
        notes=notes,
        left_out=left_out(spec, problem),
    )
    if out_dir is not None:
        job.written = prepare_out_dir(out_dir) / "plan.yaml"
        job.plan.save(job.written, spec)  # the plan records where its spec is (tasksolve pin)
    return job
