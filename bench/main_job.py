"""The main job (`tasksolve run`) on built-in examples: wall time per phase, the verdict, and
what certification cost.

    nice python bench/main_job.py [--specs t2-ipfwd-intadd-x2,t2-ipfwd-l1-x8,...] [--workers 1] [--name main_job]
    nice python bench/main_job.py --specs more --name main_job_more   # every other binding example

Each spec runs `solver.job.run` in this process with the defaults a new user gets (the
spec's oracle, time limit and seed; no `--samples`: the adaptive default path, with the certify
phase's time budget derived from the time limit), into a fresh temporary directory.  Recorded:
the wall time of the whole call and of its phases (`JobResult.seconds`: solve, certify, report),
the verdict and its sentence, the samples drawn, the placement classes among them, the certify
phase's own split (`CertifyOutcome.seconds`: bounds -- the fluid LP on the simulation, CP-SAT's
bound --, prepare -- the plan and up to 10 probe restarts --, sampling, verdict, baselines, the
other design's comparison sample), why sampling stopped (decided, the time budget, the ceiling)
and the budget, whether the optimum's estimate is infinite and whether there is none (both are
null in its JSON, with the reason).  The
goals (issue "Verdicts a person can act on"): the flagship <= 15 s, t2-ipfwd-l1-x8 and the other
binding examples <= 90 s, xeon-lata-dag <= 120 s, with no infinite estimate.  Times depend on
the machine's load, recorded in the results file.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from results import write_results

DEFAULT = "t2-ipfwd-intadd-x2,t2-ipfwd-l1-x8,t2-constrained,xeon-lata-dag"
#: every other built-in binding example (``--name main_job_more --specs more``)
MORE = (
    "t2-ipfwd-x20,t2-ipfwd-mix-x8,t2-asplos12-mix,manycore-mix,t2-ipfwd-hashn-l1-x2,t2-ipfwd-hashn-mem-x2,"
    "t2-ipfwd-intdiv-x2,t2-ipfwd-intmul-x2,t2-ipfwd-l1-x2,t2-ipfwd-l2-x2,t2-ipfwd-mem-x2"
)
GOALS = {"t2-ipfwd-intadd-x2": 15.0, "xeon-lata-dag": 120.0}
MODULES = [
    "solver/certify/run.py",
    "solver/certify/budget.py",
    "solver/certify/finalists.py",
    "solver/certify/certification.py",
    "solver/certify/settings.py",
    "solver/certify/known.py",
    "solver/job/settings.py",
    "solver/certify/verdict.py",
    "solver/certify/measure.py",
    "solver/certify/service.py",
    "solver/job/job.py",
    "evt/sequential.py",
]


def one(name: str, workers: int) -> dict:
    from tasksolve.solver.job import run
    from tasksolve.specs import load_spec

    spec = load_spec(name)
    with tempfile.TemporaryDirectory() as tmp:
        clock = time.perf_counter()
        result = run(spec, Path(tmp) / "out", workers=workers)
        wall = time.perf_counter() - clock
        cert = result.outcome.certificate
        data = json.loads((Path(tmp) / "out" / "certificate.json").read_text())
    opt = cert.optimum
    return {
        "spec": name,
        "problem": spec.problem,
        "wall_s": wall,
        "phases_s": dict(result.seconds),
        "verdict": cert.verdict,
        "exit_code": cert.exit_code,
        "sentence": cert.sentence,
        "samples": cert.samples.n,
        "classes": cert.samples.classes,
        "certify_s": dict(result.outcome.seconds or {}),
        "stopped": cert.samples.stopped,
        "budget_s": cert.samples.budget_s,
        # an infinite estimate (a tail with no finite end) against none at all (EVT could not
        # analyse the sample: too few samples, an atom at the top); both are null in the JSON
        "infinite_estimate": opt.estimate is not None and not math.isfinite(opt.estimate),
        "no_estimate": opt.estimate is None,
        "nulls": data["optimum"]["nulls"],
        "goal_s": GOALS.get(name, 90.0),
    }


def _seconds(value) -> str:
    return "none" if value is None else f"{value:.0f} s"


def render_markdown(data: dict) -> str:
    rows = [
        "| spec | wall | solve | certify (bounds / prepare / sampling / verdict / other design) | report | samples | classes "
        "| sampling stopped (budget) | verdict (exit) | goal |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in data["runs"]:
        p, c = r["phases_s"], r["certify_s"]
        split = " / ".join(f"{c.get(k, 0):.1f}" for k in ("bounds", "prepare", "sampling", "verdict", "other design"))
        met = "met" if r["wall_s"] <= r["goal_s"] else "**missed**"
        rows.append(
            f"| {r['spec']} | {r['wall_s']:.1f} s | {p.get('solve', 0):.1f} s | {p.get('certify', 0):.1f} s ({split}) | "
            f"{p.get('report', 0):.1f} s | {r['samples']} | {r['classes'] if r['classes'] is not None else '-'} | "
            f"{r.get('stopped', '-')} ({_seconds(r.get('budget_s'))}) | "
            f"`{r['verdict']}` ({r['exit_code']}) | <= {r['goal_s']:.0f} s: {met} |"
        )
    sentences = "\n".join(f'- {r["spec"]}: "{r["sentence"]}"' for r in data["runs"])
    return (
        f"Main job (`tasksolve run SPEC`, defaults; `bench/main_job.py`, workers {data['workers']}), "
        f"load average at the end {data['load_note']}.\n\n"
        + "\n".join(rows)
        + "\n\nThe verdicts' sentences:\n\n"
        + sentences
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", default=DEFAULT, help="comma-separated names, or `more` (`MORE`)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--name", default="main_job", help="results file name (bench/results/NAME.json)")
    args = parser.parse_args()
    import os

    runs = []
    for name in (MORE if args.specs == "more" else args.specs).split(","):
        row = one(name, args.workers)
        runs.append(row)
        print(
            f"{name}: {row['wall_s']:.1f} s {row['phases_s']} {row['verdict']} samples {row['samples']} "
            f"certify {row['certify_s']}",
            flush=True,
        )
    load = os.getloadavg()
    data = {"runs": runs, "workers": args.workers, "load_note": f"{load[0]:.1f} / {load[1]:.1f} (1 / 5 min)"}
    path = write_results(args.name, data, modules=MODULES)
    print(render_markdown(data))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
