"""Benchmark of certification on the 24-thread T2 examples.

For each spec: CP-SAT's plan (selection on the simulation), then a 5000-sample certification
(random plans measured on the simulation with every core), timed; the CP-SAT plan's gap to the
EVT-estimated optimum and its position against the best random plan.

    python bench/certify_t2.py --seed 0 --samples 5000 --workers 2
"""

from __future__ import annotations

import argparse
import platform
import tempfile
from pathlib import Path

from tasksolve.solver.certify.job import run
from tasksolve.specs import load_spec


def _mpps(value) -> str:
    return "open" if value is None or value != value or abs(value) == float("inf") else f"{value / 1e6:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--specs", nargs="*", default=["t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8"])
    parser.add_argument("--design", default="random", choices=("random", "local-optima"))
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, workers={args.workers}\n")
    print(
        "| spec | threads | certification wall time (s) | samples (failed) | CP-SAT plan (Mpps) | best random (Mpps) | "
        "estimated optimum [95% interval] (Mpps) | signed gap to estimate / far limit | verdict |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.specs:
        spec = load_spec(name)
        with tempfile.TemporaryDirectory() as out:
            result = run(
                spec,
                Path(out),
                methods=("cpsat",),
                oracle_kind="des",
                time_limit=30,
                workers=args.workers,
                seed=args.seed,
                solve_samples=1000,
                samples=args.samples,
                balanced=0,
                design=args.design,
            )
        wall = result.seconds["certify"]
        outcome = result.outcome
        c = outcome.certificate
        opt = c.optimum
        print(
            f"| {name} | {len(spec.threads)} | {wall:.1f} | {c.samples.n} ({c.samples.failed}) | "
            f"{c.plan_performance.value / 1e6:.3f} | {c.samples.best / 1e6:.3f} | "
            f"{_mpps(opt.estimate)} [{_mpps(opt.lower)}, {_mpps(opt.upper)}] | "
            f"{_pct(c.gap.estimate)} / {_pct(c.gap.far_limit)} | {c.verdict} |"
        )


def _pct(value) -> str:
    return "-" if value is None else f"{value:+.2%}"


if __name__ == "__main__":
    main()
