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
import platform
import sys
import time
from pathlib import Path

import numpy as np
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
    print(
        f"EVT speed, n = {args.n}, {args.repeats} samples per row, seed {args.seed}; "
        f"Python {platform.python_version()}, numpy {np.__version__}, "
        f"{platform.machine()}\n"
    )
    print("| operation | median (s) | p90 (s) |")
    print("|---|---:|---:|")
    for name, func in rows:
        t = timed(func, samples)
        print(f"| {name} | {np.median(t):.4f} | {np.quantile(t, 0.9):.4f} |", flush=True)


if __name__ == "__main__":
    main()
