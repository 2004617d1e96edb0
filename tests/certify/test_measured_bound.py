"""The bound that simulates what the fluid LP cannot rule out (`solver.certify.measured_bound`):
against brute force over every placement class, exact on a deterministic contended spec where the
LP is 8% loose, and a positive verdict it gives `run` there."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import assume, given
from scipy.stats import norm

from tasksolve.simulate.oracle import SimulationOracle, make_oracle
from tasksolve.solver.certify.fluid_bound import plan_bound
from tasksolve.solver.certify.fluid_max import allowed_reps, enumerated_max
from tasksolve.solver.certify.measure import ClassOracle
from tasksolve.solver.certify.measured_bound import measured_bound, widening
from tasksolve.specs import Plan
from tasksolve.specs.loader import load_spec_text

from .test_fluid_bound import FAST, SIM, contended_spec

#: two IPFwd-L1 instances confined to one T2 core: deterministic work, so every simulated figure of
#: the best classes is exact, and the fluid LP is 8% above the best class (docs/design.md)
L1_CORE0 = """\
tasksolve: 1
name: l1-x2-core0
topology: ultrasparc-t2
applications:
  a0: ipfwd-l1
workload:
  - {app: a0, instances: 2}
constraints:
  contexts: [core0]
"""


def every_class(spec, oracle):
    """(LP, simulated figure, half-width) of every allowed class, by brute force."""
    out = []
    for row in allowed_reps(spec):
        contexts = [int(c) for c in row]
        m = oracle.evaluate_contexts(contexts)
        lp = plan_bound(spec, Plan.from_contexts(spec, contexts), settings=oracle.oracle.settings).value
        out.append((lp, m.value(spec.objective), float(m.natural_half_width(spec.objective) or 0.0)))
    return np.array(out)


@FAST
@given(contended_spec())
def test_equal_to_the_brute_force_maximum_over_every_class(spec):
    """The walk's pruning skips no class that matters: its value is ``max_c min(LP_c, m_c + k h_c)``
    over every allowed class, at least every class's figure minus its half-width, and never above
    the LP's own maximum."""
    assume(len(allowed_reps(spec)) <= 150)
    oracle = ClassOracle(spec, SimulationOracle(spec, **SIM), seed=3)
    found = measured_bound(spec, oracle)
    assert found is not None
    table = every_class(spec, oracle)
    k = widening(len(table))
    truth = np.max(np.minimum(table[:, 0], table[:, 1] + k * table[:, 2]))
    assert found.value == pytest.approx(truth, rel=1e-9)
    assert np.all(found.value >= table[:, 1] - table[:, 2] - 1e-9 * table[:, 1])
    assert found.value <= enumerated_max(spec, oracle.oracle.settings, spec.objective).value * (1 + 1e-9)
    assert found.simulated <= found.classes == len(table)


def test_exact_on_a_deterministic_contended_spec_where_the_lp_is_loose():
    spec = load_spec_text(L1_CORE0, "<l1>")
    oracle = ClassOracle(spec, make_oracle(spec, "des"), seed=0)
    found = measured_bound(spec, oracle)
    lp = enumerated_max(spec, oracle.oracle.settings, spec.objective).value
    best = max(oracle.evaluate_contexts([int(c) for c in row]).throughput for row in allowed_reps(spec))
    assert found.value == pytest.approx(best, rel=1e-9)  # the best class, simulated: 3.0501 Mpps
    assert lp > best * 1.05  # the LP alone cannot prove a plan 3% below the optimum
    assert found.simulated < found.classes  # the LP ruled some classes out unsimulated


def test_gives_up_past_the_threshold_or_the_deadline():
    spec = load_spec_text(L1_CORE0, "<l1>")
    oracle = ClassOracle(spec, make_oracle(spec, "des"), seed=0)
    assert measured_bound(spec, oracle, threshold=2.9e6) is None  # below the optimum: cannot prove
    assert measured_bound(spec, oracle, deadline=time.monotonic() - 1.0) is None
    assert measured_bound(spec, oracle, objective="latency") is None


def test_widening_is_the_bonferroni_one_sided_quantile():
    assert widening(1) == pytest.approx(norm.ppf(0.95) / norm.ppf(0.975))
    assert widening(124) == pytest.approx(norm.ppf(1 - 0.05 / 124) / norm.ppf(0.975))
    assert widening(10) < widening(100) < widening(1000)


def test_run_proves_the_plan_on_the_simulation_where_the_lp_alone_cannot(tmp_path):
    """The main job on the confined L1 spec: the LP is 8% above the plan, the measured bound is
    the plan's own value, so the verdict is `proven` and names the simulated classes."""
    import tasksolve

    path = tmp_path / "l1.yaml"
    path.write_text(L1_CORE0)
    result = tasksolve.run(path, tmp_path / "out", time_limit=5, workers=1, seed=0)
    bounds = result.certificate_dict()["bounds"]
    measured = [b for b in bounds if "placement classes simulated" in b["source"]]
    assert result.verdict == "proven" and len(measured) == 1
    assert "placement classes simulated" in result.certificate.sentence
    lp = next(b for b in bounds if b["source"].startswith("fluid LP ("))
    assert lp["value"] > measured[0]["value"] * 1.05
