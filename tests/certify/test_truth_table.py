"""Truth by table (`solver.certify.truth`): the samples it draws are the sampling service's.

The study (bench/certify_truth.py) measures every placement class of a 6-thread spec once on the
simulation and draws both designs' samples by look-up; that is only sound if a look-up sample
equals what the service measures with the same seed.  Checked here on the simulation, for both
designs, against the product's path (the `SamplingService`, one worker)."""

from __future__ import annotations

import numpy as np
import pytest

from tasksolve.simulate.oracle import make_oracle, plan_seed
from tasksolve.solver.certify.designs import Climber
from tasksolve.solver.certify.service import SamplingService
from tasksolve.solver.certify.truth import ClassTable
from tasksolve.specs import load_spec

N = 12


@pytest.fixture(scope="module")
def case():
    spec = load_spec("t2-ipfwd-intadd-x2")
    return spec, ClassTable(spec, make_oracle(spec, "des"), seed=0)


def test_every_class_once_and_orbits_count_every_placement(case):
    spec, table = case
    assert len(table.measurements) == 1526  # docs/design.md: 2 x 3-thread IPFwd on the T2
    assert table.orbits.sum() == 64 * 63 * 62 * 61 * 60 * 59  # injective maps of 6 threads on 64 contexts


@pytest.mark.parametrize("design", ["random", "local-optima"])
def test_table_sample_equals_the_service_sample(case, tmp_path, design):
    spec, table = case
    service = SamplingService(
        spec, tmp_path / "s.jsonl", seed=3, oracle_kind="des", design=design, workers=1, max_samples=N
    )
    service.start_fresh()
    service.ensure(N)
    measured = service.values(N)
    objective = spec.objective
    if design == "random":
        drawn = [table.evaluate_contexts(service.contexts(i)).value(objective) for i in range(N)]
    else:
        climber = Climber(spec, objective, screen=True)
        drawn = [climber.sample(table, service.contexts(i), plan_seed(3, i))[2].value(objective) for i in range(N)]
    np.testing.assert_array_equal(np.array(drawn), measured)


def test_a_plan_moved_by_a_symmetry_has_its_class_value(case):
    spec, table = case
    rng = np.random.default_rng(0)
    oracle = make_oracle(spec, "des")
    from tasksolve.solver.binding.samplers import apply_symmetry, uniform_plans
    from tasksolve.specs import Plan

    for row in uniform_plans(spec, 5, rng):
        moved = apply_symmetry(row, table.tree.random_automorphism(__import__("random").Random(int(row[0]))))
        direct = oracle.evaluate(Plan.from_contexts(spec, [int(c) for c in moved]), seed=11).throughput
        assert table.evaluate_contexts(row).throughput == direct
