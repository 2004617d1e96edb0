"""The exact CP-SAT binding model's size on the scaling specs (issue 26): placement literals
(threads x usable contexts), variables, constraints, build time and the resident memory the
build adds, for 16 to 512 contexts.  Each size is built in a child process so that the memory
figure is its own.

    python bench/scale_model_size.py --sizes 16 32 64 128 256 512
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import write_results

NAME = "scale_model_size"
CHILD = """
import json, resource, sys, time
sys.path.insert(0, {bench!r})
from scale_specs import server_spec
from tasksolve.solver.binding.model import BindingModel
from tasksolve.solver.binding.problem import BindingProblem
problem = BindingProblem(server_spec({contexts}))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
model = BindingModel(problem)
wall = time.perf_counter() - start
proto = model.model.proto
print(json.dumps({{"contexts": {contexts}, "threads": problem.n_threads,
    "literals": sum(len(row) for row in problem.allowed), "variables": len(proto.variables),
    "constraints": len(proto.constraints), "build_s": wall,
    "build_rss_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024}}))
"""


def measure(contexts: int) -> dict:
    code = CHILD.format(bench=str(Path(__file__).resolve().parent), contexts=contexts)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def render_markdown(data: dict) -> str:
    lines = [
        f"`{data['command']}` -- one child process per size; memory: the peak resident size the build added.",
        "",
        "| contexts | threads | placement literals (threads x contexts) | variables | constraints | "
        "variables / (threads x contexts) | build (s) | build memory (MB) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in data["rows"]:
        ratio = r["variables"] / (r["threads"] * r["contexts"])
        lines.append(
            f"| {r['contexts']} | {r['threads']} | {r['literals']:,} | {r['variables']:,} | {r['constraints']:,} | "
            f"{ratio:.2f} | {r['build_s']:.1f} | {r['build_rss_mb']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 32, 64, 128, 256, 512])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rows = []
    for contexts in args.sizes:
        rows.append(measure(contexts))
        print(json.dumps(rows[-1]), flush=True)
    data = {"command": "python bench/scale_model_size.py " + " ".join(sys.argv[1:]), "rows": rows}
    if not args.no_write:
        write_results(NAME, data, modules=["bench/scale_specs.py", "solver/binding/model.py"])
    print(render_markdown(data))


if __name__ == "__main__":
    main()
