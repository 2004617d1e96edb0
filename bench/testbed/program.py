"""The test bed as a program for the command oracle (standard library only, starts in ~30 ms).

    python3 bench/testbed/program.py --plan PLAN.json [--cv 0.05] [--outliers 0.02] [--drift 0.01]
                                     [--period-s 20] [--noise-seed N | --noise-seed-file F]
                                     [--seconds 0]

Reads the plan file the command oracle writes (``{plan_file}``, or ``$TASKSOLVE_PLAN``); its
``cpus`` are the contexts of the test bed's topology (``testbed.yaml`` has no ``os_cpus``, so
context ``c`` is CPU ``c``).  With ``TASKSOLVE_PINNING=none`` (or ``"pinning": "none"`` in the plan file) the program is
unpinned: each run its threads land where `truth.os_plan` puts them (the OS scheduler), drawn
with the run's noise.  ``--insensitive`` makes the rate that of the unpinned mean whatever the
plan (a program placement does not matter to, for the README's second case).
Prints one JSON line: ``rate`` (items/s: the true rate of
`truth.true_rate` times one draw of `truth.Noise`) and ``instances`` (each instance's rate, the
same noise draw).  The noise is drawn fresh each run (``--noise-seed`` fixes it; with
``--noise-seed-file`` each run takes the seed the file holds, 0 when there is none yet, and
leaves the next one: the runs of a test are a fixed sequence of different draws); the drift
follows the wall clock with period ``--period-s``.  ``--seconds`` sleeps that long first,
to stand for a program's run time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import truth


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", default=os.environ.get("TASKSOLVE_PLAN"))
    parser.add_argument("--cv", type=float, default=0.05)
    parser.add_argument("--outliers", type=float, default=0.02)
    parser.add_argument("--drift", type=float, default=0.01)
    parser.add_argument("--period-s", type=float, default=20.0)
    parser.add_argument("--noise-seed", type=int, default=None)
    parser.add_argument("--noise-seed-file", default=None)
    parser.add_argument("--seconds", type=float, default=0.0)
    parser.add_argument("--insensitive", action="store_true")
    args = parser.parse_args(argv)
    if not args.plan:
        print("testbed: no plan (--plan FILE or TASKSOLVE_PLAN)", file=sys.stderr)
        return 2
    with open(args.plan) as handle:
        document = json.load(handle)
    seed = args.noise_seed if args.noise_seed is not None else time.time_ns() ^ os.getpid()
    if args.noise_seed_file:  # runs are sequential (the command oracle measures one at a time)
        path = Path(args.noise_seed_file)
        seed = int(path.read_text()) if path.exists() else 0
        path.write_text(str(seed + 1))
    noise = truth.Noise(cv=args.cv, outlier_p=args.outliers, drift=args.drift, period=args.period_s, seed=seed)
    unpinned = os.environ.get("TASKSOLVE_PINNING") == "none" or document.get("pinning") == "none"
    plan = truth.os_plan(noise.rng) if unpinned else tuple(int(c) for c in document["cpus"])
    if args.seconds > 0:
        time.sleep(args.seconds)
    try:
        rates = truth.instance_rates(plan)
        if args.insensitive:
            rates = [truth.INSENSITIVE_RATE / truth.INSTANCES] * truth.INSTANCES
    except ValueError as exc:
        print(f"testbed: {exc}", file=sys.stderr)
        return 2
    noise.phase = 0.0  # the drift is one slow wave of the wall clock, shared by every run
    factor = noise.factor(time.time())
    instances = {f"pipe#{i}": r * factor for i, r in enumerate(rates)}
    print(json.dumps({"rate": sum(rates) * factor, "instances": instances}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
