"""NPIRE's task-splitting feedback loop (§2.5) on the NPIRE-like router: `split_search` splits
the largest tasks in two while LATA's closed-form throughput on the first CORES contexts rises,
at most five times.  Prints one line per kept split.

    python bench/npire_split.py 16
"""

from __future__ import annotations

import argparse

from tasksolve.solver.pipeline.lata import lata
from tasksolve.solver.pipeline.npire import split_search
from tasksolve.solver.pipeline.problem import PipelineProblem
from tasksolve.specs import load_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cores", type=int, nargs="?", default=8)
    parser.add_argument("--spec", default="t2-npire-router")
    args = parser.parse_args()
    spec = load_spec(args.spec)

    def throughput(candidate) -> float:
        problem = PipelineProblem.from_spec(candidate, latency_max=None, cores=args.cores)
        return problem.throughput(lata(problem).evaluation.period)

    _, history = split_search(spec, throughput)
    for row in history:
        print(f"{row['split'] or '(none)'}  {row['value'] / 1e6:.3f} Mpps")


if __name__ == "__main__":
    main()
