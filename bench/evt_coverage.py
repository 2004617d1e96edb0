"""Coverage study of the EVT optimum interval (`evt.analyze`).

For each case, draws `--reps` seeded samples with a known endpoint, runs the analysis and
reports how often the profile-likelihood interval covers the true endpoint (with a 95%
Clopper-Pearson interval of that coverage), the share of intervals open on the far side, the
median absolute error of the point estimate and the median interval width (finite ones).

Cases: exact GPD excesses (threshold 0 given, the acceptance study) for xi in {-0.1, -0.3,
-0.45} and several sizes; samples of 5000 from Beta(2,5) (upper endpoint 1, xi = -1/5; and the
lower endpoint 0 by minimisation, xi = -1/2) and from reverse-Weibull distributions
(scipy ``weibull_max``, endpoint 0 shifted to 1, xi = -1/c) with the automatic threshold.

    python bench/evt_coverage.py --seed 0 --reps 200
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from results import write_results

from tasksolve import evt
from tasksolve.evt.gpd import gpd_rvs


def cases(quick: bool) -> list[dict]:
    out = []
    for xi in (-0.1, -0.3, -0.45):
        for k in (100, 1000) if quick else (100, 250, 1000, 4000):
            out.append(
                {
                    "name": f"GPD xi={xi} (exact, u=0 given)",
                    "n": k,
                    "truth": -1.0 / xi,
                    "draw": (lambda rng, xi=xi, k=k: gpd_rvs(xi, 1.0, k, rng)),
                    "kwargs": {"threshold": 0.0},
                }
            )
    beta = stats.beta(2, 5)
    out.append(
        {
            "name": "Beta(2,5) max (auto threshold)",
            "n": 5000,
            "truth": 1.0,
            "draw": lambda rng: beta.rvs(5000, random_state=rng),
            "kwargs": {},
        }
    )
    out.append(
        {
            "name": "Beta(2,5) min (auto threshold, minimize)",
            "n": 5000,
            "truth": 0.0,
            "draw": lambda rng: beta.rvs(5000, random_state=rng),
            "kwargs": {"minimize": True},
        }
    )
    for c in (3.0, 2.0):
        dist = stats.weibull_max(c, loc=1.0)
        out.append(
            {
                "name": f"reverse Weibull c={c:g} (xi={-1 / c:.3g}, auto)",
                "n": 5000,
                "truth": 1.0,
                "draw": (lambda rng, d=dist: d.rvs(5000, random_state=rng)),
                "kwargs": {},
            }
        )
    return out


def run_case(case: dict, reps: int, seed: int, confidence: float) -> dict:
    covered = open_far = 0
    errors, widths, flagged = [], [], 0
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    for _ in range(reps):
        x = case["draw"](rng)
        res = evt.analyze(x, confidence=confidence, gof_bootstrap=0, seed=seed, **case["kwargs"])
        covered += res.lower <= case["truth"] <= res.upper
        if not math.isfinite(res.far_limit):
            open_far += 1
        else:
            widths.append(res.upper - res.lower)
        if math.isfinite(res.estimate):
            errors.append(abs(res.estimate - case["truth"]))
        flagged += bool(set(res.flags) - {"large_fraction"})
    ci = stats.binomtest(covered, reps).proportion_ci(confidence_level=0.95, method="exact")
    return {
        "case": case["name"],
        "n": case["n"],
        "reps": reps,
        "coverage": covered / reps,
        "ci": (ci.low, ci.high),
        "open": open_far / reps,
        "err": float(np.median(errors)) if errors else math.nan,
        "width": float(np.median(widths)) if widths else math.inf,
        "flagged": flagged / reps,
        "seconds": time.perf_counter() - t0,
    }


MODULES = ["evt/__init__.py", "evt/analysis.py", "evt/atom.py", "evt/gpd.py", "evt/endpoint.py", "evt/threshold.py"]
IGNORE = ["rows.*.seconds"]  # shown only as the total in the command line
#: the median error and interval width of EVT's endpoint estimates (bench/render.py: agree to 1e-5 relative on a re-run)
FITTED = ["rows.*.err", "rows.*.width"]
COLUMNS = [
    "case",
    "n",
    "coverage",
    "95% CI of coverage",
    "far limit open",
    "median abs error",
    "median width",
    "flagged",
]


def _row(r: dict) -> str:
    return (
        f"| {r['case']} | {r['n']} | {r['coverage']:.3f} | [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}] | {r['open']:.2f} "
        f"| {_g(r['err'])} | {_g(r['width'])} | {r['flagged']:.2f} |"
    )


def _g(value: float | None) -> str:
    return "inf" if value is None else f"{value:.4g}"


def render_markdown(data: dict) -> str:
    quick = " --quick" if data["quick"] else ""
    total = sum(r["seconds"] for r in data["rows"])
    lines = [
        f"Command: `python bench/evt_coverage.py --seed {data['seed']} --reps {data['reps']}{quick}` "
        f"({total:.0f} s of analysis). Coverage = share of the {data['reps']} replications whose interval "
        'contains the true endpoint, with its exact (Clopper-Pearson) 95% interval; "far limit open" = share '
        'of intervals whose upper limit is infinite; "flagged" = share with any flag other than '
        "`large_fraction` (which every given threshold 0 raises).",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    lines += [_row(r) for r in data["rows"]]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="seed of the replications (default 0)")
    ap.add_argument("--reps", type=int, default=200, help="replications per case (default 200)")
    ap.add_argument("--confidence", type=float, default=0.95, help="interval level (0.95)")
    ap.add_argument("--quick", action="store_true", help="fewer GPD sample sizes")
    args = ap.parse_args()
    print(
        f"EVT interval coverage, {args.reps} replications per case, seed {args.seed}, "
        f"confidence {args.confidence:g}; {platform.python_version()}, numpy {np.__version__}\n"
    )
    rows = []
    for i, case in enumerate(cases(args.quick)):
        r = run_case(case, args.reps, args.seed + 1000 * i, args.confidence)
        rows.append({**r, "ci": list(r["ci"])})
        print(_row(r), flush=True)
    data = {"seed": args.seed, "reps": args.reps, "confidence": args.confidence, "quick": args.quick, "rows": rows}
    write_results("evt-coverage-quick" if args.quick else "evt-coverage", data, modules=MODULES)


if __name__ == "__main__":
    main()
