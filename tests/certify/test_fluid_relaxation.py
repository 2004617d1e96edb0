"""The fluid LP's relaxation over every plan (`solver.certify.fluid_max.relaxed_max`): the levels
a message can cross (`meeting_levels`), pinned by hand; the relaxation, with its configuration
rows (`solver.certify.fluid_configurations`), never below the per-plan bound of any allowed plan
on random specs that draw every spec field and on random contended specs (brute force), and
tighter than without them where domains are shared."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

from tasksolve.simulate.des import DesSettings
from tasksolve.simulate.oracle import SimulationOracle
from tasksolve.solver.certify.fluid_bound import plan_bound
from tasksolve.solver.certify.fluid_configurations import LIMIT, _configurations
from tasksolve.solver.certify.fluid_max import enumerated_max, meeting_levels, relaxed_max
from tasksolve.specs import Plan, load_spec
from tests.certify.test_fluid_bound import contended_spec
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
# capacities of at least 1e-3, as the other tests that simulate or take a plan's fluid bound: a
# capacity of 1e-300 stops the simulation and the plan's own LP (a rate of 0), not the relaxation
@given(every_field_spec(objectives=("total_throughput", "min_throughput"), least_capacity=1e-3))
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


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(contended_spec())
def test_configuration_rows_stay_above_every_class(spec):
    """Contended specs (3-6 threads whose idle and busy loads share a per-core resource): the
    relaxation with configuration rows is at least the per-plan bound of every placement class
    (`enumerated_max`, the exhaustive maximum), and at most the relaxation without them."""
    settings_ = DesSettings.from_spec(spec)
    best = enumerated_max(spec, settings_, spec.objective)
    assume(best is not None)
    tight = relaxed_max(spec, settings_, spec.objective).value
    loose = relaxed_max(spec, settings_, spec.objective, configurations=False).value
    assert tight >= best.value * (1 - FLOAT), (tight, best.value)
    assert tight <= loose * (1 + FLOAT)


def test_configuration_rows_tighten_a_shared_t2():
    """t2-ipfwd-x20 (60 threads on 64 strands: almost every pipe holds four, each polling it at
    0.3 while it waits): the configuration rows lower the relaxation by more than a sixth, and it
    stays above the per-plan bound of random plans."""
    spec = load_spec("t2-ipfwd-x20")
    settings_ = DesSettings.from_spec(spec)
    tight = relaxed_max(spec, settings_, spec.objective).value
    loose = relaxed_max(spec, settings_, spec.objective, configurations=False).value
    assert tight < 0.85 * loose
    rng = np.random.default_rng(0)
    for _ in range(4):
        contexts = rng.permutation(64)[: len(spec.threads)]
        per_plan = plan_bound(spec, Plan.from_contexts(spec, contexts), settings=settings_).value
        assert tight >= per_plan * (1 - FLOAT)


def test_configurations_are_the_bounded_count_vectors():
    """Every nonzero count vector within the type counts and the domain's size, once; None when
    they hold more than `LIMIT` threads."""
    found = _configurations([2, 1, 3], 3)
    expected = {(a, b, c) for a in range(3) for b in range(2) for c in range(4) if 0 < a + b + c <= 3}
    assert sorted(found) == sorted(expected) and len(found) == len(expected)
    assert _configurations([LIMIT, LIMIT], LIMIT) is None


def test_a_failed_configuration_lp_falls_back_to_the_summed_rows(monkeypatch):
    """HiGHS failing on the LP with configuration rows: the relaxation without them is returned
    (a bound, looser), not an error."""
    from tasksolve.solver.certify import fluid_lp
    from tasksolve.solver.errors import SolverFailed

    spec = spec_from(CHAIN, _boxes((2, 2), {"core": 10, "machine": 50}))
    settings_ = DesSettings.from_spec(spec)
    loose = relaxed_max(spec, settings_, "total_throughput", configurations=False).value
    real, calls = fluid_lp._solve, []

    def first_fails(lp):
        calls.append(len(lp.c))
        if len(calls) == 1:
            raise SolverFailed("fluid bound: HiGHS could not solve the LP (test)")
        return real(lp)

    monkeypatch.setattr(fluid_lp, "_solve", first_fails)
    assert relaxed_max(spec, settings_, "total_throughput").value == pytest.approx(loose, rel=REL)
    assert len(calls) == 2 and calls[0] >= calls[1]
