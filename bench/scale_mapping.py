"""Communication-heavy mappings: tasksolve against a graph-mapping peer (KaHIP, issue 26).

The spec: `bench/scale_specs.py`'s server topology (2 sockets x N cores x 2 SMT) with the cache
communication model (messages cost per 64-byte line, by the innermost shared cache), and 6-task
chains that exchange 256 B to 4 KB per packet with light demands: where the threads go is mostly
a question of who talks to whom.

* **tasksolve**: `solve_binding` on the closed form (local search, the level LP's plan and
  bound, CP-SAT) with the time limit given.
* **KaHIP** (`pip install kahip`; Sanders & Schulz, "Think locally, act globally: highly
  balanced graph partitioning", SEA 2013): hierarchical multisection along the machine, the way
  KaHIP's own process mapping works -- the thread graph (edge weights: bytes per packet) is cut
  into the sockets, each socket's part into its cores (at most 2 threads each), with `kaffpa`
  (STRONG, imbalance 0); blocks go to sockets and cores in order.

Both plans are valued on tasksolve's model (closed-form total throughput) and on the peer's
objective, *hop-bytes*: the sum over edges of bytes x hops, hops = 1 within a core, 2 within a
socket, 3 across sockets.  Wall times are each method's own.

    python bench/scale_mapping.py --contexts 64 --time-limit 30
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import write_results
from scale_specs import server_data

NAME = "scale_mapping"
SIZES = {"a": [256, 1024, 256, 4096, 512], "b": [4096, 4096, 64, 1024, 2048], "c": [512, 512, 512, 512, 512]}


def comm_spec_data(contexts: int) -> dict:
    """The communication-heavy spec: 3 chain kinds of 6 tasks, as many instances of each as fit
    in 75% of the contexts (36 threads on 64 contexts)."""
    data = server_data(contexts, name=f"comm-{contexts}")
    data["topology"]["communication"] = {
        "model": "cache",
        "line": "64B",
        "latency": {"core": 14, "socket": 110, "machine": 190},
        "hit_rate": {"core": 0.95, "socket": 0.5},
    }
    apps = {}
    for kind, sizes in SIZES.items():
        tasks = {f"s{i}": {"cycles": 300 + 50 * i, "demand": {"l1": 0.2, "l3": 0.05}} for i in range(6)}
        edges = [{"from": f"s{i}", "to": f"s{i + 1}", "bytes": f"{b}B"} for i, b in enumerate(sizes)]
        apps[kind] = {"tasks": tasks, "edges": edges}
    data["applications"] = apps
    threads = 3 * contexts // 4
    per_kind = threads // (6 * len(SIZES))
    data["workload"] = [{"app": kind, "instances": per_kind} for kind in SIZES]
    return data


def hop_bytes(problem, contexts: list[int]) -> int:
    """Sum over edges of bytes x hops (1 same core, 2 same socket, 3 across sockets)."""
    topo = problem.topology
    total = 0
    for p, c, size in problem.edges:
        a, b = contexts[p], contexts[c]
        if topo.domain_of(a, 1) == topo.domain_of(b, 1):
            total += size
        elif topo.domain_of(a, 0) == topo.domain_of(b, 0):
            total += 2 * size
        else:
            total += 3 * size
    return total


def _kaffpa(nodes: list[int], edges: dict[tuple[int, int], int], blocks: int, seed: int) -> list[int]:
    """KaHIP's kaffpa on the subgraph of `nodes`: a block per node (balanced, imbalance 0)."""
    import kahip

    if blocks == 1:
        return [0] * len(nodes)
    index = {v: i for i, v in enumerate(nodes)}
    adjacency: list[dict[int, int]] = [{} for _ in nodes]
    for (u, v), w in edges.items():
        if u in index and v in index:
            adjacency[index[u]][index[v]] = adjacency[index[u]].get(index[v], 0) + w
            adjacency[index[v]][index[u]] = adjacency[index[v]].get(index[u], 0) + w
    xadj, adjncy, weights = [0], [], []
    for row in adjacency:
        for v, w in sorted(row.items()):
            adjncy.append(v)
            weights.append(w)
        xadj.append(len(adjncy))
    _, parts = kahip.kaffpa([1] * len(nodes), xadj, weights, adjncy, blocks, 0.0, True, seed, kahip.STRONG)
    return list(parts)


def kahip_plan(problem, seed: int = 0) -> list[int]:
    """Hierarchical multisection: sockets, then cores (module docstring)."""
    topo = problem.topology
    edges: dict[tuple[int, int], int] = {}
    for p, c, size in problem.edges:
        edges[(p, c)] = edges.get((p, c), 0) + size
    threads = list(range(problem.n_threads))
    sockets = topo.domain_count(0)
    plan = [-1] * problem.n_threads
    socket_of = _kaffpa(threads, edges, sockets, seed)
    for s in range(sockets):
        members = [t for t, b in zip(threads, socket_of) if b == s]
        cores = list(range(topo.contexts_of(0, s).start, topo.contexts_of(0, s).stop, topo.strides[1]))
        core_of = _kaffpa(members, edges, min(len(cores), max(1, -(-len(members) // topo.strides[1]))), seed)
        slots = {j: list(range(cores[j], cores[j] + topo.strides[1])) for j in range(len(cores))}
        spill = []
        for t, j in zip(members, core_of):
            (plan.__setitem__(t, slots[j].pop(0)) if slots[j] else spill.append(t))
        free = [c for j in slots for c in slots[j]]
        for t in spill:  # kaffpa's balance is up to rounding: a thread over a core's 2 goes to a free one
            plan[t] = free.pop(0)
    return plan


def compare(contexts: int, time_limit: float, workers: int, seed: int) -> dict:
    from tasksolve.simulate.analytic import BatchModel
    from tasksolve.solver.binding.cpsat import solve_binding
    from tasksolve.solver.binding.problem import BindingProblem
    from tasksolve.specs import load_spec_text

    spec = load_spec_text(yaml.safe_dump(comm_spec_data(contexts), sort_keys=False), f"comm-{contexts}.yaml")
    problem = BindingProblem(spec)
    start = time.perf_counter()
    peer = kahip_plan(problem, seed)
    peer_wall = time.perf_counter() - start
    start = time.perf_counter()
    result = solve_binding(problem, time_limit=time_limit, workers=workers, seed=seed)
    ours_wall = time.perf_counter() - start
    ours = result.best.contexts
    values = BatchModel(spec).evaluate(np.array([ours, peer])).values("total_throughput")
    return {
        "contexts": contexts,
        "threads": problem.n_threads,
        "tasksolve": {
            "throughput": float(values[0]),
            "hop_bytes": hop_bytes(problem, ours),
            "wall_s": ours_wall,
            "bound": result.best.bound,
            "status": result.status,
        },
        "kahip": {"throughput": float(values[1]), "hop_bytes": hop_bytes(problem, peer), "wall_s": peer_wall},
    }


def render_markdown(data: dict) -> str:
    lines = [
        f"`{data['command']}` (KaHIP {data['kahip_version']}, kaffpa STRONG, seed {data['seed']}).",
        "",
        "| contexts (threads) | method | throughput, closed form (Mpps) | hop-bytes per packet | wall (s) |",
        "|---|---|---|---|---|",
    ]
    for row in data["rows"]:
        for method in ("tasksolve", "kahip"):
            r = row[method]
            extra = f" (bound {r['bound'] / 1e6:.3f}, {r['status']})" if method == "tasksolve" else ""
            lines.append(
                f"| {row['contexts']} ({row['threads']}) | {method} | {r['throughput'] / 1e6:.3f}{extra} | "
                f"{r['hop_bytes']:,} | {r['wall_s']:.2f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contexts", type=int, nargs="+", default=[64])
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    import importlib.metadata

    rows = [compare(n, args.time_limit, args.workers, args.seed) for n in args.contexts]
    data = {
        "command": "python bench/scale_mapping.py " + " ".join(sys.argv[1:]),
        "kahip_version": importlib.metadata.version("kahip"),
        "seed": args.seed,
        "rows": rows,
    }
    if not args.no_write:
        write_results(NAME, data, modules=["bench/scale_mapping.py", "solver/binding/cpsat.py"])
    print(render_markdown(data))


if __name__ == "__main__":
    main()
