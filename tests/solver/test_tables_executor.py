"""Profiling tables measured through the one executor: the same tables with 1 or 2 processes."""

from __future__ import annotations

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.predictors.tables import ProfileTables
from tasksolve.specs import load_spec


def _tables(spec, workers: int) -> ProfileTables:
    tables = ProfileTables(spec, lambda s: make_oracle(s, "des"), oracle_kind="des", workers=workers)
    ran = tables.ensure_base(["ipfwd"])
    assert ran == tables.experiments > 0
    return tables


def test_base_experiments_in_two_processes_fill_the_tables_one_process_fills():
    spec = load_spec("t2-ipfwd-intmul-x2")
    one, two = _tables(spec, 1), _tables(spec, 2)
    assert one.experiments == two.experiments
    assert one.base == two.base
