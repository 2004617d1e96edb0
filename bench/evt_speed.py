"""Speed of the EVT analysis on samples of n = 5000 (Beta(2,5) values, a new seeded sample per
repetition): median and 90th percentile wall time of

* the GPD fit + profile-likelihood interval on the 250 largest values (threshold given);
* `evt.analyze` without bootstrap (automatic threshold among 10 candidates + fit + interval +
  standard errors): the "fit + interval" figure of the acceptance;
* `evt.analyze` with the default 200 bootstrap refits for the goodness-of-fit p-values.

    python bench/evt_speed.py --seed 0 --repeats 50
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from results import markdown_table, write_results
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tasksolve import evt
from tasksolve.evt.endpoint import endpoint_interval
from tasksolve.evt.gpd import fit_gpd


def timed(func, samples: list[np.ndarray]) -> np.ndarray:
    out = []
    for x in samples:
        t0 = time.perf_counter()
        func(x)
        out.append(time.perf_counter() - t0)
    return np.asarray(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="seed of the samples (default 0)")
    ap.add_argument("--repeats", type=int, default=50, help="samples timed per row (default 50)")
    ap.add_argument("--n", type=int, default=5000, help="sample size (default 5000)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    samples = [stats.beta(2, 5).rvs(args.n, random_state=rng) for _ in range(args.repeats)]
    evt.analyze(samples[0])  # warm-up: imports (statsmodels, scipy.stats) and caches

    def fit_only(x: np.ndarray) -> None:
        xs = np.sort(x)
        u = xs[-(args.n // 20) - 1]
        y = xs[xs > u] - u
        endpoint_interval(y, fit_gpd(y), 0.95)

    rows = [
        ("GPD fit + profile interval, k = n/20 excesses (threshold given)", fit_only),
        ("analyze(gof_bootstrap=0): auto threshold + fit + interval + se", lambda x: evt.analyze(x, gof_bootstrap=0)),
        ("analyze() default: + 200 bootstrap refits for GoF p-values", lambda x: evt.analyze(x, seed=args.seed)),
    ]
    out = []
    for name, func in rows:
        t = timed(func, samples)
        out.append({"operation": name, "median": float(np.median(t)), "p90": float(np.quantile(t, 0.9))})
        print(out[-1], flush=True)
    data = {"seed": args.seed, "repeats": args.repeats, "n": args.n, "load": os.getloadavg()[0], "rows": out}
    write_results("evt-speed", data, modules=MODULES)


MODULES = ["evt/analysis.py", "evt/endpoint.py", "evt/gpd.py", "evt/threshold.py", "evt/gof.py"]


def render_markdown(data: dict) -> str:
    rows = [[r["operation"], f"{r['median']:.4f}", f"{r['p90']:.4f}"] for r in data["rows"]]
    return (
        f"Command: `python bench/evt_speed.py --seed {data['seed']} --repeats {data['repeats']}` ({data['repeats']} "
        f"different Beta(2,5) samples of {data['n']}, one timing each, after one warm-up call that pays the imports; "
        f"load average {data['load']:.1f} at the end).\n\n"
        + markdown_table(["operation", "median (s)", "p90 (s)"], rows)
    )


if __name__ == "__main__":
    main()
