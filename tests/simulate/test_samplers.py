"""Samplers of binding plans (solver.binding.samplers): uniform, balanced, exhaustive."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from scipy.stats import chi2

from tasksolve.solver.binding.samplers import (
    SamplerError,
    balanced_plans,
    distinct_placements,
    is_balanced,
    to_plans,
    uniform_plans,
)
from tasksolve.specs import UsableTree, check_plan, count_distinct, load_spec
from tests.simulate import spec_from

FOUR_THREADS = """
applications:
  app:
    tasks: {a: {cycles: 1}, b: {cycles: 1}}
    edges: [{from: a, to: b}]
workload: [{app: app, instances: 2}]
"""


def chi_square_ok(counts: Counter, cells: list, draws: int, level: float = 1e-4) -> bool:
    """Pearson's test of uniformity over `cells`, rejecting at `level` (the seed is fixed)."""
    expected = draws / len(cells)
    stat = sum((counts.get(cell, 0) - expected) ** 2 / expected for cell in cells)
    return stat <= chi2.ppf(1 - level, len(cells) - 1)


def test_uniform_is_reproducible_injective_and_uniform():
    spec = spec_from(FOUR_THREADS.replace("instances: 2", "instances: 1"))  # 2 threads, 8 contexts
    a, b = uniform_plans(spec, 5600, seed=1), uniform_plans(spec, 5600, seed=1)
    assert (a == b).all()
    assert (a[:, 0] != a[:, 1]).all()
    counts = Counter(map(tuple, a.tolist()))
    cells = [(x, y) for x in range(8) for y in range(8) if x != y]
    assert set(counts) == set(cells)
    assert chi_square_ok(counts, cells, 5600)


def test_uniform_honours_every_constraint_and_stays_uniform_over_the_feasible_plans():
    spec = spec_from(
        FOUR_THREADS.replace("instances: 2", "instances: 1")
        + """
constraints:
  forbid: {"app#0.a": ["socket0"]}
  max_threads: {core: 1}
"""
    )
    rows = uniform_plans(spec, 4000, seed=2)
    for row in rows[:200]:
        assert not check_plan(spec, to_plans(spec, row)[0])
    feasible = [(a, b) for a in range(4, 8) for b in range(8) if b != a and a // 2 != b // 2]
    counts = Counter(map(tuple, rows.tolist()))
    assert set(counts) == set(feasible)
    assert chi_square_ok(counts, feasible, 4000)


def test_uniform_rejects_plans_over_the_latency_bound_and_stays_uniform_over_the_rest():
    """``latency_max`` as CP-SAT and the local search read it (the closed form's latency): a -> b
    costs 1 + message + 1 cycles at 1 GHz, the message 4 (same core), 10 (same socket) or 40
    cycles, so a 15 ns bound keeps exactly the 24 ordered pairs inside one socket."""
    spec = spec_from(FOUR_THREADS.replace("instances: 2", "instances: 1") + "constraints: {latency_max: 15ns}\n")
    rows = uniform_plans(spec, 4800, seed=4)
    feasible = [(a, b) for a in range(8) for b in range(8) if a != b and a // 4 == b // 4]
    counts = Counter(map(tuple, rows.tolist()))
    assert set(counts) == set(feasible)
    assert chi_square_ok(counts, feasible, 4800)


def test_samplers_honour_the_constrained_example():
    spec = load_spec("t2-constrained")
    for rows in (uniform_plans(spec, 300, seed=3), balanced_plans(spec, 300, seed=3)):
        for plan in to_plans(spec, rows):
            assert not check_plan(spec, plan)


def test_too_tight_constraints_are_reported():
    """Loading finds the constraints infeasible (`specs.feasibility`); loaded without that check,
    the samplers say so too instead of drawing forever."""
    from tasksolve.specs import SpecError

    text = (
        FOUR_THREADS
        + """
constraints:
  forbid: {"app#0.a": ["socket0", "socket1.core0"], "app#1.a": ["socket0", "socket1.core0"]}
  max_threads: {core: 1}
"""
    )
    with pytest.raises(SpecError, match="only 3 of the 4 threads"):
        spec_from(text)
    spec = spec_from(text, feasibility=False)
    with pytest.raises(SamplerError):
        uniform_plans(spec, 10, seed=0, max_draws=5000)
    with pytest.raises(SamplerError):
        balanced_plans(spec, 10, seed=0, max_rounds=5)


@pytest.mark.parametrize("name", ["t2-ipfwd-intadd-x2", "t2-ipfwd-l1-x8", "t2-ipfwd-x20", "manycore-mix"])
def test_balanced_plans_are_balanced_and_valid(name):
    spec = load_spec(name)
    rows = balanced_plans(spec, 200, seed=4)
    assert all(len(set(r)) == len(r) for r in rows.tolist())
    if spec.constraints.contexts is None:
        assert is_balanced(spec, rows).all()
    for plan in to_plans(spec, rows[:50]):
        assert not check_plan(spec, plan)
    assert not is_balanced(spec, uniform_plans(spec, 200, seed=4)).all()


def test_balanced_sampler_reaches_every_balanced_class():
    spec = spec_from(FOUR_THREADS)  # 4 threads on 2 sockets x 2 cores x 2 strands
    reps, _ = distinct_placements(spec)
    tree = UsableTree.of(spec.topology, spec.usable_contexts)

    def form(row):
        return tree.canonical_form({int(c): t for t, c in enumerate(row)})

    balanced_classes = {form(r) for r in reps[is_balanced(spec, reps)]}
    drawn = {form(r) for r in balanced_plans(spec, 3000, seed=5)}
    assert drawn == balanced_classes and len(drawn) > 1


@pytest.mark.parametrize("name, body", [("t2-ipfwd-intadd-x2", None), ("small", FOUR_THREADS)])
def test_distinct_placements_are_the_classes(name, body):
    spec = load_spec(name) if body is None else spec_from(body)
    reps, orbits = distinct_placements(spec)
    tree = UsableTree.of(spec.topology, spec.usable_contexts)
    T = len(spec.threads)
    assert len(reps) == count_distinct(tree, T)
    assert sum(orbits) == math.perm(len(spec.usable_contexts), T)
    assert len({tree.canonical_form({int(c): t for t, c in enumerate(r)}) for r in reps}) == len(reps)
    if name == "t2-ipfwd-intadd-x2":
        assert len(reps) == 1526


def test_orbit_sizes_are_the_class_frequencies_of_uniform_draws():
    spec = spec_from(FOUR_THREADS.replace("instances: 2", "instances: 1"))
    reps, orbits = distinct_placements(spec)
    tree = UsableTree.of(spec.topology, spec.usable_contexts)
    index = {tree.canonical_form({int(c): t for t, c in enumerate(r)}): i for i, r in enumerate(reps)}
    rows = uniform_plans(spec, 5600, seed=6)
    counts = Counter(index[tree.canonical_form({int(c): t for t, c in enumerate(r)})] for r in rows.tolist())
    total = sum(orbits)
    for i, orbit in enumerate(orbits):
        p = orbit / total
        assert abs(counts[i] / 5600 - p) <= 4 * math.sqrt(p * (1 - p) / 5600)
