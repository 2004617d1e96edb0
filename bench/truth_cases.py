"""The specs of the certification truth study (`bench/certify_truth.py`) and their known optima.

Two kinds of case:

* ``analytic`` -- 12 to 30 threads on the closed form; the optimum is CP-SAT's plan when CP-SAT
  proves it optimal (`solver.certify.bounds.closed_form_bound`, status OPTIMAL), valued by the
  closed form the samples use.  The example specs with eight instances and variants built in
  memory (other IPFwd kinds x4-x8, mixes of two or three kinds).  Proofs are cached in a
  temporary directory (`CACHE`, keyed by the spec's hash), never in the repository.
* ``des`` -- the eight six-thread ``t2-ipfwd-*-x2`` examples on the simulation; the optimum is
  the best of every placement class, each simulated once (`solver.certify.truth.ClassTable`).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.certify.bounds import closed_form_bound
from tasksolve.solver.certify.service import spec_hash
from tasksolve.specs import load_spec
from tasksolve.specs.loader import load_spec_text

CACHE = Path(tempfile.gettempdir()) / "tasksolve-truth-proofs"

#: the examples: eight instances (24 threads) and the 30-thread ASPLOS'12 mix
EXAMPLES = ("t2-ipfwd-l1-x8", "t2-ipfwd-mix-x8", "t2-asplos12-mix")

#: variants built in memory: name -> {application: instances}
VARIANTS = {
    "intadd-x4": {"ipfwd-intadd": 4},
    "mem-x4": {"ipfwd-mem": 4},
    "l2-x6": {"ipfwd-l2": 6},
    "hashn-l1-x5": {"ipfwd-hashn-l1": 5},
    "intdiv-x6": {"ipfwd-intdiv": 6},
    "intmul-x8": {"ipfwd-intmul": 8},
    "intadd+l1-x2x2": {"ipfwd-intadd": 2, "ipfwd-l1": 2},
    "l2+mem+intdiv-x2x2x2": {"ipfwd-l2": 2, "ipfwd-mem": 2, "ipfwd-intdiv": 2},
    "hashn-mem+intmul-x3x3": {"ipfwd-hashn-mem": 3, "ipfwd-intmul": 3},
    "l1+intadd+mem-x3x3x2": {"ipfwd-l1": 3, "ipfwd-intadd": 3, "ipfwd-mem": 2},
}

#: six threads, simulated, every placement class measured
SIMULATED = tuple(
    f"t2-ipfwd-{kind}-x2" for kind in ("intadd", "intdiv", "intmul", "l1", "l2", "mem", "hashn-l1", "hashn-mem")
)


def variant_spec(name: str):
    apps = VARIANTS[name]
    lines = ["tasksolve: 1", f"name: t2-{name}", "topology: ultrasparc-t2", "applications:"]
    lines += [f"  a{k}: {app}" for k, app in enumerate(apps)]
    lines += ["workload:"] + [f"  - {{app: a{k}, instances: {m}}}" for k, m in enumerate(apps.values())]
    return load_spec_text("\n".join(lines) + "\n", f"<{name}>")


def analytic_spec(name: str):
    return variant_spec(name) if name in VARIANTS else load_spec(name)


def proven_optimum(spec, time_limit: float, workers: int = 1) -> tuple[float, list[int]] | None:
    """(the closed form's optimum, its plan) when CP-SAT proves it, else None; cached."""
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"{spec_hash(spec)[:24]}-{time_limit:g}.json"
    if path.exists():
        found = json.loads(path.read_text())
    else:
        proof = closed_form_bound(spec, time_limit=time_limit, workers=workers, seed=0)
        found = {"contexts": proof.contexts if proof.proven_optimum is not None else None, "status": proof.status}
        path.write_text(json.dumps(found))
    if found["contexts"] is None:
        return None
    value = float(BatchModel(spec).evaluate(np.array([found["contexts"]])).values(spec.objective)[0])
    return value, found["contexts"]


if __name__ == "__main__":  # prove (and cache) every analytic case: python bench/truth_cases.py [seconds]
    import sys
    import time

    limit = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    for case in EXAMPLES + tuple(VARIANTS):
        begin = time.perf_counter()
        spec = analytic_spec(case)
        found = proven_optimum(spec, limit)
        print(
            case,
            len(spec.threads),
            "threads:",
            "proven" if found else "not proven",
            f"{time.perf_counter() - begin:.1f} s",
            flush=True,
        )
