"""The chosen plan of `tasksolve solve` against the pinning policies people use, per built-in example.

For each binding example, `solver.binding.compare.solve` with CP-SAT and the four pinned policies
(`solver.binding.policies`: compact, compact-cores, scatter, distrib), everything measured on one
oracle (the closed form by default, `--oracle des` for the simulation): each policy's measured
value (or "infeasible" when its plan breaks the spec's constraints), the best of them, and the
answer's gain over it (`SolveReport.policy_gain`), with whether it is beyond both half-widths.
CP-SAT runs in deterministic time (`--deterministic`), so the plans repeat on a loaded machine.

    python bench/policies.py --oracle analytic
    python bench/policies.py --oracle des --specs t2-ipfwd-l1-x2,t2-ipfwd-mix-x8 --name binding-policies-des
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from results import ROOT, markdown_table, write_results

from tasksolve.solver.binding.compare import solve
from tasksolve.solver.binding.policies import PINNED
from tasksolve.specs import builtin_names, load_spec
from tasksolve.specs.objective import Objective

MODULES = ["solver/binding/policies.py", "solver/binding/compare.py", "simulate/analytic.py"]
NOISY = ["rows.*.wall"]
COLUMNS = ["spec", "threads", "answer", *PINNED, "best policy", "gain", "beyond noise", "wall (s)"]


def binding_examples() -> list[str]:
    return [name for name in builtin_names("") if load_spec(name).problem == "binding"]


def row(name: str, oracle: str, time_limit: float, workers: int, seed: int, samples: int) -> dict:
    spec = load_spec(name)
    start = time.perf_counter()
    report = solve(
        spec,
        ["cpsat", *PINNED],
        oracle_kind=oracle,
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        samples=samples,
        deterministic=True,
    )
    wall = time.perf_counter() - start
    rows = {r.method: r for r in report.comparison}
    gain = report.policy_gain
    return {
        "spec": name,
        "threads": len(spec.threads),
        "objective": report.objective,
        "method": report.method,
        "answer": report.value,
        "policies": {p: rows[p].simulated for p in PINNED},
        "infeasible": {p: rows[p].note for p in PINNED if rows[p].simulated is None},
        "best": None if gain is None else gain.best,
        "gain": None if gain is None else gain.gain,
        "beyond_noise": None if gain is None else gain.beyond_noise,
        "wall": wall,
    }


def render_markdown(data: dict) -> str:
    lines = []
    for r in data["rows"]:
        objective = Objective.of(r["objective"])
        cells = [r["spec"], r["threads"], f"{objective.format(r['answer'])} ({r['method']})"]
        cells += [objective.format(v) if v is not None else "infeasible" for v in r["policies"].values()]
        if r["gain"] is None:
            cells += ["-", "-", "-"]
        else:
            cells += [r["best"], f"{r['gain']:+.1%}", "yes" if r["beyond_noise"] else "no"]
        lines.append(cells + [f"{r['wall']:.1f}"])
    infeasible = sorted({f"{r['spec']} {p}: {why}" for r in data["rows"] for p, why in r["infeasible"].items()})
    notes = "\n".join(f"- {line}" for line in infeasible)
    return (
        f"`{data['command']}` ({data['oracle']} oracle, CP-SAT {data['time_limit']:g} s in deterministic time, "
        f"{data['workers']} workers, seed {data['seed']}; load average {data['load']:.1f} at the start):\n\n"
        + markdown_table(COLUMNS, lines)
        + (
            "\n\nPolicies reported infeasible (their plan breaks a constraint, not measured):\n\n" + notes
            if notes
            else ""
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--oracle", choices=["analytic", "des"], default="analytic")
    parser.add_argument("--specs", default="", help="comma-separated examples (default: every binding example)")
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=1000, help="random plans (CP-SAT's hint)")
    parser.add_argument("--name", default="binding-policies")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    names = args.specs.split(",") if args.specs else binding_examples()
    rows = []
    for name in names:
        rows.append(row(name, args.oracle, args.time_limit, args.workers, args.seed, args.samples))
        print(rows[-1], flush=True)
    command = "python " + " ".join([os.path.relpath(sys.argv[0], ROOT), *(argv if argv is not None else sys.argv[1:])])
    data = {
        "command": command,
        "oracle": args.oracle,
        "time_limit": args.time_limit,
        "workers": args.workers,
        "seed": args.seed,
        "load": load,
        "rows": rows,
    }
    write_results(args.name, data, modules=MODULES, command=command)
    print(render_markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
