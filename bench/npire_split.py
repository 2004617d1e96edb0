"""NPIRE's task-splitting feedback loop (§2.5) on the NPIRE-like router: `split_search` splits
the largest tasks in two while LATA's closed-form throughput on the first CORES contexts rises,
at most five times.  Prints one line per kept split and writes ``bench/results/npire-split.json``.

    python bench/npire_split.py 4 8 16
"""

from __future__ import annotations

import argparse

from results import markdown_table, write_results

from tasksolve.solver.pipeline.lata import lata
from tasksolve.solver.pipeline.npire import split_search
from tasksolve.solver.pipeline.problem import PipelineProblem
from tasksolve.specs import load_spec

MODULES = [
    "solver/pipeline/npire.py",
    "solver/pipeline/lata.py",
    "solver/pipeline/lata_premap.py",
    "solver/pipeline/problem.py",
    "solver/pipeline/evaluation.py",
    "solver/pipeline/mapping.py",
    "solver/pipeline/sync.py",
    "specs/examples/t2-npire-router.yaml",
]


def search(spec, cores: int) -> list[dict]:
    """The kept splits and LATA's closed-form throughput (Mpps) after each, on `cores` contexts."""

    def throughput(candidate) -> float:
        problem = PipelineProblem.from_spec(candidate, latency_max=None, cores=cores)
        return problem.throughput(lata(problem).evaluation.period)

    _, history = split_search(spec, throughput)
    return [{"split": row["split"], "mpps": round(row["value"] / 1e6, 6)} for row in history]


def render_markdown(data: dict) -> str:
    rows = []
    for run in data["runs"]:
        kept = [h["split"] for h in run["history"] if h["split"]]
        values = " -> ".join(f"{h['mpps']:.3f}" for h in run["history"])
        rows.append([run["cores"], ", ".join(kept) or "none", values])
    head = (
        f"`python bench/npire_split.py {' '.join(str(r['cores']) for r in data['runs'])}` "
        f"(`split_search` on `{data['spec']}`, LATA's closed-form throughput as the feedback, at most "
        "5 iterations of the 3 largest tasks; deterministic, re-run by `bench/render.py --rerun-quick`):"
    )
    return head + "\n\n" + markdown_table(["contexts", "splits kept", "Mpps"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cores", type=int, nargs="*", default=[8])
    parser.add_argument("--spec", default="t2-npire-router")
    args = parser.parse_args()
    spec = load_spec(args.spec)
    runs = []
    for cores in args.cores:
        history = search(spec, cores)
        runs.append({"cores": cores, "history": history})
        for row in history:
            print(f"{cores} contexts: {row['split'] or '(none)'}  {row['mpps']:.3f} Mpps")
    write_results("npire-split", {"spec": args.spec, "runs": runs}, modules=MODULES)


if __name__ == "__main__":
    main()
