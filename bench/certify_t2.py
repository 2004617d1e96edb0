"""Benchmark of certification on the 24-thread T2 examples.

For each spec: CP-SAT's plan (selection on the simulation), then a 5000-sample certification
(random plans measured on the simulation with every core), timed; the CP-SAT plan's gap to the
EVT-estimated optimum and its position against the best random plan.

    python bench/certify_t2.py --seed 0 --samples 5000 --workers 2
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from results import markdown_table, write_results

from tasksolve.solver.job import run
from tasksolve.specs import load_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--specs", nargs="*", default=["t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8"])
    parser.add_argument("--design", default="random", choices=("random", "local-optima"))
    args = parser.parse_args()
    rows = []
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
        c = result.outcome.certificate
        opt = c.optimum
        rows.append(
            {
                "spec": name,
                "threads": len(spec.threads),
                "seconds": result.seconds["certify"],
                "samples": c.samples.n,
                "failed": c.samples.failed,
                "plan_mpps": c.plan_performance.value / 1e6,
                "best_mpps": c.samples.best / 1e6,
                "estimate_mpps": opt.estimate / 1e6 if opt.estimate is not None else None,
                "lower_mpps": opt.lower / 1e6 if opt.lower is not None else None,
                "upper_mpps": opt.upper / 1e6 if opt.upper is not None else None,
                "gap_estimate": c.gap.estimate,
                "gap_far_limit": c.gap.far_limit,
                "verdict": str(c.verdict),
            }
        )
        print(rows[-1], flush=True)
    data = {"seed": args.seed, "samples": args.samples, "workers": args.workers, "design": args.design, "rows": rows}
    data["load"] = os.getloadavg()[0]
    write_results("certify-t2", data, modules=MODULES)
    print(render_markdown(data))


MODULES = [
    "solver/job/job.py",
    "solver/certify/certificate.py",
    "solver/certify/verdict.py",
    "solver/certify/service.py",
    "evt/analysis.py",
    "simulate/oracle.py",
]
COLUMNS = [
    "spec",
    "threads",
    "certification wall time (s)",
    "samples (failed)",
    "CP-SAT plan (Mpps)",
    "best random (Mpps)",
    "estimated optimum [95% interval] (Mpps)",
    "signed gap to estimate / far limit",
    "verdict",
]


def _m(value) -> str:
    """A figure in Mpps, or "none" where the certificate has none (null: e.g. a tail with no finite end)."""
    return "none" if value is None else f"{value:.3f}"


def render_markdown(data: dict) -> str:
    rows = [
        [
            r["spec"],
            r["threads"],
            f"{r['seconds']:.1f}",
            f"{r['samples']} ({r['failed']})",
            f"{r['plan_mpps']:.3f}",
            f"{r['best_mpps']:.3f}",
            f"{_m(r['estimate_mpps'])} [{_m(r['lower_mpps'])}, {_m(r['upper_mpps'])}]",
            f"{_pct(r['gap_estimate'])} / {_pct(r['gap_far_limit'])}",
            r["verdict"],
        ]
        for r in data["rows"]
    ]
    return (
        f"`python bench/certify_t2.py --seed {data['seed']} --samples {data['samples']} --workers {data['workers']}` "
        f"(design `{data['design']}`; load average {data['load']:.1f} at the end):\n\n" + markdown_table(COLUMNS, rows)
    )


def _pct(value) -> str:
    return "-" if value is None else f"{value:+.2%}"


if __name__ == "__main__":
    main()
