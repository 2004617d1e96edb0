"""Profiling tables measured through the one executor: the same tables with 1 or 2 processes."""

from __future__ import annotations

from simulate.oracle import make_oracle
from solver.binding.samplers import uniform_plans
from solver.predictors.tables import ProfileTables
from specs import load_spec


def _tables(spec, workers: int) -> ProfileTables:
    tables = ProfileTables(spec, lambda s: make_oracle(s, "analytic"), oracle_kind="analytic")
    ran = tables.prefetch(uniform_plans(spec, 3, seed=1), workers=workers)
    assert ran == tables.experiments > 0
    return tables


def test_a_prefetch_in_two_processes_fills_the_tables_a_single_process_fills():
    spec = load_spec("t2-ipfwd-intmul-x2")
    one, two = _tables(spec, 1), _tables(spec, 2)
    assert one.experiments == two.experiments
    assert one.base == two.base and one.slowdown == two.slowdown
