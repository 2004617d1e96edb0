"""The plan from the configuration LP's columns: the restricted master in integers, whole
instances placed together, a valid plan never above the bound."""

from __future__ import annotations

import numpy as np
import pytest

from tasksolve.solver.binding.configuration_lp import configuration_bound
from tasksolve.solver.binding.configuration_plan import configuration_plan, lp_plan, restricted_master
from tasksolve.solver.binding.configurations import ThreadTypes
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import load_spec


@pytest.mark.parametrize("name", ["t2-ipfwd-l1-x8", "t2-ipfwd-intadd-x2", "t2-ipfwd-mem-x2"])
def test_the_lp_plan_is_valid_and_never_above_the_bound(name):
    problem = BindingProblem(load_spec(name))
    bound = configuration_bound(problem)
    plan = configuration_plan(problem, bound)
    assert len(set(plan)) == problem.n_threads  # one thread per context
    assert all(c in allowed for c, allowed in zip(plan, problem.allowed))
    value = float(problem.batch.evaluate(np.array([plan])).values("total_throughput")[0])
    assert 0 < value <= bound.value
    improved = lp_plan(problem, "total_throughput", bound, seed=0, time_limit=2.0)
    assert value * (1 - 1e-12) <= improved.value <= bound.value


def test_the_restricted_master_places_every_thread_type_in_the_domains_there_are():
    problem = BindingProblem(load_spec("t2-ipfwd-l1-x8"))
    bound = configuration_bound(problem)
    types = ThreadTypes.of(problem)
    kinds = {column[0] for column in bound.solution}
    domains = dict.fromkeys(kinds, 8)  # the T2's 8 cores
    x = restricted_master(bound, types.count, domains, time_limit=5.0)
    assert x is not None and (x >= 0).all() and x.sum() <= 8
    placed = sum(n * column[1].sum(axis=0) for n, column in zip(x, bound.solution))
    np.testing.assert_array_equal(placed, types.count)  # the generated columns can place them all here
    # its value is at most the LP's (an integer point of the restricted master)
    assert sum(n * column[3] for n, column in zip(x, bound.solution)) <= bound.lp_value * (1 + 1e-6)
