"""Scaling bench (issue 26): proven-good bindings on 2 x N x 2 servers of 16 to 512 contexts.

For each size, `bench/scale_specs.py`'s spec is solved by a child process running
``tasksolve solve SPEC --method cpsat --oracle analytic --time-limit T --workers W --json`` under
``/usr/bin/time``: its exit code, CP-SAT's status, the plan's value, the proven bound and gap,
the bound's source, the wall time and the child's peak resident memory are recorded.  One run per
size (each takes the whole time limit on a large machine); the machine is shared, so walls vary.

    python bench/scale_binding.py --sizes 16 32 64 128 256 512 --time-limit 60 --workers 2
    python bench/scale_binding.py --sizes --specs t2-ipfwd-x20 --time-limit 30 --name scale_binding_t2
    python bench/scale_binding.py --sizes --specs huge-4x500 --time-limit 30 --name scale_binding_huge

``huge-4x500`` is `scale_specs.huge_data`'s spec (4 instances of a 500-task chain on 256 x 8
contexts): whether the time limit holds for the whole process (10% + 2 s) and memory stays
under 2 GB where no exact model fits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import run_measured, write_results
from scale_specs import huge_data, server_data

NAME = "scale_binding"
MODULES = [
    "bench/scale_specs.py",
    "solver/binding/cpsat.py",
    "solver/binding/model.py",
    "solver/binding/configuration_lp.py",
    "solver/binding/configurations.py",
    "solver/binding/level_lp.py",
    "solver/binding/level_plan.py",
    "solver/binding/local_search.py",
    "solver/binding/compare.py",
    "solver/binding/samplers.py",
    "solver/cli/solve_command.py",
    "simulate/analytic.py",
]
HUGE = "huge-4x500"  # --specs name of `huge_data()`


def run_one(contexts: int | str, time_limit: float, workers: int, folder: Path) -> dict:
    """Solve one size (or a built-in example, by name) in a child process; its figures, peak RSS
    and exit code."""
    if contexts == HUGE:
        spec_file = folder / f"{HUGE}.yaml"
        spec_file.write_text(yaml.safe_dump(huge_data(), sort_keys=False))
    elif isinstance(contexts, str):
        spec_file = contexts
    else:
        spec_file = folder / f"server-{contexts}.yaml"
        spec_file.write_text(yaml.safe_dump(server_data(contexts), sort_keys=False))
    command = [
        sys.executable,
        "-m",
        "tasksolve",
        "solve",
        str(spec_file),
        "--method",
        "cpsat",
        "--oracle",
        "analytic",
        "--time-limit",
        str(time_limit),
        "--workers",
        str(workers),
        "--json",
    ]
    done, wall, rss = run_measured(command)
    row = {
        "contexts": contexts,
        "threads": 3 * contexts // 4 if isinstance(contexts, int) else None,
        "exit": done.returncode,
        "wall_s": wall,
        "peak_rss_mb": rss,
    }
    try:
        out = json.loads(done.stdout)
    except json.JSONDecodeError:
        row["error"] = done.stderr.strip().splitlines()[-3:]
        return row
    details = out.get("details", {}).get("cpsat") or {}
    row.update(
        status=out.get("status"),
        objective=out.get("objective"),
        bound=out.get("bound"),
        gap=out.get("gap"),
        bound_source=details.get("bound_source"),
        found_by=details.get("found_by"),
        steps=details.get("steps"),
        message=out.get("error"),
    )
    return row


def render_markdown(data: dict) -> str:
    lines = [
        f"`{data['command']}` -- one child process per size, {data['time_limit']:g} s limit, "
        f"{data['workers']} workers, peak RSS from `/usr/bin/time -v`"
        + (f"; load average {data['load']:.1f} on the 2 cores at the start." if "load" in data else "."),
        "",
        "| contexts (threads) | exit | status | plan (Mpps) | bound (Mpps) | bound from | proven gap | wall (s) "
        "| limit held (10% + 2 s) | peak RSS (MB) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    held = 1.1 * data["time_limit"] + 2
    for row in data["rows"]:
        obj, bound, gap = row.get("objective"), row.get("bound"), row.get("gap")
        label = f"{row['contexts']} ({row['threads']})" if row["threads"] is not None else row["contexts"]
        lines.append(
            f"| {label} | {row['exit']} | {row.get('status', '-')} | "
            f"{'-' if obj is None else f'{obj / 1e6:.3f}'} | "
            f"{'-' if bound is None or bound == float('inf') else f'{bound / 1e6:.3f}'} | "
            f"{row.get('bound_source') if bound is not None and bound != float('inf') else '-'} | "
            f"{'none' if gap is None or gap == float('inf') else f'{gap:.2%}'} | "
            f"{row['wall_s']:.1f} | {'yes' if row['wall_s'] <= held else 'no'} | {row['peak_rss_mb'] or 0:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[16, 32, 64, 128, 256, 512])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--specs", nargs="*", default=[], help="built-in examples to run as well (by name)")
    parser.add_argument("--name", default=NAME, help="results file name")
    parser.add_argument("--no-write", action="store_true", help="print only, write no results file")
    args = parser.parse_args()
    rows = []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for contexts in [*args.sizes, *args.specs]:
            rows.append(run_one(contexts, args.time_limit, args.workers, Path(tmp)))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "steps"}), flush=True)
    command = "python bench/scale_binding.py " + " ".join(sys.argv[1:])
    data = {"command": command, "time_limit": args.time_limit, "workers": args.workers, "rows": rows, "load": load}
    if not args.no_write:
        write_results(args.name, data, modules=MODULES)
    print(render_markdown(data))


if __name__ == "__main__":
    main()
