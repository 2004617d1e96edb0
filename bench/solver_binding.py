"""Benchmark of the CP-SAT binding model and of the methods it is compared with.

Part 1 (proof): for each spec, `solve_binding` on the closed form (local search, configuration
bound, CP-SAT) -- status, wall time and its parts, objective, bound and gap, one row per seed.
Part 2 (quality): `solver.binding.compare` with every method, measured on the simulation; the CP-SAT plan
against the best of N random plans (measured), balanced placement and BlackBox's top 5.

    python bench/solver_binding.py --seed 0 > out.md
"""

from __future__ import annotations

import argparse
import platform
import time

from tasksolve.solver.binding.cpsat import solve_binding
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import load_spec


def proof_table(names: list[str], time_limit: float, workers: int, repeats: int, seed: int) -> list[str]:
    lines = [
        "| spec | threads | seed | status | wall time (s) | local search (s) | configuration bound (s) | "
        "objective (Mpps) | bound (Mpps) | bound from | gap |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        spec = load_spec(name)
        for r in range(repeats):
            start = time.perf_counter()
            result = solve_binding(BindingProblem(spec), time_limit=time_limit, workers=workers, seed=seed + r)
            wall = time.perf_counter() - start
            best = result.best
            heuristic = result.local_search
            configuration = result.configuration_bound
            lines.append(
                f"| {name} | {len(spec.threads)} | {seed + r} | {result.status} | {wall:.2f} | "
                f"{heuristic.wall_time if heuristic else 0:.2f} | {configuration.wall_time if configuration else 0:.2f} | "
                f"{best.objective / 1e6:.3f} | {best.bound / 1e6:.3f} | {best.bound_source} | {best.gap:.2e} |"
            )
    return lines


def quality_table(names: list[str], time_limit: float, workers: int, seed: int, samples: int) -> list[str]:
    from tasksolve.simulate.oracle import make_oracle
    from tasksolve.solver.binding.compare import solve
    from tasksolve.solver.binding.samplers import uniform_plans
    from tasksolve.specs import Plan

    lines = [
        "| spec | CP-SAT (measured, Mpps) | best of random (measured) | balanced avg / worst | BlackBox top-5 | CP-SAT vs best random |",
        "|---|---|---|---|---|---|",
    ]
    for name in names:
        spec = load_spec(name)
        report = solve(
            spec,
            ["cpsat", "balanced", "blackbox"],
            oracle_kind="des",
            time_limit=time_limit,
            workers=workers,
            seed=seed,
            samples=samples,
        )
        rows = {
            row.method.split(" ")[0] + (" worst" if "worst" in row.method else ""): row for row in report.comparison
        }
        # the best of the random sample, every plan measured on the simulation
        oracle = make_oracle(spec, "des")
        sample = uniform_plans(spec, samples, seed)
        measured = oracle.evaluate_many(
            [Plan.from_contexts(spec, list(map(int, r))) for r in sample], seed=seed, workers=workers
        )
        best_random = max(m.throughput for m in measured)
        cp = rows["cpsat"].simulated
        lines.append(
            f"| {name} | {cp / 1e6:.3f} | {best_random / 1e6:.3f} | {rows['balanced'].simulated / 1e6:.3f} / "
            f"{rows['balanced worst'].simulated / 1e6:.3f} | {rows['blackbox'].simulated / 1e6:.3f} | "
            f"{(cp / best_random - 1):+.2%} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-proof", action="store_true")
    args = parser.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, {platform.python_version()}, workers={args.workers}\n"
    )
    if not args.skip_proof:
        print("### CP-SAT proves the closed-form optimum\n")
        print("\n".join(proof_table(["t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8"], 60, args.workers, args.repeats, args.seed)))
        print()
        print("\n".join(proof_table(["t2-ipfwd-x20"], 60, args.workers, args.repeats, args.seed)))
    if not args.skip_quality:
        print("\n### CP-SAT plan against the other methods (all measured on the simulation)\n")
        print(
            "\n".join(quality_table(["t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8"], 30, args.workers, args.seed, args.samples))
        )


if __name__ == "__main__":
    main()
