"""How fast `tasksolve count` is, and what it counts: 21 IPFwd instances (63 threads) on the T2.

* the counts (placements, distinct placements modulo the hardware's symmetry): exact integers,
  checked exactly by ``bench/render.py --rerun-quick``;
* the count itself in process (`count_placements` + `count_distinct`, the spec loaded), median
  of REPEATS;
* the whole ``tasksolve count SPEC --json`` process (interpreter start and imports included),
  median of REPEATS.

    python bench/count_speed.py --repeats 5
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results import markdown_table, write_results

from tasksolve.specs import UsableTree, count_distinct, count_placements, load_spec

MODULES = ["specs/counting.py", "specs/symmetry.py", "solver/cli/spec_commands.py", "specs/loader.py"]
NOISY = ["count_ms.median", "process_s.median"]
IGNORE = ["count_ms.runs", "process_s.runs"]

SPEC = """tasksolve: 1
name: t2-ipfwd-l1-x21
topology: ultrasparc-t2
applications:
  l1: ipfwd-l1
workload:
  - {app: l1, instances: 21}
"""


def count_once(path: Path) -> tuple[float, int, int]:
    """Seconds for one in-process count, and the two counts."""
    from tasksolve.solver.cli.spec_commands import COUNT_WORK

    start = time.perf_counter()
    spec = load_spec(str(path))
    threads, contexts = len(spec.threads), len(spec.usable_contexts)
    placements = count_placements(threads, contexts)
    distinct = count_distinct(UsableTree.of(spec.topology, spec.usable_contexts), threads, max_work=COUNT_WORK)
    return time.perf_counter() - start, placements, distinct


def process_once(path: Path) -> tuple[float, dict]:
    """Seconds for one ``tasksolve count --json`` process, and its output."""
    exe = shutil.which("tasksolve", path=str(Path(sys.executable).parent)) or "tasksolve"
    start = time.perf_counter()
    done = subprocess.run([exe, "count", str(path), "--json"], capture_output=True, text=True, check=True)
    return time.perf_counter() - start, json.loads(done.stdout)


def render_markdown(data: dict) -> str:
    ms, proc = data["count_ms"], data["process_s"]
    rows = [
        ["threads / contexts", f"{data['threads']} / {data['contexts']}"],
        ["placements (exact digits)", f"{data['placements_digits']} digits"],
        ["distinct placements modulo symmetry", f"{data['distinct_digits']} digits"],
        [f"spec load + count in process (median of {len(ms['runs'])})", f"{ms['median']:.1f} ms"],
        [f"`tasksolve count --json` process (median of {len(proc['runs'])})", f"{proc['median']:.2f} s"],
    ]
    return (
        f"`python bench/count_speed.py --repeats {len(ms['runs'])}`: `tasksolve count` on 21 IPFwd-L1 "
        "instances on the T2 (63 threads); the counts are exact (checked on re-runs), the times are "
        "wall clock on the shared 2-core machine (medians).\n\n" + markdown_table(["figure", "measured"], rows)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t2-ipfwd-l1-x21.yaml"
        path.write_text(SPEC)
        counts = [count_once(path) for _ in range(args.repeats)]
        procs = [process_once(path) for _ in range(args.repeats)]
    _, placements, distinct = counts[0]
    out = procs[0][1]
    assert out["placements"] == placements and out["distinct_placements"] == distinct, "CLI and library disagree"
    ms = [1e3 * c[0] for c in counts]
    secs = [p[0] for p in procs]
    data = {
        "threads": out["threads"],
        "contexts": out["contexts"],
        "placements": str(placements),
        "distinct": str(distinct),
        "placements_digits": len(str(placements)),
        "distinct_digits": len(str(distinct)),
        "count_ms": {"median": statistics.median(ms), "runs": ms},
        "process_s": {"median": statistics.median(secs), "runs": secs},
    }
    print(json.dumps({k: v for k, v in data.items() if k not in ("placements", "distinct")}, indent=1))
    write_results("count-speed", data, modules=MODULES)


if __name__ == "__main__":
    main()
