"""The fluid LP's relaxation over every plan (`solver.certify.fluid_max.relaxed_problem`): the
levels a message can cross (`meeting_levels`), pinned by hand, and the relaxation never below
the per-plan bound of any allowed plan on random specs that draw every spec field (brute force)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

from tasksolve.simulate.des import DesSettings
from tasksolve.simulate.oracle import SimulationOracle
from tasksolve.solver.certify.fluid_bound import plan_bound
from tasksolve.solver.certify.fluid_max import enumerated_max, meeting_levels, relaxed_max
from tasksolve.specs import Plan
from tests.simulate import spec_from
from tests.solver.test_bounds_every_field import every_field_spec, feasible_placements

REL = 1e-6
FLOAT = 1e-9
SIM = {"packets": 4000, "warmup": 400, "precision": 0.02, "time_cap": 20.0}


def _boxes(counts: tuple[int, ...], cost: dict[str, int]) -> str:
    names = ["socket", "core", "strand"][-len(counts) :]
    levels = "".join(f"    - {{name: {n}, count: {c}}}\n" for n, c in zip(names, counts))
    comm = ", ".join(f"{k}: {v}" for k, v in cost.items())
    return f"  name: boxes\n  clock: 1GHz\n  levels:\n{levels}  resources: []\n  communication: {{{comm}}}\n"


CHAIN = "applications:\n  a:\n    tasks: {t0: {cycles: 50}, t1: {cycles: 100}}\n    edges: [{from: t0, to: t1}]\nworkload: [{app: a}]\n"


@pytest.mark.parametrize(
    ("counts", "extra", "levels", "mpps"),
    [
        ((2, 2), "", [-1, 0], 1e3 / 110),  # the cheapest message is inside a core: 10 cycles
        ((2, 1), "", [-1], 1e3 / 150),  # one strand per core: the machine's 50
        ((2, 2), "constraints: {max_threads: {core: 1}}\n", [-1], 1e3 / 150),  # the cap splits them
    ],
)
def test_a_message_crosses_a_level_two_threads_can_share(counts, extra, levels, mpps):
    """t0 (50 cycles) -> t1 (100 cycles): the strand is a single context, which two threads never
    share, so t1's work is at least 100 plus the cheapest level they can share (its 0-cycle strand
    cost is not a bound); the enumeration and the simulation of the best plan agree."""
    spec = spec_from(CHAIN + extra, _boxes(counts, {"core": 10, "machine": 50}))
    settings_ = DesSettings.from_spec(spec)
    assert meeting_levels(spec) == levels
    assert relaxed_max(spec, settings_, "total_throughput").value / 1e6 == pytest.approx(mpps, rel=REL)
    best = enumerated_max(spec, settings_, "total_throughput")
    assert best.value / 1e6 == pytest.approx(mpps, rel=REL)
    m = SimulationOracle(spec, **SIM).evaluate(Plan.from_contexts(spec, best.contexts))
    assert m.throughput / 1e6 == pytest.approx(mpps, rel=1e-3)


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(every_field_spec(objectives=("total_throughput", "min_throughput")))
def test_relaxation_is_never_below_an_allowed_plan_bound(spec):
    """Every feasible placement (at most 40, evenly picked) of a random every-field spec: its
    fluid bound is at most the relaxation's (each of the relaxation's rows holds for every plan)."""
    rows = feasible_placements(spec)
    assume(len(rows) > 0)
    settings_ = DesSettings.from_spec(spec)
    relaxed = relaxed_max(spec, settings_, spec.objective)
    assert relaxed is not None
    picked = rows[np.linspace(0, len(rows) - 1, min(40, len(rows))).astype(int)]
    for row in picked:
        plan = Plan.from_contexts(spec, [int(c) for c in row])
        per_plan = plan_bound(spec, plan, settings=settings_, objective=spec.objective).value
        assert relaxed.value >= per_plan * (1 - FLOAT), (relaxed.value, per_plan, row)
