"""A latency bound no plan meets under the other constraints: one message at the bound's line,
naming the constraints that conflict and the least latency any plan reaches -- checked against
brute force over the 20,160 plans of six threads on the T2's core0."""

from __future__ import annotations

import itertools

import numpy as np

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.cli import main
from tasksolve.specs import load_spec
from tasksolve.specs.display import seconds

SPEC = """tasksolve: 1
name: ipfwd-latency-tight
topology: ultrasparc-t2
applications:
  ipfwd: ipfwd-l1
workload:
  - {app: ipfwd, instances: 2}
constraints:
  contexts: [core0]
  latency_max: 0.83us
"""


def test_an_unmeetable_latency_bound_is_located_with_the_least_latency(tmp_path, capsys):
    path = tmp_path / "tight.yaml"
    path.write_text(SPEC)
    spec = load_spec(str(path))  # validate passes: the contention-free floor (819 ns) is below 0.83 us
    plans = np.array(list(itertools.permutations(spec.usable_contexts, len(spec.threads))))
    least = float(BatchModel(spec).evaluate(plans).latency_max.min())
    assert least > 0.83e-6  # the contention on core0 puts every plan above the bound

    assert main(["solve", str(path), "--time-limit", "5", "--workers", "1"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{path}:10:16: constraints.latency_max: these constraints conflict:" in err
    assert "constraints.contexts = ['core0']; constraints.latency_max = 0.83us" in err
    assert (
        f"the least latency any plan reaches under the other constraints on the closed form is {seconds(least)} (proven by CP-SAT)"
        in err
    )
    assert "Traceback" not in err
