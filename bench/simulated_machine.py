"""A simulated machine behind the command oracle: reads the plan file tasksolve writes, runs the
SimPy simulation of a spec on that placement, prints ``{"rate": packets per second}``.

    python bench/simulated_machine.py SPEC.yaml PLAN.json [--seed N]

`bench/calibrate_recovery.py --machine command` uses it as the program a calibration measures.
"""

from __future__ import annotations

import argparse
import json

from tasksolve.simulate.oracle import make_oracle
from tasksolve.specs import Plan, load_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec")
    parser.add_argument("plan")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    spec = load_spec(args.spec, allow_outside=True)
    document = json.loads(open(args.plan).read())
    names = spec.topology.context_names
    contexts = {
        row["thread"]: names.index(row["context"]) if isinstance(row["context"], str) else int(row["context"])
        for row in document["threads"]
    }
    plan = Plan.from_contexts(spec, [contexts[t.name] for t in spec.threads])
    measurement = make_oracle(spec, "des").evaluate(plan, seed=args.seed)
    print(json.dumps({"rate": measurement.throughput}))


if __name__ == "__main__":
    main()
