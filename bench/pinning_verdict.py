"""Does pinning help? How often `solver.binding.noisy.race_finalists` answers right on the test bed.

The truth is `bench/testbed/truth.py` (CV 5% log-normal noise, 2% outliers, 1% drift per run);
the unpinned run lands where `truth.os_plan` puts the threads (mean 1.027 Mpps, `unpinned_rate`).
Per seed, four finalists drawn from the test bed's placements by their true rate relative to the
unpinned mean, in four scenarios:

* ``helps``: one finalist 4-8% above the unpinned mean, three 2-10% below (the right verdict:
  helps);
* ``loses``: four finalists 3-15% below it (right: does not help);
* ``within``: the best finalist 0-1% above it, three below (right: not "helps"; inside the 2%
  zone either other answer is right);
* ``insensitive``: every plan and the unpinned run at one rate (right: does not help).

Each race: zone 2%, ``repeats`` 3 (first stage 5), no warm-up, ``budget`` 30 and 100 runs per
plan (the race's budget is that times the plans; the verdict's paired runs, that many rounds).
The figures: the share of each verdict (helps / does not / undecided) with a 95% Wilson
interval on the right one, and the median runs spent.

    python bench/pinning_verdict.py --seeds 40 --budget 30 100
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "testbed"))

import truth  # noqa: E402

from bench.results import write_results  # noqa: E402
from tasksolve.simulate.noise import RepeatPolicy, noise_floor  # noqa: E402
from tasksolve.solver.binding.noisy import Finalist, race_finalists  # noqa: E402

UNPINNED = "unpinned"
SCENARIOS = {  # (best band, rest band) relative to the unpinned mean; None: insensitive
    "helps": ((0.04, 0.08), (-0.10, -0.02)),
    "loses": ((-0.15, -0.03), (-0.15, -0.03)),
    "within": ((0.0, 0.01), (-0.10, -0.02)),
    "insensitive": None,
}

RIGHT = {
    "helps": lambda v: v is True,
    "loses": lambda v: v is False,
    "within": lambda v: v is not True,
    "insensitive": lambda v: v is False,
}


class TestBedOracle:
    """The test bed in process, with the command oracle's racing interface."""

    def __init__(self, seed: int, insensitive: bool, budget: int = 30) -> None:
        self.noise = truth.Noise(seed=seed)
        self.rng = random.Random(seed + 1)
        self.insensitive = insensitive
        self.policy = RepeatPolicy(repeats=3, warmup=0, precision=0.01, budget=budget)
        self.runs: dict[object, list[float]] = {}
        self.count = 0

    def unpinned(self) -> str:
        return UNPINNED

    def run_once(self, placement, seed=None):
        plan = truth.os_plan(self.rng) if placement == UNPINNED else placement
        rate = truth.INSENSITIVE_RATE if self.insensitive else truth.true_rate(plan)
        figure = rate * self.noise.factor()
        self.runs.setdefault(placement, []).append(figure)
        self.count += 1
        return figure, None

    def noise_floor(self):
        return noise_floor([r for p, r in self.runs.items() if p != UNPINNED])


def by_gap() -> list[tuple[float, tuple]]:
    base = truth.unpinned_rate()
    found: dict[float, tuple] = {}
    for plan in truth.all_plans():
        found.setdefault(round(truth.true_rate(plan) / base - 1, 4), plan)
    return sorted(found.items())


def pick(rng: random.Random, gaps, band, k: int) -> list[tuple]:
    return rng.sample([p for g, p in gaps if band[0] <= g < band[1]], k)


def one(scenario: str, seed: int, gaps, budget: int) -> tuple[bool | None, int, float | None]:
    rng = random.Random(seed)
    bands = SCENARIOS[scenario]
    plans = pick(rng, gaps, (-0.1, 0.1), 4) if bands is None else pick(rng, gaps, bands[0], 1)
    if bands is not None:
        plans += pick(rng, gaps, bands[1], 3)
    oracle = TestBedOracle(seed, bands is None, budget)
    finalists = [Finalist(f"plan {i}", list(p), tuple(p)) for i, p in enumerate(plans)]
    verdict = race_finalists(oracle, finalists, "total_throughput", zone=0.02, seed=seed)
    return verdict.pinning_helps, oracle.count, verdict.noise_floor


def wilson(hits: int, n: int) -> list[float]:
    z, p = 1.96, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--budget", type=int, nargs="+", default=[30, 100])
    args = parser.parse_args()
    gaps = by_gap()
    data = {"seeds": args.seeds, "zone": 0.02, "unpinned_rate": truth.unpinned_rate(), "scenarios": {}}
    for budget in args.budget:
        for scenario in SCENARIOS:
            data["scenarios"][f"{scenario}, budget {budget}"] = summary(scenario, gaps, budget, args.seeds)
            print(scenario, budget, data["scenarios"][f"{scenario}, budget {budget}"], flush=True)
    write_results(
        "pinning_verdict",
        data,
        modules=[
            "solver/binding/noisy.py",
            "solver/selection/racing.py",
            "simulate/noise.py",
            "bench/testbed/truth.py",
        ],
    )


def summary(scenario: str, gaps, budget: int, seeds: int) -> dict:
    """The verdicts of `seeds` races of one scenario."""
    results = [one(scenario, seed, gaps, budget) for seed in range(seeds)]
    verdicts = [v for v, _, _ in results]
    right = sum(RIGHT[scenario](v) for v in verdicts)
    return {
        "helps": sum(v is True for v in verdicts),
        "does_not": sum(v is False for v in verdicts),
        "undecided": sum(v is None for v in verdicts),
        "right": right,
        "right_interval": wilson(right, len(verdicts)),
        "runs_median": statistics.median(n for _, n, _ in results),
        "noise_floor_median": statistics.median(f for _, _, f in results if f is not None),
    }


def render_markdown(data: dict) -> str:
    lines = [
        f"Does pinning help? `race_finalists` on the test bed, {data['seeds']} seeds per scenario, zone "
        f"{data['zone']:.0%}, budget (runs per plan) as given (`bench/pinning_verdict.py`).",
        "",
        "| scenario | helps | does not | undecided | right (95% Wilson) | runs (median) | noise floor |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in data["scenarios"].items():
        low, high = s["right_interval"]
        lines.append(
            f"| {name} | {s['helps']} | {s['does_not']} | {s['undecided']} | {s['right']} [{low:.0%}, {high:.0%}] "
            f"| {s['runs_median']:.0f} | {s['noise_floor_median']:.1%} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
