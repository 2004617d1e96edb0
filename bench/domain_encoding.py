"""How long CP-SAT takes to prove the binding model's optimum with each encoding of "which domain a
thread runs in" (`solver.binding.domain_terms`): membership literals (the default on levels of at
most `MEMBERSHIP_MAX_DOMAINS` domains) against the integer variable with element constraints and
reified equalities (forced everywhere by setting that limit to 0), on the same model otherwise.

    python bench/domain_encoding.py --repeats 3

Specs: the hybrid desktop example ``alderlake-ids`` and its 14 uniform trees of 24 contexts
(`bench/kinds_speed.py`'s family), and two 24-thread T2 examples (``binding-proof-24``'s).  Each
solve is `BindingModel(problem).solve` alone (no hint, no local search): 2 workers, seed 0, a
wall-clock limit of `LIMIT` s, on deterministic time off (the question is when the proof comes);
both encodings of a spec run back to back in one repetition, in an order alternated by
repetition.  Reported: the median wall time to the end of the solve, its status and objective
(the two encodings must agree on the optimum), and the ratio literals / integer.  The model's
size beside it (variables and constraints as built).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import kinds_speed
from results import markdown_table, write_results

LIMIT = 60.0
T2_SPECS = ["t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8"]
ENCODINGS = {"literals": None, "integer": 0}  # MEMBERSHIP_MAX_DOMAINS: None keeps the default
MODULES = ["solver/binding/domain_terms.py", "solver/binding/model.py", "solver/cpsat.py"]
NOISY = ["rows.*.*.median_s", "rows.*.*.runs_s", "rows.*.ratio", "summary.*"]


def spec_of(name: str):
    from tasksolve.specs import load_spec, load_spec_text

    if name in T2_SPECS:
        return load_spec(kinds_speed.EXAMPLES / f"{name}.yaml")
    return load_spec_text(kinds_speed.twin_text(name), f"<{name}>")


def one(name: str, encoding: str) -> dict:
    """One proof: the model built and solved with `encoding`; wall time, status, objective, size."""
    from tasksolve.solver.binding import domain_terms
    from tasksolve.solver.binding.model import BindingModel
    from tasksolve.solver.binding.problem import BindingProblem

    default = domain_terms.MEMBERSHIP_MAX_DOMAINS
    limit = ENCODINGS[encoding]
    domain_terms.MEMBERSHIP_MAX_DOMAINS = default if limit is None else limit
    try:
        problem = BindingProblem(spec_of(name))
        model = BindingModel(problem)
    finally:
        domain_terms.MEMBERSHIP_MAX_DOMAINS = default
    proto = model.model.proto
    clock = time.perf_counter()
    status, _contexts, solver = model.solve(LIMIT, 2, 0)
    wall = time.perf_counter() - clock
    return {
        "wall_s": wall,
        "status": status,
        "objective": solver.objective_value if status in ("OPTIMAL", "FEASIBLE") else None,
        "variables": len(proto.variables),
        "constraints": len(proto.constraints),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    names = ["alderlake-ids", *kinds_speed.twin_names("alderlake-ids"), *T2_SPECS]
    runs: dict[str, dict[str, list[dict]]] = {n: {e: [] for e in ENCODINGS} for n in names}
    for rep in range(args.repeats):
        order = list(ENCODINGS) if rep % 2 == 0 else list(reversed(ENCODINGS))
        for name in names:
            for encoding in order:
                runs[name][encoding].append(one(name, encoding))
                print(rep, name, encoding, f"{runs[name][encoding][-1]['wall_s']:.2f} s", file=sys.stderr)
    rows = {}
    for name, by_encoding in runs.items():
        row = {}
        for encoding, results in by_encoding.items():
            row[encoding] = {
                "median_s": statistics.median(r["wall_s"] for r in results),
                "runs_s": [r["wall_s"] for r in results],
                "statuses": sorted({r["status"] for r in results}),
                "objectives": sorted({r["objective"] for r in results if r["objective"] is not None}),
                "variables": results[0]["variables"],
                "constraints": results[0]["constraints"],
            }
        row["ratio"] = row["literals"]["median_s"] / row["integer"]["median_s"]
        rows[name] = row
    ratios = [r["ratio"] for r in rows.values()]
    data = {
        "repeats": args.repeats,
        "limit_s": LIMIT,
        "rows": rows,
        "summary": {"median_ratio": statistics.median(ratios), "lowest": min(ratios), "highest": max(ratios)},
    }
    path = write_results(
        "domain-encoding", data, modules=MODULES, command=f"python bench/domain_encoding.py --repeats {args.repeats}"
    )
    print(render_markdown(data))
    print(f"wrote {path}", file=sys.stderr)


def render_markdown(data: dict) -> str:
    rows = []
    for name, row in data["rows"].items():
        lit, num = row["literals"], row["integer"]
        agree = "yes" if lit["objectives"] == num["objectives"] else "**no**"
        rows.append(
            [
                f"`{name}`",
                f"{lit['median_s']:.2f} s ({', '.join(lit['statuses'])})",
                f"{num['median_s']:.2f} s ({', '.join(num['statuses'])})",
                f"{row['ratio']:.2f}",
                agree,
                f"{lit['variables']:,} / {lit['constraints']:,}",
                f"{num['variables']:,} / {num['constraints']:,}",
            ]
        )
    columns = ["spec", "literals: wall (status)", "integer: wall (status)", "ratio", "same optimum"]
    columns += ["literals: vars / constraints", "integer: vars / constraints"]
    s = data["summary"]
    return (
        f"CP-SAT alone on the binding model, 2 workers, seed 0, {data['limit_s']:.0f} s wall limit, no hint; "
        f"median of {data['repeats']} runs each, both encodings back to back.\n\n"
        + markdown_table(columns, rows)
        + f"\n\nRatio literals / integer: median **{s['median_ratio']:.2f}** ({s['lowest']:.2f}-{s['highest']:.2f})."
    )


if __name__ == "__main__":
    main()
