"""The main job's pipeline strategy: LATA, its comparison systems and CP-SAT, then pipeline samples.

1. **Solve** with `solver.pipeline.job.solve_pipeline`: LATA, its five comparison systems and
   CP-SAT, every plan measured on the oracle (throughput saturated; latency at ``oracle.load`` of
   the plan's maximum rate, on which ``latency_max`` is checked); the chosen plan is CP-SAT's.
2. **Certify** the chosen plan with EVT like a binding, the samples being pipeline plans
   (`solver.certify.pipeline_samples`: random valid plans or local optima of the pipeline closed
   form).  Known plans that can refute the estimate: every measured plan of the comparison within
   the latency bound and the best of `PROBES` local-search restarts measured on the oracle.
   CP-SAT's bound is on its pipeline model, which charges the binding closed form's contention
   but a replicated group's messages at its worst producer-consumer pair and group demands
   rounded up to a thousandth (`solver.pipeline.model`): a pessimistic model, so its bound on
   the period bounds no oracle; it is recorded for information (``applies: false``) and never
   certifies alone.  On the analytic oracle the plan gets a bound that does apply
   (`oracle_bounds`): CP-SAT on the model's *relaxation* (closest replica pairs, demands rounded
   down; `solver.pipeline.bound`), whose dual bound bounds every pipeline plan's throughput on
   that oracle -- the verdict's `proven` route.  Where its argument fails (locks, rounded units,
   message costs rising inward) or CP-SAT proves nothing in time, the solve's notes say why.
3. **Report**: the comparison (plans over the bound marked) and the latency table.

With several instances of the application in the workload, the problem is one instance's on its
block of contexts, and every plan -- the solve's, the samples', the probe's -- is that instance's
plan repeated on every instance's block (`solver.pipeline.blocks`), measured with all instances
running (``self.alone`` keeps them all); the bounds are ``instances`` x one block's, bounds over
those repeated plans (`solver.pipeline.bound`).  A workload of several applications is refused
(`PipelineProblem.from_spec`): ``run`` has no ``--app``, and its plan would leave the others out.

The certificate's objective is the throughput (LATA's: maximise it under the latency bound); a
pipeline spec asking for ``objective: latency`` is refused before anything is written.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.job.strategy import Sampler, Strategy
from tasksolve.solver.pipeline.problem import PipelineError
from tasksolve.specs.objective import Objective
from tasksolve.specs.oracles import noun

if TYPE_CHECKING:
    from tasksolve.solver.certify.bounds import Bound

#: local-search restarts measured on the oracle as a known plan
PROBES = 10


#: CP-SAT's time on the contention-free relaxation on the simulation: it comes out of the certify
#: budget (xeon-lata-dag: 30 s of it gave a bound 50% above the plan, where the latency bound binds;
#: the truth study's specs reach OPTIMAL in 0.3-1 s)
SIMULATION_RELAXATION_S = 2.0


class PipelineStrategy(Strategy):
    kind = "pipeline"
    samples_name = "pipeline"
    probed: tuple[KnownPlan, Any] | None = None  # the probe's known plan and its pipeline plan (`probe`)

    def adopt(self, better: KnownPlan) -> str | None:
        """Certify the local-search probe's plan in the answer's place (once) when it is the
        known plan that beat the answer beyond noise: the only known pipeline plan kept whole."""
        if self.adopted is not None or self.probed is None or better.plan != self.probed[0].plan:
            return None
        self.adopted = self.probed[1]
        throughput = Objective.of("total_throughput")
        self.adoption = (
            f"the plan is the {better.plan} ({throughput.format(better.value)}), met while certifying: it "
            f"beat the {self.report.chosen} plan ({throughput.format(self.report.measured[self.report.chosen].throughput)})"
            " beyond noise"
        )
        return self.adoption

    def check(self) -> None:
        if Objective.of(self.spec.objective).minimize:
            raise PipelineError(
                "`objective: latency` on a pipeline spec: the pipeline methods maximise throughput under "
                "constraints.latency_max (LATA); use objective total_throughput and a latency bound"
            )

    def solve(self, say: Callable[[str], None] | None):
        from tasksolve.solver.pipeline.compare import spec_for_problem
        from tasksolve.solver.pipeline.job import solve_pipeline

        s = self.settings
        self.report = solve_pipeline(
            self.spec,
            methods=list(s.methods),
            time_limit=s.solve_seconds(),
            workers=s.workers,
            seed=s.seed,
            oracle=s.oracle_kind,
            load=s.load,
            progress=(lambda text, done, total: say(text)) if say else None,
        )
        self.alone = spec_for_problem(self.spec, self.report.problem)
        return self.report

    def sampler(self) -> Sampler:
        """Pipeline plans of the solved problem, drawn for the spec of that application's
        instances alone;
        the binding probes are off (`known_plans` measures the pipeline's)."""
        return Sampler(self.alone, self.report.problem, probes=0)

    def bound(self) -> Bound | None:
        """CP-SAT's bound on its pessimistic pipeline model, for information (module docstring)."""
        from tasksolve.solver.certify.bounds import Rigorous

        result = self.report.results.get("cpsat")
        if result is None or result.status in (None, "NOT_RUN", "UNKNOWN", "MODEL_INVALID"):
            return None
        p = self.report.problem
        bound = None if result.bound is None else result.throughput_bound(p)
        objective = result.evaluation.throughput if result.evaluation.feasible else None
        # the model's own oracle: never the analytic one, whose optimum it may understate
        model = "pipeline model"
        return Rigorous(
            result.status, bound, "cpsat (pipeline model)", objective, None, [], applies=False, oracle=model
        )

    def oracle_bounds(self) -> list[Any]:
        """The relaxation's bound on every pipeline plan (module docstring): on the analytic
        oracle with contention, CP-SAT given the search's time limit; on the simulation without
        contention (`solver.pipeline.bound`), at most `SIMULATION_RELAXATION_S` (it is loose where
        the latency bound binds, and the measured walk of `solver.certify.measured_bound` is what
        proves there); none on another oracle."""
        from tasksolve.simulate.des import DesSettings
        from tasksolve.solver.pipeline.bound import closed_form_bound, exact_demands, simulation_bound

        s, job = self.settings, self.report
        # the bound runs inside the certify phase: at most its share of the job's limit
        limit = s.time_limit - s.solve_seconds() or s.time_limit
        problem, options = job.problem, {"time_limit": limit, "workers": s.workers, "seed": s.seed}
        if s.oracle_kind == "analytic":
            exact = exact_demands(self.spec, problem)
            found, why = closed_form_bound(problem, hint=job.result.candidate, exact=exact, **options)
        elif s.oracle_kind == "des":
            options["time_limit"] = min(limit, SIMULATION_RELAXATION_S)
            found, why = simulation_bound(
                problem, DesSettings.from_spec(self.alone), hint=job.result.candidate, **options
            )
        else:
            return []
        if found is None:
            job.notes.append(f"no bound over pipeline plans on the {noun(s.oracle_kind)}: {why}")
            return []
        return [found]

    def known_plans(self) -> list[KnownPlan]:
        """Every plan of the comparison measured on the oracle that is in the samples' space --
        within the latency bound on the closed form, as every sample is (label, throughput); a
        plan over the bound (e.g. Parallel's) is faster and must not refute an estimate of the
        bounded optimum."""
        job = self.report
        return [
            KnownPlan(f"{name} plan", float(m.throughput))
            for name, m in job.measured.items()
            if job.results[name].evaluation.feasible
        ]

    def probe(self) -> KnownPlan | None:
        """The best of `PROBES` local optima of the pipeline closed form, measured (once a job:
        a second certification reuses it)."""
        if self.probed is None:
            best = probe(self.alone, self.report.problem, self.settings.oracle_kind, self.settings.seed)
            if best is not None:
                self.probed = (KnownPlan(f"best of {PROBES} local-search restarts", best[0]), best[1])
        return None if self.probed is None else self.probed[0]

    def report_sections(self) -> dict[str, Any]:
        return {"comparison": comparison_rows(self.report), "methods_html": latency_table(self.report)}


def probe(spec, problem, oracle_kind: str, seed: int, restarts: int = PROBES) -> tuple[float, Any] | None:
    """The best throughput of `restarts` local optima (seeded random starts) on the oracle, and
    that local optimum's plan."""
    import numpy as np

    from tasksolve.simulate.oracle import make_oracle, plan_seed
    from tasksolve.solver.pipeline.local_search import climb
    from tasksolve.solver.pipeline.plans import to_plan
    from tasksolve.solver.pipeline.sampling import random_candidate

    oracle = make_oracle(spec, oracle_kind)
    best = None
    for i in range(restarts):
        try:
            start = random_candidate(problem, np.random.default_rng([seed, 0x70726F6265, i]))
            cand, _, _ = climb(problem, start)
            plan = to_plan(problem, cand, "probe")
            value = float(oracle.evaluate(plan, seed=plan_seed(seed + 1, i)).throughput)
        except Exception:  # the probe is evidence, not a must
            continue
        if best is None or value > best[0]:
            best = (value, plan)
    return best


def comparison_rows(job) -> list[dict[str, Any]]:
    """The comparison in the report's form (`solver.report.html`: method, predicted, simulated,
    half_width, loss against the best measured plan within the latency bound); a plan over the
    bound on the closed form is marked so and has no loss."""
    throughput = Objective.of("total_throughput")
    rows = []
    for name, result in job.results.items():
        m = job.measured.get(name)
        label = (
            name + (" (chosen)" if name == job.chosen else "") + ("" if result.evaluation.feasible else " (over L0)")
        )
        rows.append(
            {
                "method": label,
                "predicted": result.evaluation.throughput,
                "simulated": None if m is None else m.throughput,
                "half_width": None if m is None else m.half_width,
                "feasible": result.evaluation.feasible,
            }
        )
    best = max((r["simulated"] for r in rows if r["simulated"] is not None and r["feasible"]), default=None)
    for r in rows:
        r["loss"] = throughput.loss(r["simulated"], best) if r["feasible"] else None
    return rows


def latency_table(job) -> str:
    """The latencies of every plan (HTML): the model's, the simulated saturated one and the one at
    the offered load, on which the bound is checked."""
    from tasksolve.solver.pipeline.job import measured_meets_bound
    from tasksolve.specs import display

    p = job.problem
    bound = display.seconds(p.seconds(p.latency_max)) if p.latency_max is not None else "none"
    rows = ""
    for name, result in job.results.items():
        m = job.measured.get(name)
        load = "-" if m is None or m.load is None else f"{m.load:.0%}"
        meets = measured_meets_bound(p, m)
        cells = [
            name,
            display.seconds(result.evaluation.latency_seconds),
            "-" if m is None else display.seconds(m.latency_mean),
            "-" if m is None or m.loaded_latency_mean is None else display.seconds(m.loaded_latency_mean),
            load,
            "-" if meets is None else ("yes" if meets else "no"),
        ]
        rows += "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>"
    return (
        f"<h3>Latency (bound {html.escape(bound)})</h3><p>Measured latency at the offered load (a share of each "
        "plan's maximum rate, found by bisection) is what the bound is checked on; with saturated sources every "
        "queue is full and the latency grows with the queues' capacity.</p><table><tr><th>method</th><th>model</th>"
        "<th>saturated</th><th>at load</th><th>load</th><th>within bound</th></tr>" + rows + "</table>"
    )
