"""Verdicts against the truth: power and safety of the six-verdict rules on specs with known optima.

    nice python bench/verdict_truth.py [--reps 10] [--n 200] [--groups analytic,des,contended]
        [--below 0.03,0.06,0.1,0.15] [--parts DIR]      # one part file per spec in DIR
    python bench/verdict_truth.py --merge DIR           # the results file from the part files

Cases and samples are `bench/certify_truth.py`'s (`Case`), in three groups:

* ``analytic`` -- the 13 closed-form specs of `bench/truth_cases.py` (the three examples and ten
  variants) whose optimum CP-SAT proves within `--time-limit` (unproven ones are left out and
  named); the certificate is handed CP-SAT's proof (`bounds.Rigorous`, status OPTIMAL, bound =
  the proven optimum): the `proven` route on the oracle it bounds;
* ``des`` -- the eight six-thread ``t2-ipfwd-*-x2`` examples on the simulation, optimum = the best
  placement class the spec allows (every class simulated once, `solver.certify.truth.ClassTable`;
  classes over a ``max_threads`` cap or with no plan obeying ``pin`` and ``forbid`` left out);
* ``contended`` -- simulated specs where the best plan runs below its contention-free rate
  (`bench/fluid_bound.py`): ``t2-constrained`` and IPFwd variants confined to a few contexts
  (their applications carry ``idle_demand``), optimum by the same enumeration.

On the simulation the certificate is handed the fluid LP's bound (`bounds.simulation_bound`,
enumeration of placement classes) and the measured bound `certify` adds when the LP does not
prove the plan (`solver.certify.measured_bound`: the classes the LP cannot rule out, their figures
taken from the truth table, which is what the run's class table would hold; computed in full, which
proves exactly the plans the run's early-stopping walk proves), and a plan carries the half-width of its class's measurement
(a deliberately worse plan: the optimum's class's).  Each repetition draws `--n` local-optima
samples (disjoint chunks of one pool of restarts) and judges with `solver.certify.verdict.decide`
exactly as `certify` builds the evidence (`solver.certify.assemble.evidence`: the atom and its
saturation, else `evt.analyze`; known plans: the best sample and the best of 10 seeded
local-search restarts):

* the *found* plan -- the sample's best, as `run` would report when it is the answer;
* *deliberately worse* plans -- the optimum times ``1 - d`` for each ``d`` of `--below` (the
  known plans stay those of the sample: the plan is what a worse solver might have returned);
  ``beyond_interval`` says whether the shortfall exceeds the plan's and the optimum's half-widths.

Power: the share of positive verdicts (`proven`, `certified`, `best_found`) among plans within the
5% target of the optimum, per route.  Safety: the positive verdicts among plans more than the
target below it (must be 0).  Pipeline specs: `bench/pipeline_truth.py`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import fluid_bound
from certify_truth import Case
from results import write_results
from truth_cases import EXAMPLES, VARIANTS, proven_optimum

from tasksolve import evt
from tasksolve.solver.certify import assemble
from tasksolve.solver.certify.bounds import Rigorous, simulation_bound
from tasksolve.solver.certify.judgement import Sample
from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.certify.measured_bound import measured_bound
from tasksolve.solver.certify.verdict import POSITIVE, decide

TARGET = 0.05
MODULES = [
    "solver/certify/verdict.py",
    "solver/certify/assemble.py",
    "evt/atom.py",
    "solver/certify/designs.py",
    "solver/certify/bounds.py",
    "solver/certify/fluid_max.py",
    "solver/certify/fluid_cuts.py",
    "solver/certify/allowed_classes.py",
    "solver/certify/measured_bound.py",
]
#: the study's groups: name -> spec names (contended ones: `bench/fluid_bound.py`'s variants)
GROUPS = {
    "analytic": EXAMPLES + tuple(VARIANTS),
    "contended": ("t2-constrained", "l1-x2@core0", "hashn-l1-x2@core0", "intadd-x2@core0+pipe", "intmul-x2@2pipes"),
    # cheapest class tables first: what is finished by the deadline is kept
    "des": tuple(
        f"t2-ipfwd-{k}-x2" for k in ("hashn-mem", "mem", "hashn-l1", "l2", "l1", "intmul", "intdiv", "intadd")
    ),
}


def judge(values: np.ndarray, plan: float, known, bounds, half: float = 0.0, oracle: str = "analytic") -> str:
    """The verdict `certify` would give a plan of value `plan` (half-width `half`) on a sample of
    local-search restarts `values`, with `known` plans and `bounds` (an atom at the top, else
    `evt.analyze`); also used by bench/pipeline_truth.py."""
    atom = evt.top_atom(values)
    analysis, why = None, None
    if atom is None:
        try:
            analysis = evt.analyze(values, gof_bootstrap=200)
        except evt.EVTError as exc:
            why = str(exc)
    judging = assemble.Judging(False, TARGET, 0.95, bounds, oracle, "local-search restarts")
    ev = assemble.evidence(Sample(values, analysis, why), atom, KnownPlan("plan", plan, half), known, judging)
    return decide(ev).verdict


def verdict(values: np.ndarray, plan: float, half: float, probed: float | None, bounds, oracle: str) -> str:
    best = float(values.max())
    known = [KnownPlan("best sampled plan", best)] + ([KnownPlan("probe", probed)] if probed is not None else [])
    return judge(values, plan, known, bounds, half, oracle)


def make_case(name: str, group: str, args) -> tuple[Case, list, float, callable]:
    """The case, the bounds its certificate gets, the optimum's half-width, and a half-width lookup."""
    kind = "analytic" if group == "analytic" else "des"
    spec = fluid_bound.variant_spec(name) if name in fluid_bound.VARIANTS else None
    case = Case(name, kind, args.reps * args.n, args.time_limit, spec=spec)
    if case.optimum is None:
        return case, [], 0.0, None
    if kind == "analytic":
        contexts = proven_optimum(case.spec, args.time_limit)[1]
        proof = Rigorous("OPTIMAL", case.optimum, "cpsat", case.optimum, list(contexts))
        return case, [proof], 0.0, lambda value: 0.0
    bound = simulation_bound(case.spec)
    measured = measured_bound(case.spec, case.table)  # the class table's figures: what `certify` would simulate
    values = case.table.values(case.objective)
    halves = np.array([m.half_width for m in case.table.measurements])
    allowed = allowed_mask(case.spec, case.table.representatives)
    best = int(np.flatnonzero(allowed)[np.argmax(values[allowed])])
    case.optimum = float(values[best])  # the best class the spec allows (max_threads, pin, forbid)
    top = float(halves[best])
    return (
        case,
        [b for b in (bound, measured) if b is not None],
        top,
        lambda value: float(halves[int(np.argmin(abs(values - value)))]),
    )


def allowed_mask(spec, reps: np.ndarray) -> np.ndarray:
    """The classes the spec allows: within every ``max_threads`` cap, and holding a plan that obeys
    ``pin`` and ``forbid`` (`solver.certify.allowed_classes`), as the bound's enumeration counts them."""
    from tasksolve.solver.certify.allowed_classes import allowed_classes
    from tasksolve.solver.certify.fluid_max import _cap_ok

    caps = np.array([_cap_ok(spec, row) for row in reps], dtype=bool)
    return caps & allowed_classes(spec, reps)


def study(name: str, group: str, args) -> list[dict]:
    begin = time.perf_counter()
    case, bounds, top_half, half_of = make_case(name, group, args)
    if case.optimum is None:
        print(f"  {name}: optimum not proven, left out", file=sys.stderr, flush=True)
        return []
    oracle = "analytic" if group == "analytic" else "des"
    bound_value = next((float(b.value) for b in bounds if hasattr(b, "value")), None)
    measured = next((b for b in bounds if hasattr(b, "simulated")), None)
    rows = []
    for rep in range(args.reps):
        values = case.pool[rep * args.n : (rep + 1) * args.n]
        probed = case.probed(rep, 10)
        best = float(values.max())
        plans = [("found", best, half_of(best))]
        plans += [(f"-{d:.0%}", case.optimum * (1 - d), top_half) for d in args.below]
        for label, plan, half in plans:
            short = (case.optimum - plan) / case.optimum
            rows.append(
                {
                    "spec": name,
                    "group": group,
                    "oracle": oracle,
                    "rep": rep,
                    "plan": label,
                    "short": short,
                    "half_width": half / case.optimum,
                    "beyond_interval": case.optimum - plan > half + top_half,
                    "within": short <= TARGET + 1e-9,
                    "bound_gap": None if bound_value is None else bound_value / case.optimum - 1.0,
                    "measured_gap": None if measured is None else measured.value / case.optimum - 1.0,
                    "simulated": None if measured is None else f"{measured.simulated} of {measured.classes}",
                    "verdict": verdict(values, plan, half, probed, bounds, oracle),
                }
            )
    print(f"  {name}: {time.perf_counter() - begin:.0f} s", file=sys.stderr, flush=True)
    return rows


TITLES = {
    "analytic": "closed form, CP-SAT's proof handed to the certificate",
    "des": "six-thread simulated, fluid LP and measured bounds",
    "contended": "simulated with real contention, fluid LP and measured bounds",
}


def render_markdown(data: dict) -> str:
    rows = data["rows"]
    out = [
        f"Local-optima samples of n = {data['n']}, {data['reps']} repetitions per spec, target 5% "
        f"(`{data.get('command', 'bench/verdict_truth.py')}`). Power: positive verdicts (by route) among plans "
        "within the target of the known optimum (goal >= 95%); safety: positive verdicts among plans more than "
        "the target below it (goal 0). Deliberately worse plans are the optimum times 1 - d; on the simulation "
        'they carry the optimum\'s half-width, and "beyond interval" counts those whose shortfall exceeds both '
        "half-widths.",
        "",
        "| group | plans | within target | positive (by route) | power | beyond target (beyond interval) "
        "| positive (must be 0) |",
        "|---|---|---|---|---|---|---|",
    ]
    for group in ("analytic", "des", "contended"):
        for plan in ["found"] + [f"-{d:.0%}" for d in data["below"]]:
            out += _line(group, plan, [r for r in rows if r.get("group", r["oracle"]) == group and r["plan"] == plan])
    out.append("")
    for group in ("analytic", "des", "contended"):
        mine = [r for r in rows if r.get("group", r["oracle"]) == group]
        if not mine:
            continue
        specs = sorted({r["spec"] for r in mine})
        text = f"**{group}** ({TITLES[group]}): {len(specs)} specs: {', '.join(specs)}."
        gaps = {r["spec"]: r["bound_gap"] for r in mine if r.get("bound_gap") is not None}
        if gaps:
            text += (
                " Fluid bound above the optimum: " + ", ".join(f"{k} {v:+.2%}" for k, v in sorted(gaps.items())) + "."
            )
        both = {r["spec"]: (r["measured_gap"], r["simulated"]) for r in mine if r.get("measured_gap") is not None}
        if both:
            text += (
                " With the classes the LP cannot rule out simulated (`solver.certify.measured_bound`): "
                + ", ".join(f"{k} {g:+.2%} ({n} classes simulated)" for k, (g, n) in sorted(both.items()))
                + "."
            )
        halves = [r["half_width"] for r in mine]
        text += f" Plans' relative half-widths: up to {max(halves):.2%}."
        out += [text, ""]
    left = data.get("left_out") or []
    if left:
        out += [
            f"Left out (optimum not proven within {data['time_limit']:g} s of CP-SAT, or not run): {', '.join(left)}.",
            "",
        ]
    verdicts = Counter((r.get("group", r["oracle"]), r["plan"], r["verdict"]) for r in rows)
    out += ["All verdicts: " + "; ".join(f"{g} {p} `{v}` {c}" for (g, p, v), c in sorted(verdicts.items()))]
    return "\n".join(out)


def _line(group: str, plan: str, group_rows: list[dict]) -> list[str]:
    if not group_rows:
        return []
    within = [r for r in group_rows if r["within"]]
    beyond = [r for r in group_rows if not r["within"]]
    routes = Counter(r["verdict"] for r in within if r["verdict"] in POSITIVE)
    pos = sum(routes.values())
    wrong = Counter(r["verdict"] for r in beyond if r["verdict"] in POSITIVE)
    power = f"{pos / len(within):.0%}" if within else "-"
    route_text = ", ".join(f"{k} {v}" for k, v in sorted(routes.items())) or "none"
    wrong_text = f"{sum(wrong.values())}" + (
        f" ({', '.join(f'{k} {v}' for k, v in sorted(wrong.items()))})" if wrong else ""
    )
    outside = sum(bool(r.get("beyond_interval", True)) for r in beyond)
    return [f"| {group} | {plan} | {len(within)} | {route_text} | {power} | {len(beyond)} ({outside}) | {wrong_text} |"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--groups", default="analytic,des,contended")
    parser.add_argument("--cases", default="", help="only these specs of the groups")
    parser.add_argument("--below", default="0.03,0.06,0.1,0.15")
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--parts", default=None, help="write one part file per spec into this folder")
    parser.add_argument("--merge", default=None, help="write the results file from the part files of this folder")
    args = parser.parse_args()
    if args.merge:
        return merge(Path(args.merge))
    args.below = [float(x) for x in args.below.split(",")]
    only = set(args.cases.split(",")) - {""}
    for group in args.groups.split(","):
        for name in GROUPS[group]:
            if only and name not in only:
                continue
            rows = study(name, group, args)
            if args.parts:
                part = {"rows": rows, "name": name, "group": group, "n": args.n, "reps": args.reps}
                part |= {"below": args.below, "time_limit": args.time_limit}
                Path(args.parts).mkdir(parents=True, exist_ok=True)
                (Path(args.parts) / f"{group}-{name}.json").write_text(json.dumps(part))


def merge(folder: Path) -> None:
    parts = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    rows = [r for p in parts for r in p["rows"]]
    done = {(p["group"], p["name"]) for p in parts}
    left = [f"{n} ({g})" for g, names in GROUPS.items() for n in names if (g, n) not in done or not any(
        p["rows"] for p in parts if (p["group"], p["name"]) == (g, n))]  # fmt: skip
    first = parts[0]
    data = {"rows": rows, "n": first["n"], "reps": first["reps"], "below": first["below"]}
    data |= {"time_limit": first["time_limit"], "left_out": left}
    data["command"] = f"nice python bench/verdict_truth.py --n {first['n']} --reps {first['reps']} --parts DIR"
    path = write_results("verdict_truth", data, modules=MODULES)
    print(render_markdown(data))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
