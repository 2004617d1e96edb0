"""Capacities the spec accepts down to 1e-300 (`specs.fields`): the simulation holds them (and
the demands beside them) exactly where 1e-9 units would round them away (`simulate.des.units`),
its output analysis squares figures of 1e302 cycles and 1e-303 packets per cycle without
overflow, and `tasksolve run` ends with its files written and a located failed step, never an
internal error.  Before: a capacity below 5e-10 rounded to no unit and the run died on a division
by zero."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve.simulate.des.ports import SCALE
from tasksolve.simulate.des.units import held, resource_units
from tasksolve.simulate.oracle import make_oracle
from tasksolve.simulate.output import batch_stats, mser_truncation
from tasksolve.specs import Plan
from tasksolve.specs.loader import load_spec_text

SPEC = """
tasksolve: 1
name: tiny-{c}
topology:
  name: one socket
  clock: 2GHz
  levels: [{{name: socket, count: 1}}, {{name: core, count: 4}}]
  resources: [{{name: bus, level: socket, capacity: {c}}}, {{name: fpu, level: core, capacity: 1.0}}]
  communication: {{socket: 30, machine: 90}}
applications:
  flow:
    tasks:
      parse: {{cycles: 400, demand: {{bus: 0.6, fpu: 0.2}}}}
      emit: {{cycles: 250, demand: {{bus: 0.3}}}}
    edges: [{{from: parse, to: emit, bytes: 64B}}]
workload: [{{app: flow, instances: 2}}]
"""

positive = st.floats(min_value=1e-300, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(st.lists(positive, min_size=1, max_size=6))
def test_exact_units_keep_every_ratio(values):
    """Where any value would round to fewer than `MIN_UNITS`, each value becomes an integer whose
    ratios to the others are the floats' exact ratios (so a rate ``capacity / load`` is exact)."""
    units = resource_units([1e-12, *values])
    ints = [units(v) for v in [1e-12, *values]]
    assert all(isinstance(n, int) and n > 0 for n in ints)
    for v, n in zip(values, ints[1:]):
        assert Fraction(n, ints[0]) == Fraction(v) / Fraction(1e-12)


@given(st.lists(st.floats(min_value=1e-6, max_value=1e6), min_size=1, max_size=6))
def test_ordinary_values_keep_the_nanounit(values):
    """Values of a millionth and more keep 1e-9 units, as before: the same integers, so the same
    rates and the same runs on every spec written with ordinary capacities."""
    units = resource_units([0.0, *values])
    assert [units(v) for v in values] == [int(round(v * SCALE)) for v in values]


def test_held_values_are_what_the_simulation_divides():
    """The fluid bounds read `held`: rounded to 1e-9 where the simulation rounds, exact where it
    holds the values exactly, an infinite capacity left infinite."""
    capacity = np.array([1.0, 1e-300, np.inf])
    demand = np.array([[0.1234567891234, 0.5, 0.3]])
    cap, d, i = held(capacity, demand, np.zeros_like(demand))
    assert d[0, 0] == round(0.1234567891234 * SCALE) / SCALE and d[0, 0] != 0.1234567891234
    assert cap[1] == 1e-300 and d[0, 1] == 0.5 and math.isinf(cap[2]) and not i.any()


@pytest.mark.parametrize("capacity", ["1e-12", "1e-100", "1e-300"])
def test_the_simulated_rate_scales_with_a_tiny_capacity(capacity):
    """The socket's `bus` limits every thread, so the simulated throughput is proportional to its
    capacity: at 1e-12 ... 1e-300 it is the figure at 1e-3 scaled, to 1e-9, with a finite
    half-width scaled alike (before: a division by zero at 1e-12)."""
    plan = [0, 1, 2, 3]
    reference = _simulate("1e-3", plan)
    found = _simulate(capacity, plan)
    scale = float(capacity) / 1e-3
    assert found.throughput == pytest.approx(reference.throughput * scale, rel=1e-9)
    assert math.isfinite(found.half_width) and found.half_width <= 1e-6 * found.throughput


def _simulate(capacity: str, plan: list[int]):
    spec = load_spec_text(SPEC.format(c=capacity), f"<tiny-{capacity}>")
    return make_oracle(spec, "des").evaluate(Plan.from_contexts(spec, plan))


@pytest.mark.parametrize("scale", [1e-303, 1.0, 1e302])
def test_output_analysis_is_the_same_at_any_scale(scale):
    """MSER's cut and the batch means' half-width of a series scaled by 1e-303 or 1e302 are the
    scaled figures of the series itself (before: squares overflowed to inf, or underflowed to a
    zero half-width)."""
    rng = np.random.default_rng(7)
    y = np.concatenate([np.linspace(3.0, 1.0, 20), 1.0 + 0.01 * rng.standard_normal(200)])
    assert mser_truncation(y * scale, 110) == mser_truncation(y, 110)
    mean, half_width, _ = batch_stats(y[20:] * scale, 10)
    mean_1, half_width_1, _ = batch_stats(y[20:], 10)
    assert mean == pytest.approx(mean_1 * scale, rel=1e-12)
    assert half_width == pytest.approx(half_width_1 * scale, rel=1e-12) and half_width > 0


def test_run_on_a_capacity_of_1e_300_ends_with_its_files_and_a_named_failed_step(tmp_path, capsys):
    """`tasksolve run`: the plan is found and measured, the certificate written; the simulation's
    fluid bound, whose LP HiGHS cannot take at these coefficients, is a failed step the message
    and exit code 3 name -- not an internal error."""
    from tasksolve.solver.cli import main

    path = tmp_path / "tiny.yaml"
    path.write_text(SPEC.format(c="1e-300"))
    code = main(["run", str(path), "--out", str(tmp_path / "out"), "--time-limit", "5", "--workers", "1", "--json"])
    err = capsys.readouterr().err
    assert code == 3 and "fluid bound" in err and "internal error" not in err
    certificate = json.loads((tmp_path / "out" / "certificate.json").read_text())
    assert any("fluid bound" in step for step in certificate["solve"]["failed_steps"])
    value = certificate["plan_performance"]["value"]
    assert 1e-295 < value < 1e-290  # a figure near 1e-293 pps: the simulated one, not 0 or inf


@settings(max_examples=12, deadline=None, derandomize=True)
@given(st.floats(min_value=-14.0, max_value=-6.0), st.permutations([0, 1, 2, 3]))
def test_the_fluid_bounds_hold_over_the_simulation_where_values_are_held_exactly(exponent, contexts):
    """Capacities of 1e-14 to 1e-6 (every value of the resource held exactly, `simulate.des.units`):
    the plan's fluid bound and the bound over every plan, which read the values as the simulation
    holds them (`held`), are never below the simulated throughput."""
    from tasksolve.simulate.des import DesSettings
    from tasksolve.solver.certify.fluid_bound import plan_bound
    from tasksolve.solver.certify.fluid_max import max_bound

    capacity = f"{10.0**exponent:.6g}"
    spec = load_spec_text(SPEC.format(c=capacity), f"<tiny-{capacity}>")
    plan = Plan.from_contexts(spec, list(contexts))
    measured = make_oracle(spec, "des").evaluate(plan)
    settings_ = DesSettings.from_spec(spec)
    own = plan_bound(spec, plan, settings=settings_, objective=spec.objective).value
    over_all = max_bound(spec, settings_, spec.objective).value
    floor = measured.throughput - measured.half_width - 1e-9 * measured.throughput
    assert own >= floor and over_all >= floor, (capacity, measured.throughput, own, over_all)


def test_simulate_shows_a_tiny_rate_and_figure_as_they_are(tmp_path, capsys):
    """`tasksolve simulate` on a capacity of 1e-300: the throughput in scientific notation and each
    thread's rate (about 1e-300 of its speed) too, not ``0.000``."""
    from tasksolve.solver.cli import main

    path = tmp_path / "tiny.yaml"
    path.write_text(SPEC.format(c="1e-300"))
    assert main(["simulate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "e-29" in out.split("throughput", 1)[1].splitlines()[0]  # about 1e-293 pps
    rates = [line.split("│")[4].strip() for line in out.splitlines() if line.startswith("│ flow#")]
    assert rates and all("e-30" in r for r in rates), rates
