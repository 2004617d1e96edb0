"""The finalists' climbs on the oracle itself (`solver.certify.finalists`)."""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.solver.certify.budget import Budget
from tasksolve.solver.certify.designs import Climber
from tasksolve.solver.certify.finalists import CLIMB_STEPS, beats, climb, climbs
from tasksolve.solver.certify.measure import ClassOracle
from tasksolve.specs import Plan, load_spec

SPEC = "t2-ipfwd-l1-x2"


def starts(spec, n, seed=0):
    return [[int(c) for c in row] for row in uniform_plans(spec, n, np.random.default_rng(seed))]


def test_a_climb_never_ends_below_its_start_and_stops_on_a_closed_form_local_optimum():
    """On the closed form (no noise) every move improves, so the end beats or equals the start;
    from the closed form's own local optimum no screened neighbour improves: 0 moves."""
    spec = load_spec(SPEC)
    oracle = ClassOracle(spec, make_oracle(spec, "analytic"), seed=0)
    climbed = []
    for start in starts(spec, 4):
        first = oracle.evaluate_contexts(start)
        plan, measured, moves = climb(spec, oracle, start, spec.objective)
        climbed.append(moves)
        assert measured.throughput >= first.throughput and 0 <= moves <= CLIMB_STEPS
        assert moves == 0 or measured.throughput > first.throughput
        assert measured is oracle.evaluate_contexts(plan)
    assert max(climbed) > 0  # random starts are not local optima: the climb moves
    local, _, _ = Climber(spec, spec.objective, screen=False).climb(starts(spec, 1, seed=5)[0], seed=1)
    assert climb(spec, oracle, local, spec.objective)[2] == 0
    assert climb(spec, oracle, starts(spec, 1)[0], spec.objective, deadline=time.monotonic() - 1)[2] == 0


def test_beating_means_beyond_both_half_widths():
    spec = load_spec(SPEC)
    m = make_oracle(spec, "analytic").evaluate(Plan.from_contexts(spec, starts(spec, 1)[0]))
    up = dataclasses.replace(m, throughput=m.throughput * 1.02)
    assert beats(up, m, "total_throughput") and not beats(m, up, "total_throughput")
    noisy = dataclasses.replace(up, half_width=m.throughput * 0.015)
    assert not beats(noisy, dataclasses.replace(m, half_width=m.throughput * 0.01), "total_throughput")


def test_climbs_become_known_plans_only_within_a_budget_and_on_another_oracle():
    spec = load_spec(SPEC)
    oracle = ClassOracle(spec, make_oracle(spec, "analytic"), seed=0)
    start = starts(spec, 1, seed=9)[0]
    finalists = [("the plan", start), ("the best sample", list(start))]
    assert climbs(spec, oracle, finalists, "des", 0, Budget()) == []  # no budget: no climb
    assert climbs(spec, oracle, finalists, "analytic", 0, Budget.of(60)) == []  # the closed form's own optima
    assert climbs(spec, None, finalists, "des", 0, Budget.of(60)) == []  # pipeline plans: no classes
    spent = Budget.of(60, started=time.monotonic() - 3600)
    assert climbs(spec, oracle, finalists, "des", 0, spent) == []  # past the climb deadline
    found = climbs(spec, oracle, finalists, "des", 0, Budget.of(60))
    # the plan and the best sample are one class here: one climb, labelled with its moves
    assert len(found) == 1 and found[0].plan.startswith("the plan climbed on the simulation (")
    assert found[0].value >= oracle.evaluate_contexts(start).throughput
