"""The main job on today's servers: ``tasksolve run`` on `bench/scale_specs.py`'s 2 x N x 2 servers.

For each size a child process runs ``tasksolve run SPEC --out DIR --time-limit T --json`` under
``/usr/bin/time``: its exit code, wall time and peak resident memory (the largest process of
the job: the main one or one worker), the verdict, the phases' times (solve, certify, report),
why sampling stopped, the certify steps that ran short of its budget (the certificate's
``budget.short``), how far the deciding bound lies above the plan, and how far the plan's own
fluid bound lies above it (where the budget afforded it: the share of the gap the relaxation over
plans makes).  The goals (issues "A performance engineer's tool" and "The main job on today's
servers"): the job ends within 10% of its time limit plus start-up, under 2 GB at 512 contexts,
with a verdict at every size.  One run per size; the machine and its load at the start are
recorded.

    nice python bench/run_servers.py --sizes 64 128 256 --time-limit 60
    nice python bench/run_servers.py --sizes 512 --mem-limit-gb 8 --name run_servers_512

``--mem-limit-gb`` caps each process's address space (``RLIMIT_AS``), so that a job that would
exhaust the machine fails with a memory error instead.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import run_measured, write_results
from scale_specs import server_data

NAME = "run_servers"
MODULES = [
    "bench/scale_specs.py",
    "solver/job/job.py",
    "solver/job/settings.py",
    "solver/job/binding.py",
    "solver/binding/compare.py",
    "solver/binding/local_search.py",
    "solver/certify/run.py",
    "solver/certify/designs.py",
    "solver/certify/certification.py",
    "solver/certify/budget.py",
    "solver/certify/service.py",
    "simulate/des/run.py",
]


def _limit(gigabytes: float | None):
    if gigabytes is None:
        return None
    size = int(gigabytes * 2**30)
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (size, size))


def run_one(contexts: int, time_limit: float, folder: Path, mem_limit_gb: float | None) -> dict:
    """One `tasksolve run` on the server of `contexts` contexts: its figures, wall time and peak RSS."""
    spec_file = folder / f"server-{contexts}.yaml"
    spec_file.write_text(yaml.safe_dump(server_data(contexts), sort_keys=False))
    out = folder / f"out-{contexts}"
    command = [sys.executable, "-m", "tasksolve", "run", str(spec_file), "--out", str(out)]
    command += ["--time-limit", str(time_limit), "--json"]
    load = os.getloadavg()[0]
    done, wall, rss = run_measured(command, preexec_fn=_limit(mem_limit_gb))
    row = {
        "contexts": contexts,
        "threads": 3 * contexts // 4,
        "exit": done.returncode,
        "wall_s": wall,
        "load_at_start": load,
        "peak_rss_mb": rss,
    }
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        row["error"] = done.stderr.strip().splitlines()[-3:]
        return row
    if "error" in result:
        row["error"] = result["error"]
        return row
    cert = result["certificate"]
    plan = cert["plan_performance"]["value"]
    applying = [b for b in cert["bounds"] if b.get("applies") and b.get("value")]
    bound = min(b["value"] for b in applying) if applying else None
    own = [b["plan_bound"] for b in applying if b.get("plan_bound")]
    row.update(
        verdict=result["verdict"],
        sentence=cert["sentence"],
        phases_s=result.get("seconds"),
        certify_s=result.get("certify_seconds"),
        adopted=result.get("adopted"),
        samples=cert["samples"].get("n"),
        stopped=cert["samples"].get("stopped"),
        budget_s=cert["samples"].get("budget_s"),
        plan=plan,
        bound=bound,
        bound_above_plan=None if bound is None else bound / plan - 1.0,
        plan_bound_above_plan=own[0] / plan - 1.0 if own else None,
        short=(cert.get("budget") or {}).get("short", []),
    )
    return row


def render_markdown(data: dict) -> str:
    limit = data["time_limit"]
    lines = [
        f"`{data['command']}` -- one child process per size, `--time-limit {limit:g}`, peak RSS from "
        "`/usr/bin/time -v` (the largest process of the job).",
        "",
        "| contexts (threads) | exit | verdict | wall (s) | solve / certify / report (s) | within 10% + 5 s | "
        "samples | bound above plan | plan's own bound above it | peak RSS (MB) | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for row in data["rows"]:
        phases = row.get("phases_s") or {}
        split = " / ".join(f"{phases[k]:.0f}" for k in ("solve", "certify", "report") if k in phases) or "-"
        gap, own = row.get("bound_above_plan"), row.get("plan_bound_above_plan")
        lines.append(
            f"| {row['contexts']} ({row['threads']}) | {row['exit']} | {row.get('verdict', row.get('error', '-'))} | "
            f"{row['wall_s']:.1f} | {split} | {'yes' if row['wall_s'] <= 1.1 * limit + 5 else 'no'} | "
            f"{row.get('samples', '-')} | {'-' if gap is None else f'{gap:.2%}'} | "
            f"{'-' if own is None else f'{own:.2%}'} | {row['peak_rss_mb'] or 0:.0f} | {row['load_at_start']:.1f} |"
        )
        notes += [f"- {row['contexts']} contexts: {s}" for s in row.get("short") or []]
    if notes:
        lines += ["", "Certify steps that ran short of the budget (the certificate's `budget.short`):", "", *notes]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--mem-limit-gb", type=float, default=None)
    parser.add_argument("--name", default=NAME, help="results file name (bench/results/NAME.json)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            row = run_one(size, args.time_limit, Path(tmp), args.mem_limit_gb)
            print(json.dumps(row), flush=True)
            rows.append(row)
    command = "python bench/run_servers.py " + " ".join(sys.argv[1:])
    data = {"command": command, "time_limit": args.time_limit, "mem_limit_gb": args.mem_limit_gb, "rows": rows}
    write_results(args.name, data, modules=MODULES)
    print(render_markdown(data))


if __name__ == "__main__":
    main()
