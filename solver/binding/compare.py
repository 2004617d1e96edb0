"""`tasksolve solve`: the binding methods side by side, each re-measured on the oracle.

Methods (docs/design.md, "Methods and their sources"):

* ``random`` -- the best predicted of an iid uniform sample (ASPLOS'12 Step 1), and the naive
  baseline: the average and the worst of a few random plans measured on the oracle;
* ``balanced`` -- the Linux/Solaris-like aim (equal thread counts per domain at every level):
  average and worst of a few balanced plans measured on the oracle;
* ``compact``, ``compact-cores``, ``scatter``, ``distrib``, ``os`` -- the pinning policies people
  use (likwid-pin, OpenMP's close, hwloc-distrib, the OS scheduler unpinned), one plan each
  (`solver.binding.policies`); the report says the answer's gain over the best of them;
* ``tsbsched`` / ``blackbox`` -- profile with the oracle, predict every placement class (a random
  sample when there are too many, `solver.predictors.candidates`), measure the predicted top N
  (the papers' N: 10 and 5), keep the best measured (selection phase); the top 1 is reported
  too, and ``details.predictors[method].selection_curve`` holds the best measured among the
  first n;
* ``cpsat`` -- the closed form solved exactly, hinted with the best random plan improved by local
  search; the K best distinct plans are measured on the oracle.  For total throughput the bound
  is the tighter of CP-SAT's and the configuration LP's.  A plan CP-SAT's steps took from
  elsewhere (the local search, where the model was too large or ended below it) is labelled with
  that step, never ``cpsat``.

**The answer** is the best measured plan of the whole comparison (`_Comparison.answer`): CP-SAT's
best measured plan unless another row's plan beats it beyond both half-widths
(`solver.certify.verdict.beats`; ties go to the model's rank), labelled with the method that
produced it.  Where CP-SAT produced no plan (its model refused and no local-search plan), it has
no row, no bound and no credit, and the other rows' best measured plan answers; where no method
produced one, the spec's placement and latency checks (`specs.feasibility`) name the constraints
no plan can meet (`Infeasible`), or else each method's failure is said (`SolverFailed`).

Every figure in the comparison is measured with the same oracle and the same seeds, so rows
can be compared; `predicted` is the closed form's value for the same plan. Figures are in the
objective's natural orientation (`specs.objective`); the result is a typed
`solver.binding.report.SolveReport`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tasksolve.simulate.analytic import BatchModel
from tasksolve.simulate.measurement import Measurement
from tasksolve.simulate.oracle import make_oracle
from tasksolve.simulate.registry import DEFAULT_KIND
from tasksolve.solver.binding import policies
from tasksolve.solver.binding.conflicts import explain_infeasible
from tasksolve.solver.binding.cpsat import solve_binding
from tasksolve.solver.binding.noisy import UNPINNED, Finalist, race_finalists, stochastic, with_figure
from tasksolve.solver.binding.policies import POLICIES
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.binding.report import CpsatDetails, PredictorDetails, Row, SolveDetails, SolveReport, half_width
from tasksolve.solver.binding.samplers import SamplerError, balanced_plans, uniform_plans
from tasksolve.solver.certify.verdict import beats
from tasksolve.solver.errors import Infeasible, SolverFailed
from tasksolve.specs import Plan, Spec, display
from tasksolve.specs.objective import Objective
from tasksolve.specs.oracles import noun

METHODS = ("cpsat", "blackbox", "tsbsched", "random", "balanced", *POLICIES)
SAMPLE_SHARE = 0.1  # at most this share of the time limit goes to the random sample
PILOT = 100  # plans drawn and valued to time the sample
MIN_SAMPLE = 20  # fewer affordable plans than this: no sample
MIN_SAMPLE_SECONDS = 2.0  # the sample's budget is never below this (short limits keep their sample)
RESERVE_SHARE = 0.03  # of the time limit, kept for measuring CP-SAT's plans and the report
MIN_CPSAT_SHARE = 0.1  # CP-SAT's steps get at least this share of the limit, however late they start
BASELINE_SHARE = 0.25  # the naive and balanced plans past the first are measured until this share


@dataclass
class _Comparison:
    """What every method of one `solve` shares: the spec, the oracle, the random sample, the rows
    and details gathered so far (one method per method of this class)."""

    spec: Spec
    oracle_kind: str
    seed: int
    workers: int
    say: Callable[[str], None]
    count: Callable[[str], None]
    rows: list[Row] = field(default_factory=list)
    details: SolveDetails = field(default_factory=SolveDetails)
    finalists: list[tuple[str, list[int]]] = field(default_factory=list)  # raced on a stochastic oracle
    measured: dict[tuple[int, ...], Measurement] = field(default_factory=dict)  # every plan measured
    labels: dict[tuple[int, ...], str] = field(default_factory=dict)  # the method that first measured it
    no_sample: str = ""  # why the random sample has no plan (constraints too tight for rejection sampling)
    deadline: float | None = None  # perf_counter: the baselines' plans past their first stop here (`measure`)

    def __post_init__(self) -> None:
        self.objective = self.spec.objective
        self.kind = Objective.of(self.objective)
        self.batch = BatchModel(self.spec)
        self.oracle = make_oracle(self.spec, self.oracle_kind)

    def predicted(self, contexts: list[int]) -> float:
        """The closed form's value of one plan (natural orientation)."""
        return float(self.kind.score(self.batch.evaluate(np.array([contexts])).values(self.objective)[0]))

    def natural(self, measurement: Measurement) -> float:
        """A measured plan's value (natural orientation, `specs.objective`)."""
        return float(self.kind.score(measurement.value(self.objective)))

    def row(self, method: str, contexts: list[int], measurement: Measurement, note: str = "") -> Row:
        """The row of one measured plan."""
        self.measured.setdefault(tuple(contexts), measurement)
        return Row(
            method,
            self.predicted(contexts),
            self.natural(measurement),
            half_width(measurement, self.kind),
            contexts,
            note,
        )

    def measure(self, plans: list[list[int]], label: str | list[str], least: int | None = None) -> list[Measurement]:
        """Measure `plans` on the oracle; each is remembered with the method that produced it
        (`label`, or one label per plan).  With `least`, once the `deadline` passes no plan after
        the first `least` is measured: the measurements of a prefix of `plans` (a server's
        simulation takes seconds a plan, and the baselines' ten plans took a minute)."""
        labels = [label] * len(plans) if isinstance(label, str) else label
        if least is not None and self.deadline is not None:
            out, step = self.measure(plans[:least], labels[:least]), max(1, self.workers)
            while len(out) < len(plans) and time.perf_counter() < self.deadline:
                out += self.measure(plans[len(out) : len(out) + step], labels[len(out) : len(out) + step])
            return out
        self.say(f"measuring {len(plans)} {'/'.join(dict.fromkeys(labels))} plan(s) on the {noun(self.oracle_kind)}")
        results = self.oracle.evaluate_many(
            [Plan.from_contexts(self.spec, c, method=m) for c, m in zip(plans, labels)],
            seed=self.seed,
            workers=self.workers,
        )
        for contexts, measurement, method in zip(plans, results, labels):
            self.measured.setdefault(tuple(contexts), measurement)
            self.labels.setdefault(tuple(contexts), method)
        return results

    def sample(self, samples: int, methods: list[str], budget: float | None = None) -> list[str]:
        """Draw the uniform sample (the random method's and CP-SAT's hint); the methods that can run.

        With a `budget` (seconds), a pilot of `PILOT` plans drawn and valued with another seed
        times one plan, and the sample is cut to what the budget allows (said so), or skipped
        when not even `MIN_SAMPLE` plans fit; the policies alone need none."""
        if all(m in POLICIES for m in methods):
            self.plans, self.values = np.empty((0, len(self.spec.threads)), dtype=np.intp), np.empty(0)
            return methods
        try:
            if budget is not None:
                samples, why = self._affordable(samples, budget, methods)
                if samples == 0:
                    self.say(why)
                    self.plans = np.empty((0, len(self.spec.threads)), dtype=np.intp)
                    self.values = np.empty(0)
                    self.details.samples = 0
                    return ["cpsat"]
            self.say(f"sampling {samples} random plans{' ' + why if budget is not None and why else ''}")
            self.plans = uniform_plans(self.spec, samples, self.seed)
        except SamplerError as exc:
            if "cpsat" not in methods:
                raise Infeasible(f"{exc}; try --method cpsat") from None
            self.say(f"no random sample ({exc}); CP-SAT runs without a hint, sampling methods are skipped")
            self.no_sample = str(exc)
            methods = ["cpsat", *(m for m in methods if m in POLICIES)]
            self.plans = np.empty((0, len(self.spec.threads)), dtype=np.intp)
        self.values = self.batch.evaluate(self.plans).values(self.objective) if len(self.plans) else np.empty(0)
        self.details.samples = int(len(self.plans))
        return methods

    def _affordable(self, samples: int, budget: float, methods: list[str]) -> tuple[int, str]:
        """How many of `samples` plans fit in `budget` seconds (a timed pilot) and why, when fewer;
        0 to skip the sample (the random and sampling methods then do not run)."""
        pilot = min(samples, PILOT)
        start = time.perf_counter()
        self.batch.evaluate(uniform_plans(self.spec, pilot, self.seed + 1)).values(self.objective)
        per_plan = (time.perf_counter() - start) / pilot
        # half the budget left by the estimate: a loaded machine draws slower than the pilot did
        affordable = min(samples, int(max(0.0, budget - per_plan * pilot) / (2 * per_plan)))
        if affordable >= samples:
            return samples, ""
        cost = f"{per_plan * 1e3:.2g} ms a plan, {budget:.1f} s of the time limit for the sample"
        if "cpsat" not in methods:  # the sample is the answer's source: at least one plan
            affordable = max(1, affordable)
        if affordable >= MIN_SAMPLE or "cpsat" not in methods:
            return affordable, f"(of the {samples} asked for: {cost})"
        return 0, (
            f"no random sample ({cost}: fewer than {MIN_SAMPLE} plans fit); CP-SAT runs without "
            "its hint, the sampling methods are skipped"
        )

    def random(self, baseline_plans: int) -> None:
        """The best predicted plan of the sample, and the naive baseline (first plans of the sample)."""
        sample, kind = self.plans, self.kind
        best_index = int(np.argmax(self.values))
        naive = [list(map(int, r)) for r in sample[:baseline_plans]]
        chosen = [list(map(int, sample[best_index]))] + naive
        results = self.measure(chosen, "random", least=2)
        naive = naive[: len(results) - 1]
        self.rows.append(self.row(f"random best of {len(sample)}", chosen[0], results[0]))
        self.finalists.append(("random best", chosen[0]))
        values = [self.natural(m) for m in results[1:]]
        worst = _worst(values, kind)
        self.rows.append(
            Row(
                f"naive avg of {len(values)}",
                float(np.mean(kind.score(self.values[: len(naive)]))),
                float(np.mean(values)),
                None,
                note="unaware scheduler",
            )
        )
        self.rows.append(self.row(f"naive worst of {len(values)}", naive[worst], results[1 + worst]))

    def balanced(self, baseline_plans: int) -> None:
        """Average and worst of a few balanced plans."""
        try:
            plans = [list(map(int, r)) for r in balanced_plans(self.spec, baseline_plans, self.seed)]
        except SamplerError as exc:
            self.say(f"balanced: {exc}")
            return
        results = self.measure(plans, "balanced", least=1)
        plans = plans[: len(results)]
        values = [self.natural(m) for m in results]
        preds = self.kind.score(self.batch.evaluate(np.array(plans)).values(self.objective))
        worst = _worst(values, self.kind)
        best = max(range(len(values)), key=lambda i: self.kind.score(values[i]))
        self.rows.append(self.row(f"balanced best of {len(plans)}", plans[best], results[best]))
        self.rows.append(Row(f"balanced avg of {len(plans)}", float(np.mean(preds)), float(np.mean(values)), None))
        self.rows.append(self.row(f"balanced worst of {len(plans)}", plans[worst], results[worst]))

    def predictor(self, method: str, samples: int, top_n: int | None, tables):
        """TSBSched or BlackBox: profile (one set of tables serves both), predict, select."""
        from tasksolve.solver.predictors.candidates import Candidates
        from tasksolve.solver.predictors.selection import run_predictor
        from tasksolve.solver.predictors.tables import ProfileTables

        def factory(s):
            return make_oracle(s, self.oracle_kind)

        tables = tables or ProfileTables(
            self.spec, factory, seed=self.seed, oracle_kind=self.oracle_kind, workers=self.workers, say=self.count
        )
        candidates = Candidates.of(self.spec, samples=samples, seed=self.seed)
        self.say(f"{method}: profiling with the {noun(self.oracle_kind)} and predicting {candidates.label}")
        result = run_predictor(
            self.spec,
            method,
            factory,
            candidates,
            top_n=top_n,
            seed=self.seed,
            objective=self.objective,
            oracle_kind=self.oracle_kind,
            workers=self.workers,
            tables=tables,
            say=self.count,
        )
        self.measured.setdefault(tuple(result.best_contexts), result.best_measured)
        self.labels.setdefault(tuple(result.best_contexts), method)
        n, top1 = len(result.measured), result.measured[0]
        self.finalists += [(f"{method} top {n}", result.best_contexts), (f"{method} top 1", result.ranked[0][1])]
        self.rows.append(self.row(f"{method} top 1", result.ranked[0][1], top1, "no selection phase"))
        self.rows.append(
            self.row(
                f"{method} top {n}",
                result.best_contexts,
                result.best_measured,
                f"{result.experiments} profiling runs",
            )
        )
        self.details.predictors[method] = PredictorDetails(
            experiments=result.experiments,
            table_size=result.table_size,
            candidates=result.candidates,
            predicted_plans=result.predicted_plans,
            predict_seconds=result.predict_seconds,
            profiling_seconds=tables.profiling_seconds,
            selection_size=n,
            selection_curve=[float(self.kind.score(v)) for v in result.selection_curve(self.objective)],
        )
        return result, tables

    def cpsat(self, problem: BindingProblem, top_k: int, time_limit: float, deterministic: bool):
        """CP-SAT's K best plans of the closed form, measured; the best measured one first."""
        self.say(f"cpsat: solving the closed form (limit {display.seconds(time_limit, 3)}, {self.workers} workers)")
        hint = list(map(int, self.plans[int(np.argmax(self.values))])) if len(self.plans) else None
        result = solve_binding(
            problem,
            objective=self.objective,
            top_k=top_k,
            time_limit=time_limit,
            workers=self.workers,
            seed=self.seed,
            hint=hint,
            deterministic_time=time_limit if deterministic else None,
        )
        if result.status == "INFEASIBLE":
            raise Infeasible(explain_infeasible(problem))
        self.details.cpsat = _cpsat_details(result, [])
        if not result.solutions:  # no plan: no row and no credit; the other methods' plans answer
            why = f"CP-SAT found no plan within {time_limit:g}s (status {result.status})"
            if not self.measured:
                sampled = f"; the random sample: {self.no_sample}" if self.no_sample else ""
                _no_plan(self.spec, f"no method found a plan: {why}{sampled}")
            self.say(why)
            return result, None
        plans = [s.contexts for s in result.solutions]
        measured = self.measure(plans, "cpsat")
        for solution in result.solutions:  # a plan CP-SAT's steps took from elsewhere says so
            if solution.found_by != "cpsat" and self.labels.get(tuple(solution.contexts)) == "cpsat":
                self.labels[tuple(solution.contexts)] = solution.found_by.replace(" ", "-")
        for rank, (plan, measurement) in enumerate(zip(plans, measured)):
            self.measured.setdefault(tuple(plan), measurement)
            self.finalists.append((f"cpsat rank {rank + 1}", plan))
        k = max(range(len(plans)), key=lambda i: measured[i].value(self.objective))
        found_by = result.solutions[k].found_by
        label = "cpsat" if found_by == "cpsat" else found_by.replace(" ", "-")
        row = self.row(
            f"{label} top {len(plans)}",
            plans[k],
            measured[k],
            f"{result.status}, model rank {k + 1}" + ("" if found_by == "cpsat" else f", found by the {found_by}"),
        )
        self.rows.insert(0, row)
        self.details.cpsat = _cpsat_details(result, [self.natural(m) for m in measured])
        return result, (label, plans[k], measured[k])

    def answer(self, model: tuple[str, list[int], Measurement] | None) -> tuple[str, list[int], Measurement]:
        """The best measured plan of the comparison (module docstring): the `model`'s answer
        (CP-SAT's best measured plan) unless a row's plan beats it beyond both half-widths."""
        plans = [(key, self.natural(m), half_width(m, self.kind) or 0.0) for key, m in self.measured.items()]
        if not plans:  # no method produced a plan (the policies alone, each infeasible)
            notes = [f"{r.method}: {r.note}" for r in self.rows if r.note and r.simulated is None]
            _no_plan(self.spec, "no method produced a plan" + (f" ({'; '.join(notes)})" if notes else ""))
        if model is None:
            key = max(plans, key=lambda p: self.kind.score(p[1]))[0]
            return self.labels[key].split(" ")[0], list(key), self.measured[key]
        label, contexts, measurement = model
        value, spread = self.natural(measurement), half_width(measurement, self.kind) or 0.0
        better = [p for p in plans if beats(p[1], p[2], value, spread, self.kind.minimize)]
        if not better:
            return model
        key, found, _ = max(better, key=lambda p: self.kind.score(p[1]))
        method = self.labels[key].split(" ")[0]
        self.say(
            f"the answer is a {method} plan: it measured {self.kind.format(found)}, beyond the noise of "
            f"{label}'s {self.kind.format(value)}"
        )
        return method, list(key), self.measured[key]


def _raced(run: _Comparison, zone: float, answer: tuple[str, list[int], Measurement]):
    """Race the finalists and the unpinned run (`solver.binding.noisy`); the verdict, the answer
    (the race's best pinned plan, its figure the race's) and the unpinned row added."""
    finalists = [Finalist(label, list(c), run.oracle.placement(list(c))) for label, c in run.finalists]
    verdict = race_finalists(run.oracle, finalists, run.objective, zone=zone, seed=run.seed, say=run.say)
    run.rows.append(
        Row(
            UNPINNED,
            None,
            verdict.baseline_mean,
            verdict.baseline_half_width,
            None,
            "TASKSOLVE_PINNING=none, raced with the finalists",
        )
    )
    contexts = verdict.best_contexts or answer[1]
    measurement = run.measured.get(tuple(contexts)) or answer[2]
    measurement = with_figure(measurement, run.objective, verdict.mean, verdict.half_width)
    return verdict, (verdict.best.split(" ")[0], contexts, measurement)


def _no_plan(spec: Spec, why: str) -> None:
    """No method produced a plan: `Infeasible` when the spec's placement or latency checks
    (`specs.feasibility`, exact for placement) show that none exists, else `SolverFailed`."""
    from tasksolve.specs.feasibility import check_feasibility

    problems = check_feasibility(spec)
    if problems:
        raise Infeasible("; ".join(p.message for p in problems))
    raise SolverFailed(why)


def _worst(values: list[float], objective: Objective) -> int:
    """The index of the worst of natural `values` (the first of equals)."""
    return min(range(len(values)), key=lambda i: objective.score(values[i]))


def _cpsat_details(result, measured: list[float]) -> CpsatDetails:
    """CP-SAT's steps, bound, local search and configuration LP; `measured` the natural values
    of its K best plans (no plan: no bound source, no finder)."""
    best = result.solutions[0] if result.solutions else None
    heuristic, configuration = result.local_search, result.configuration_bound
    return CpsatDetails(
        status=result.status,
        wall_time=result.wall_time,
        symmetry_constraints=result.symmetry_constraints,
        bound_source=None if best is None else best.bound_source,
        found_by=None if best is None else best.found_by,
        local_search=None
        if heuristic is None
        else {"value": heuristic.value, "rounds": heuristic.rounds, "wall_time": heuristic.wall_time},
        configuration_bound=None
        if configuration is None
        else {
            "value": configuration.value,
            "level": configuration.level,
            "configurations": configuration.configurations,
            "columns": configuration.columns,
            "converged": configuration.converged,
            "wall_time": configuration.wall_time,
        },
        notes=list(result.notes),
        steps=[step.to_dict() for step in result.steps],
        failed_steps=[step.step for step in result.failed_steps],
        top_k=[{"predicted": s.objective, "measured": m} for s, m in zip(result.solutions, measured)],
    )


def solve(
    spec: Spec,
    methods: list[str],
    *,
    oracle_kind: str = DEFAULT_KIND,
    top_k: int = 5,
    time_limit: float = 30.0,
    workers: int = 2,
    seed: int = 0,
    samples: int = 5000,
    baseline_plans: int = 10,
    top_n: int | None = None,
    deterministic: bool = False,
    zone: float = 0.02,
    progress: Callable[[str], None] | None = None,
    started: float | None = None,
) -> SolveReport:
    """Run `methods` on a binding spec; the answer is the best measured plan (module docstring):
    CP-SAT's unless another row beats it beyond the noise; without CP-SAT, TSBSched's or
    BlackBox's best measured when either ran, else any row's.  On a stochastic oracle
    (`solver.binding.noisy`) the finalists and the unpinned run are raced with the indifference
    `zone` and the race's best pinned plan is the answer.

    With CP-SAT, `time_limit` bounds the whole solve from `started` (a `time.perf_counter()`
    reading, by default now; the command passes its start, so loading the spec counts): the
    random sample gets at most `SAMPLE_SHARE` of it (`_Comparison.sample`), CP-SAT's steps the
    time left less `RESERVE_SHARE` for the measurements and the report (`deterministic`: the
    whole sample and the whole limit in deterministic time, so runs repeat).  The predictors'
    profiling and the oracle's measurements (a simulation's) are not bounded by it."""
    started = time.perf_counter() if started is None else started
    say = progress or (lambda _: None)
    count = getattr(progress, "update", None) or say  # counts inside a phase (Phases.update)
    run = _Comparison(spec, oracle_kind, seed, workers, say, count)
    timed = "cpsat" in methods and not deterministic  # a sample cut by the clock would not repeat
    run.deadline = started + BASELINE_SHARE * time_limit if timed else None
    methods = run.sample(samples, methods, max(MIN_SAMPLE_SECONDS, SAMPLE_SHARE * time_limit) if timed else None)
    if "random" in methods:
        run.random(baseline_plans)
    if "balanced" in methods:
        run.balanced(baseline_plans)
    policies.measure(run, [m for m in methods if m in POLICIES])
    answer: tuple[str, list[int], Measurement] | None = None
    tables = None
    for method in ("tsbsched", "blackbox"):
        if method in methods:
            result, tables = run.predictor(method, samples, top_n, tables)
            if answer is None or result.best_measured.value(run.objective) > answer[2].value(run.objective):
                answer = (method, result.best_contexts, result.best_measured)
    status, value, bound, gap = "NOT_RUN", None, None, None
    if "cpsat" in methods:
        left = time_limit - (time.perf_counter() - started) - RESERVE_SHARE * time_limit
        limit = time_limit if deterministic else max(MIN_CPSAT_SHARE * time_limit, left)
        result, model = run.cpsat(BindingProblem(spec, batch_model=run.batch), top_k, limit, deterministic)
        status = result.status
        if model is not None:
            best = result.solutions[0]
            value, bound, gap = best.objective, best.bound, best.gap
        answer = run.answer(model)
    elif answer is None:
        answer = run.answer(None)
    noise = None
    if run.finalists and stochastic(run.oracle):
        noise, answer = _raced(run, zone, answer)
    method, contexts, measurement = answer
    return SolveReport(
        noise=noise,
        failed_steps=list(run.details.cpsat.failed_steps) if run.details.cpsat else [],
        method=method,
        objective=run.objective,
        status=status,
        model_objective=value,
        bound=bound,
        gap=gap,
        plan=Plan.from_contexts(spec, contexts, method=method),
        predicted=run.predicted(contexts),
        measured=measurement,
        comparison=run.rows,
        details=run.details,
        policy_gain=policies.gain_over_policies(spec, run.rows, measurement, run.kind, noise.ties if noise else ()),
    )
