"""How tight the fluid bound on the simulation is (`solver.certify.bounds.simulation_bound`;
docs/design.md, "A bound on the simulation"), on every binding example.

Per spec: the bound over every plan (enumeration of placement classes where there are at most
`--class-limit`, else the relaxation; both are reported), its wall time, the best simulated plan
known -- every placement class simulated once where the classes are enumerated (the truth:
`contexts`, `max_threads`, `pin` and `forbid` are applied -- a class counts when one of its plans
obeys them -- `latency_max` is not), and CP-SAT's
closed-form plan simulated -- and the closed form's optimum (CP-SAT, `--cpsat-seconds`).  A case
is *contended* when the best known plan's simulated value is below its contention-free value
(the same plan with `contention` idealised): elsewhere any bound at least the contention-free
rate is tight for free.

    nice python bench/fluid_bound.py [--specs a,b] [--cpsat-seconds 10] [--workers 1]
    python bench/fluid_bound.py --render      # print the BENCHMARKS.md section of the results file
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.results import read_results, write_results
from tasksolve.simulate.analytic import evaluate, solve
from tasksolve.simulate.des import DesSettings
from tasksolve.simulate.model import compile_plan
from tasksolve.simulate.oracle import SimulationOracle
from tasksolve.solver.certify.bounds import closed_form_bound
from tasksolve.solver.certify.fluid_bound import plan_bound
from tasksolve.solver.certify.fluid_max import CLASS_LIMIT, allowed_reps, enumerated_max, relaxed_max
from tasksolve.specs import Plan, load_spec

NAME = "fluid_bound"
SPECS = (
    "t2-ipfwd-intadd-x2",
    "t2-ipfwd-intdiv-x2",
    "t2-ipfwd-intmul-x2",
    "t2-ipfwd-l1-x2",
    "t2-ipfwd-l2-x2",
    "t2-ipfwd-mem-x2",
    "t2-ipfwd-hashn-l1-x2",
    "t2-ipfwd-hashn-mem-x2",
    "t2-constrained",
    "t2-ipfwd-l1-x8",
    "t2-ipfwd-mix-x8",
    "manycore-mix",
    "t2-asplos12-mix",
    "t2-ipfwd-x20",
)
#: contended variants built in memory: name -> ({application: instances}, usable contexts)
VARIANTS = {
    "intadd-x2@core0": ({"ipfwd-intadd": 2}, ["core0"]),
    "l1-x2@core0": ({"ipfwd-l1": 2}, ["core0"]),
    "hashn-l1-x2@core0": ({"ipfwd-hashn-l1": 2}, ["core0"]),
    "intmul-x2@2pipes": ({"ipfwd-intmul": 2}, ["core0.pipe0", "core1.pipe0"]),
    "intadd-x2@core0+pipe": ({"ipfwd-intadd": 2}, ["core0", "core1.pipe0"]),
    "intadd+l1@core0+pipe": ({"ipfwd-intadd": 1, "ipfwd-l1": 1}, ["core0", "core1.pipe0"]),
}
MODULES = [
    "solver/certify/fluid_bound.py",
    "solver/certify/fluid_lp.py",
    "solver/certify/fluid_max.py",
    "solver/certify/bounds.py",
    "solver/certify/fluid_cuts.py",
    "solver/certify/allowed_classes.py",
    "simulate/des/dynamics.py",
]


def variant_spec(name: str):
    """A contended variant (`VARIANTS`): IPFwd instances confined to a few contexts."""
    from tasksolve.specs.loader import load_spec_text

    apps, contexts = VARIANTS[name]
    lines = ["tasksolve: 1", f"name: {name}", "topology: ultrasparc-t2", "applications:"]
    lines += [f"  a{k}: {app}" for k, app in enumerate(apps)]
    lines += ["workload:"] + [f"  - {{app: a{k}, instances: {n}}}" for k, n in enumerate(apps.values())]
    lines += ["constraints:", f"  contexts: {contexts}"]
    return load_spec_text("\n".join(lines) + "\n", f"<{name}>")


def contention_free(spec, contexts) -> float:
    """The closed form of the plan with contention idealised (every thread at rate 1)."""
    graph = compile_plan(spec, Plan.from_contexts(spec, contexts)).idealised("contention")
    return float(spec.topology.clock * (1.0 / solve(graph).period).sum())


def truth(spec, oracle, workers: int) -> dict:
    """Every placement class the spec allows (contexts, max_threads, and some plan of the class
    obeying pin and forbid: `fluid_max.allowed_reps`) simulated once: the best."""
    begin = time.perf_counter()
    reps = list(allowed_reps(spec))
    plans = [Plan.from_contexts(spec, [int(c) for c in row]) for row in reps]
    measured = oracle.evaluate_many(plans, workers=workers)
    best = int(np.argmax([m.throughput for m in measured]))
    return {
        "classes": len(reps),
        "value": measured[best].throughput,
        "half_width": measured[best].half_width,
        "contexts": [int(c) for c in reps[best]],
        "seconds": time.perf_counter() - begin,
    }


def one_spec(name: str, cpsat_seconds: float, class_limit: int, workers: int) -> dict:
    spec = variant_spec(name) if name in VARIANTS else load_spec(name)
    settings = DesSettings.from_spec(spec)
    oracle = SimulationOracle(spec)
    row: dict = {"spec": name, "threads": len(spec.threads)}
    enumerated = enumerated_max(spec, settings, spec.objective, class_limit)
    relaxed = relaxed_max(spec, settings, spec.objective)
    row["relaxation"] = {"value": relaxed.value, "seconds": relaxed.seconds}
    row["enumeration"] = (
        None
        if enumerated is None
        else {
            "value": enumerated.value,
            "seconds": enumerated.seconds,
            "classes": enumerated.classes,
            "solved": enumerated.solved,
        }
    )
    row["bound"] = min(relaxed.value, enumerated.value) if enumerated else relaxed.value
    row["method"] = "enumeration" if enumerated and enumerated.value <= relaxed.value else "relaxation"
    proof = closed_form_bound(spec, time_limit=cpsat_seconds, seed=0)
    row["closed_form"] = {"status": proof.status, "optimum": proof.objective, "bound": proof.bound}
    known = []
    if proof.contexts is not None:
        plan = Plan.from_contexts(spec, proof.contexts)
        m = oracle.evaluate(plan)
        row["cpsat_plan"] = {
            "simulated": m.throughput,
            "half_width": m.half_width,
            "plan_bound": plan_bound(spec, plan, settings=settings).value,
            "closed_form": evaluate(spec, plan).throughput,
        }
        known.append((m.throughput, m.half_width, "CP-SAT plan", list(proof.contexts)))
    if enumerated is not None:
        found = truth(spec, oracle, workers)
        row["truth"] = found
        known.append((found["value"], found["half_width"], "best class", found["contexts"]))
    value, half, source, contexts = max(known)
    free = contention_free(spec, contexts)
    row["best"] = {"value": value, "half_width": half, "source": source, "contention_free": free}
    row["contended"] = bool(value < free * (1 - 1e-6))
    row["tightness"] = row["bound"] / value - 1.0
    return row


def render_markdown(data: dict) -> str:
    """The BENCHMARKS.md section: contended cases first, then the rest."""
    lines = [
        "Bound: the fluid LP's maximum over plans (enumeration of placement classes, or the relaxation"
        " where there are too many classes). Best known: the best simulated placement class (every"
        " allowed class simulated once; `latency_max` not applied) or CP-SAT's closed-form plan"
        " simulated, whichever is higher, +- its 95% half-width. Mpps throughout; times in seconds on"
        " the machine the results file names.",
        "",
    ]
    header = (
        "| spec | threads | bound (method) | best known (source) | bound / best - 1 | closed-form optimum |"
        " per-plan bound of CP-SAT's plan / its simulated value - 1 | bound wall time |"
    )
    for contended, title in (
        (True, "Contended (the best plan runs below its contention-free rate)"),
        (False, "Not contended (any bound at the contention-free rate is tight)"),
    ):
        rows = [r for r in data["rows"] if r["contended"] == contended]
        lines += [f"**{title}**: {len(rows)} specs", "", header, "|" + "---|" * 8]
        for r in rows:
            best = r["best"]
            method = r["method"]
            seconds = (r["enumeration"] or {}).get("seconds") if method == "enumeration" else r["relaxation"]["seconds"]
            if method == "enumeration":
                method += f", {r['enumeration']['classes']} classes, {r['enumeration'].get('solved', '?')} LPs"
            cp = r.get("cpsat_plan")
            per_plan = f"{cp['plan_bound'] / cp['simulated'] - 1:+.2%}" if cp else "-"
            optimum = r["closed_form"]["optimum"]
            lines.append(
                f"| {r['spec']} | {r['threads']} | {r['bound'] / 1e6:.3f} ({method}) | "
                f"{best['value'] / 1e6:.3f} +- {best['half_width'] / 1e6:.3f} ({best['source']}) | "
                f"{r['tightness']:+.2%} | {'-' if optimum is None else f'{optimum / 1e6:.3f}'} "
                f"({r['closed_form']['status']}) | {per_plan} | {seconds:.2f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", default=",".join(SPECS + tuple(VARIANTS)))
    parser.add_argument("--cpsat-seconds", type=float, default=10.0)
    parser.add_argument("--class-limit", type=int, default=CLASS_LIMIT)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--append", action="store_true", help="keep the other specs' rows of the results file")
    parser.add_argument("--render", action="store_true", help="print the section of the results file and stop")
    args = parser.parse_args()
    if args.render:
        record = read_results(NAME)
        print(render_markdown(record["data"]))
        return
    rows = []
    if args.append:  # add to (or replace in) the rows of the results file
        rows = [r for r in read_results(NAME)["data"]["rows"] if r["spec"] not in args.specs.split(",")]
    for name in args.specs.split(","):
        begin = time.perf_counter()
        row = one_spec(name, args.cpsat_seconds, args.class_limit, args.workers)
        row["seconds"] = time.perf_counter() - begin
        rows.append(row)
        print(
            f"{name}: bound {row['bound'] / 1e6:.3f} ({row['method']}), best {row['best']['value'] / 1e6:.3f} "
            f"({row['best']['source']}), {row['tightness']:+.2%}, contended {row['contended']}, {row['seconds']:.0f} s",
            flush=True,
        )
    write_results(NAME, {"rows": rows, "cpsat_seconds": args.cpsat_seconds}, modules=MODULES)


if __name__ == "__main__":
    main()
