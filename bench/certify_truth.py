"""Certificates against the truth: both sampling designs on 21 specs whose optimum is known.

Cases (`bench/truth_cases.py`): 13 closed-form specs of 12-30 threads whose optimum CP-SAT
proves (status OPTIMAL), and the 8 six-thread ``t2-ipfwd-*-x2`` examples on the simulation,
whose optimum is the best of every placement class, each simulated once.

Samples.  Both designs exactly as the sampling service draws them (`solver.certify.designs`):
plan ``i`` of the uniform stream of seed ``s`` is the random design's sample ``i``; the
local-optima design's sample ``i`` is `Climber` from that plan with seed ``plan_seed(s, i)``.

* Closed form: random samples are evaluated by `BatchModel` in a batch (one stream per
  repetition); local optima come from one pool of `--pool` climbs per spec (`Climber.climb`, the
  closed form's value is the sample), cut into *disjoint* chunks of n, so repetitions are
  independent: ``min(--reps, pool // n)`` of them.
* Simulation: every placement class is simulated once (`solver.certify.truth.ClassTable`) and a
  sample is drawn by look-up -- a random plan is worth its class's value; a restart runs
  `Climber.sample` unchanged with the table as its oracle, so its screened candidates are valued
  by their classes.  The simulation of these specs is deterministic and class-invariant
  (saturated sources, deterministic work), so the look-up sample *equals* the sample the service
  measures with the same seed (tests/certify/test_truth_table.py); repetitions cost look-ups.
  Local optima again come from one pool, cut into disjoint chunks.

Each sample is judged as `certify` judges it (`solver.certify.run`): the best value hit twice or
more is an atom (`evt.atom`: interval ``[best, inf)``, no GPD), otherwise `evt.analyze`
(ASPLOS'12 POT, unchanged); then `solver.certify.verdict.decide` with the best sampled plan as
the plan and no rigorous bound (what the simulation has), alone and with the best of `--probes`
seeded local-search restarts as a known plan (`solver.certify.designs.probe`).  Columns:

* covered -- the interval holds the optimum (relative slack 1e-6); a sample EVT cannot analyse
  counts as not covering; "open" counts the atoms among them, whose interval ``[best, inf)``
  covers whenever the best is not above the optimum;
* draw bound -- the statement every certificate makes, "one more draw beats the best sampled
  value with probability at most ``1 - 0.05^(1/n)``" (`evt.beat_bound`), held: the design's
  probability above the sample's best is at most that (exact for the random design on the
  simulation, from the classes' orbits; otherwise the share of a reference pool above it: 200,000
  random plans, or the local-optima pool itself);
* width, error -- medians of (upper - lower) / optimum over the GPD samples (atoms are open) and of
  (estimate - optimum) / optimum over all analysable samples (an atom's estimate is its best);
* wrong -- `certified` while the best sampled plan is more than the 5% target below the optimum;
* found -- the best sampled plan is the optimum (relative 1e-6).

    nice python bench/certify_truth.py [--reps 10] [--pool 10000] [--sizes 200,1000,5000]
                                       [--cases a,b] [--probes 10] [--workers 2]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tasksolve import evt
from tasksolve.simulate.analytic import BatchModel
from tasksolve.simulate.oracle import make_oracle, plan_seed
from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.solver.certify.designs import PROBES, Climber, probe
from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.certify.service import SamplingService
from tasksolve.solver.certify.truth import ClassTable
from tasksolve.solver.certify.verdict import Evidence, decide

sys.path.insert(0, str(Path(__file__).parent))
from truth_cases import EXAMPLES, SIMULATED, VARIANTS, analytic_spec, proven_optimum

TARGET = 0.05
TOLERANCE = 1e-6  # CP-SAT's plan valued by the closed form; "equal" within 1e-6 (`bounds.PROVEN_GAP`)
STREAM_SEED = 1  # the local-optima pool's stream
REFERENCE = 200_000  # random plans behind the draw bound's check on the closed form


class Case:
    """One spec, its optimum and both designs' samplers."""

    def __init__(self, name: str, kind: str, pool: int, time_limit: float, spec=None) -> None:
        from tasksolve.specs import load_spec

        self.name, self.kind = name, kind
        if spec is None:
            spec = analytic_spec(name) if kind == "analytic" else load_spec(name)
        self.spec = spec
        self.objective = spec.objective
        climber = Climber(spec, self.objective, screen=kind == "des")
        stream = SamplingService(spec, Path(tempfile.gettempdir()) / "unused.jsonl", seed=STREAM_SEED)
        starts = [stream.contexts(i) for i in range(pool)]
        if kind == "analytic":
            found = proven_optimum(spec, time_limit)
            self.optimum = None if found is None else found[0]
            self.model = BatchModel(spec)
            self.oracle = make_oracle(spec, "analytic")
            self.pool = np.array([climber.climb(s, plan_seed(STREAM_SEED, i))[1] for i, s in enumerate(starts)])
            self.random_reference = np.sort(self.random_values(REFERENCE, 999_999))
        else:
            self.table = ClassTable(spec, make_oracle(spec, "des"))
            self.oracle = self.table
            values = self.table.values(self.objective)
            self.optimum = float(values.max())
            order = np.argsort(values)
            self.class_values, self.class_mass = values[order], self.table.orbits[order] / self.table.orbits.sum()
            self.pool = np.array(
                [
                    climber.sample(self.table, s, plan_seed(STREAM_SEED, i))[2].value(self.objective)
                    for i, s in enumerate(starts)
                ]
            )
        self.sorted_pool = np.sort(self.pool)

    def random_values(self, n: int, rep: int) -> np.ndarray:
        plans = uniform_plans(self.spec, n, np.random.default_rng([7, n, rep]))
        if self.kind == "analytic":
            return self.model.evaluate(plans).values(self.objective)
        return np.array([self.table.evaluate_contexts(row).value(self.objective) for row in plans])

    def mass_above(self, design: str, best: float) -> float:
        """The design's probability of a value above `best` (see the module docstring)."""
        edge = best + TOLERANCE * abs(best)
        if design == "random" and self.kind == "des":
            return float(self.class_mass[self.class_values > edge].sum())
        ref = self.random_reference if design == "random" else self.sorted_pool
        return 1.0 - np.searchsorted(ref, edge, side="right") / ref.size

    def probed(self, rep: int, restarts: int) -> float | None:
        if not restarts:
            return None
        found = probe(self.spec, self.oracle, self.objective, 1000 + rep, restarts, screen=self.kind == "des")
        return None if found is None else found[0]


def judge(case: Case, design: str, values: np.ndarray, probed: float | None) -> dict:
    optimum, best = case.optimum, float(values.max())
    slack = TOLERANCE * abs(optimum)
    row = {"found": abs(best - optimum) <= slack, "covered": False, "atom": False, "width": None, "error": None}
    row["draw"] = case.mass_above(design, best) <= evt.beat_bound(values.size, 0.95)
    atom = evt.top_atom(values)
    flags: tuple[str, ...] = ()
    if atom is not None:
        estimate, (lower, upper) = atom.best, atom.interval
        row["atom"] = True
    else:
        try:
            result = evt.analyze(values, gof_bootstrap=0)
        except evt.EVTError:
            return {**row, "wrong": False, "wrong_probe": False, "verdict": "unanalysable"}
        estimate, lower, upper, flags = result.estimate, result.lower, result.upper, result.flags
        row["width"] = (upper - lower) / optimum if math.isfinite(upper) else math.inf
    row["covered"] = bool(lower - slack <= optimum <= upper + slack)
    row["error"] = (estimate - optimum) / optimum if math.isfinite(estimate) else math.inf
    for key, known in (("wrong", []), ("wrong_probe", [] if probed is None else [KnownPlan("probe", probed)])):
        decision = decide(
            Evidence(
                plan_value=best,
                minimize=False,
                target_gap=TARGET,
                n=values.size,
                estimate=estimate,
                lower=lower,
                upper=upper,
                flags=flags,
                known=[KnownPlan("best sampled plan", best)] + known,
                oracle="des",
                top_atom=atom.sentence() if atom else None,
            )
        )
        row[key] = decision.verdict == "certified" and (optimum - best) / optimum > TARGET
        row["verdict"] = decision.verdict
    return row


def summary(rows: list[dict]) -> str:
    def med(xs: list[float], sign: str = "") -> str:
        if not xs:
            return "-"
        value = statistics.median(xs)
        return "inf" if not math.isfinite(value) else f"{value:{sign}.2%}"

    k = len(rows)
    count = lambda key: sum(bool(r[key]) for r in rows)  # noqa: E731
    open_ = sum(r["covered"] and r["atom"] for r in rows)
    return (
        f"{count('covered')}/{k} ({open_} open) | {count('draw')}/{k} | "
        f"{med([r['width'] for r in rows if r['width'] is not None])} | "
        f"{med([r['error'] for r in rows if r['error'] is not None], '+')} | "
        f"{count('wrong')} | {count('wrong_probe')} | {count('found')}/{k} | "
        f"{sum(r['verdict'] == 'certified' for r in rows)}"
    )


def study(name: str, kind: str, args) -> list[str]:
    begin = time.perf_counter()
    case = Case(name, kind, args.pool, args.time_limit)
    if case.optimum is None:
        return [f"| {name} | {kind} | (no proven optimum within {args.time_limit:g} s: skipped) |"]
    lines = []
    for n in args.sizes:
        rows = [
            judge(case, "random", case.random_values(n, rep), case.probed(rep, args.probes)) for rep in range(args.reps)
        ]
        lines.append(f"| {name} | {kind} | random | {n} | {summary(rows)} |")
        chunks = min(args.reps, args.pool // n)
        rows = [
            judge(case, "local-optima", case.pool[k * n : (k + 1) * n], case.probed(k, args.probes))
            for k in range(chunks)
        ]
        if rows:
            lines.append(f"| {name} | {kind} | local-optima | {n} | {summary(rows)} |")
    print(f"  {name}: {time.perf_counter() - begin:.0f} s", file=sys.stderr, flush=True)
    return lines


def _identity(args):
    return args


def _run_chunk(args, jobs: list[tuple[str, str]]) -> list[list[str]]:
    return [study(name, kind, args) for name, kind in jobs]


def main() -> None:
    from tasksolve.simulate.executor import Executor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--pool", type=int, default=10000, help="local optima per spec, cut into disjoint chunks")
    parser.add_argument("--sizes", default="200,1000,5000")
    parser.add_argument("--cases", default=",".join(EXAMPLES + tuple(VARIANTS) + SIMULATED))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--probes", type=int, default=PROBES, help="local-search restarts as a known plan (0: none)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="CP-SAT's limit for a proof (s)")
    args = parser.parse_args()
    args.sizes = [int(x) for x in args.sizes.split(",")]
    jobs = [(name, "des" if name in SIMULATED else "analytic") for name in args.cases.split(",")]
    print(
        "| spec | oracle | design | n | covered (open) | draw bound held | median width | median error |"
        " wrong certified (sample alone) | wrong certified (with probe) | optimum found | certified |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    begin = time.perf_counter()
    done = 0
    with Executor(workers=args.workers, chunk_size=1).map(
        _run_chunk, jobs, init=_identity, init_args=(args,)
    ) as stream:
        for indices, blocks in stream:
            for i, block in zip(indices, blocks):
                done += 1
                print("\n".join(block), flush=True)  # in the order the cases finish
                elapsed = time.perf_counter() - begin
                print(f"done {jobs[i][0]} ({done}/{len(jobs)}, {elapsed:.0f} s)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
