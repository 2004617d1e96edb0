"""Verdicts against the truth: power and safety of the six-verdict rules on specs with known optima.

    nice python bench/verdict_truth.py [--reps 10] [--n 300] [--cases a,b] [--below 0.03,0.06,0.1,0.15]

Cases and samples are `bench/certify_truth.py`'s (`Case`): closed-form specs whose optimum CP-SAT
proves, and six-thread simulated specs whose optimum is the best placement class (every class
simulated once, `solver.certify.truth.ClassTable`).  Each repetition draws `--n` local-optima
samples (disjoint chunks of one pool of restarts, the default design; `--n 300` is where the
default path first decides) and judges, with `solver.certify.verdict.decide` exactly as `certify`
builds the evidence (`solver.certify.assemble.evidence`: the atom and its saturation, else
`evt.analyze`; known plans: the best sample and the best of 10 seeded local-search restarts; no
rigorous bound -- what the simulation has; on the closed form a CP-SAT bound would make every
plan within the target `proven`, trivially):

* the *found* plan -- the sample's best, as `run` would report when it is the answer;
* *deliberately worse* plans -- the optimum times ``1 - d`` for each ``d`` of `--below` (the
  known plans stay those of the sample: the plan is what a worse solver might have returned).

Power: the share of positive verdicts (`proven`, `certified`, `best_found`) among plans within the
5% target of the optimum, per route.  Safety: the positive verdicts among plans more than the
target below it (must be 0).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from certify_truth import Case
from results import write_results
from truth_cases import EXAMPLES, SIMULATED

from tasksolve import evt
from tasksolve.solver.certify import assemble
from tasksolve.solver.certify.verdict import POSITIVE, decide

TARGET = 0.05
MODULES = ["solver/certify/verdict.py", "solver/certify/assemble.py", "evt/atom.py", "solver/certify/designs.py"]


def verdict(values: np.ndarray, plan: float, probed: float | None) -> str:
    atom = evt.top_atom(values)
    analysis, why = None, None
    if atom is None:
        try:
            analysis = evt.analyze(values, gof_bootstrap=200)
        except evt.EVTError as exc:
            why = str(exc)
    best = float(values.max())
    known = [("best sampled plan", best, 0.0)] + ([("probe", probed, 0.0)] if probed is not None else [])
    ev = assemble.evidence(
        analysis, why, atom, values, plan, 0.0, known, minimize=False, target_gap=TARGET, confidence=0.95,
        bounds=[], oracle_kind="des", draws="local-search restarts",
    )  # fmt: skip
    return decide(ev).verdict


def study(name: str, kind: str, args) -> list[dict]:
    begin = time.perf_counter()
    case = Case(name, kind, args.reps * args.n, args.time_limit)
    if case.optimum is None:
        return []
    rows = []
    for rep in range(args.reps):
        values = case.pool[rep * args.n : (rep + 1) * args.n]
        probed = case.probed(rep, 10)
        best = float(values.max())
        plans = [("found", best)] + [(f"-{d:.0%}", case.optimum * (1 - d)) for d in args.below]
        for label, plan in plans:
            short = (case.optimum - plan) / case.optimum
            rows.append(
                {
                    "spec": name,
                    "oracle": kind,
                    "rep": rep,
                    "plan": label,
                    "short": short,
                    "within": short <= TARGET + 1e-9,
                    "verdict": verdict(values, plan, probed),
                }
            )
    print(f"  {name}: {time.perf_counter() - begin:.0f} s", file=sys.stderr, flush=True)
    return rows


def render_markdown(data: dict) -> str:
    rows = data["rows"]
    out = [
        f"Local-optima samples of n = {data['n']}, {data['reps']} repetitions per spec, target 5%, no rigorous "
        "bound (`bench/verdict_truth.py`). Power: positive verdicts among plans within the target of the known "
        "optimum; safety: positive verdicts among plans more than the target below it.",
        "",
        "| oracle | plans | within target | positive (by route) | power | beyond target | positive (must be 0) |",
        "|---|---|---|---|---|---|---|",
    ]
    for oracle in ("analytic", "des"):
        for plan in ["found"] + [f"-{d:.0%}" for d in data["below"]]:
            group = [r for r in rows if r["oracle"] == oracle and r["plan"] == plan]
            if not group:
                continue
            within = [r for r in group if r["within"]]
            beyond = [r for r in group if not r["within"]]
            routes = Counter(r["verdict"] for r in within if r["verdict"] in POSITIVE)
            pos = sum(routes.values())
            wrong = sum(r["verdict"] in POSITIVE for r in beyond)
            power = f"{pos / len(within):.0%}" if within else "-"
            route_text = ", ".join(f"{k} {v}" for k, v in sorted(routes.items())) or "none"
            out.append(f"| {oracle} | {plan} | {len(within)} | {route_text} | {power} | {len(beyond)} | {wrong} |")
    found = [r for r in rows if r["verdict"] == "best_found"]
    if found:
        worst = max(r["short"] for r in found)
        specs = sorted({r["spec"] for r in rows})
        out += [
            "",
            f"`best_found` verdicts: {len(found)}; the largest shortfall of such a plan to the known optimum: "
            f"{max(worst, 0.0):.2%}. Specs: {', '.join(specs)}.",
        ]
    verdicts = Counter((r["oracle"], r["plan"], r["verdict"]) for r in rows)
    out += ["", "All verdicts: " + "; ".join(f"{o} {p} `{v}` {c}" for (o, p, v), c in sorted(verdicts.items()))]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--cases", default=",".join(SIMULATED + EXAMPLES))
    parser.add_argument("--below", default="0.03,0.06,0.1,0.15")
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    args.below = [float(x) for x in args.below.split(",")]
    rows = []
    for name in args.cases.split(","):
        rows += study(name, "des" if name in SIMULATED else "analytic", args)
    data = {"rows": rows, "n": args.n, "reps": args.reps, "below": args.below}
    path = write_results("verdict_truth", data, modules=MODULES)
    print(render_markdown(data))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
