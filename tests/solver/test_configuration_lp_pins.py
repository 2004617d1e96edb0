"""Pins of `solver.binding.configuration_lp`'s column generation, partial pricing and entry points.

The soundness tests (`test_configurations.py`, `test_lp_constraints.py`) check that the bound is
never below an optimum and that the converged LP equals the enumerated one; each test here kills
mutants of the module that the soundness tests cannot see, since a looser bound is still sound:
the Lagrangian bound of an unconverged run, the iteration and column counts, the artificial
variables' cost, the convergence tolerance, the `solution` output, which configurations partial
pricing values, the solver-failure path and the time limits.

Most tests drive `column_generation` on hand-built LPs whose every iteration is traced by hand in
the docstring (the master's optimum and duals are unique at every step, so HiGHS has no choice),
so each expected number is derived independently of the code.  The values are in the LP's units
(the code divides them by the largest value, ``scale``, and multiplies the bound back).

Tolerances: `REL` = 1e-9 where the expected number is a hand value that HiGHS reproduces to
rounding (small rational LPs); 1e-7 relative (the project's LP convention) against an enumerated
LP solved by scipy's HiGHS.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sparse
from scipy.optimize import linprog

from tasksolve.solver.binding import configuration_lp as module
from tasksolve.solver.binding.configuration_lp import (
    ConfigurationLPFailed,
    LazyValues,
    column_generation,
    configuration_bound,
    enumeration_fits,
    enumeration_seconds,
)
from tasksolve.solver.binding.configurations import (
    Layout,
    NotApplicable,
    ThreadTypes,
    count_configurations,
    enumerate_configurations,
)
from tasksolve.solver.binding.problem import BindingProblem
from tests.simulate import spec_from

REL = 1e-9


def _instance_a(extra_kinds: bool = True):
    """One type placed 3 times; kind 0 (2 domains) has the configurations {1 thread: 1.0},
    {2 threads: 1.5}, {1 thread: 0.9}; kind 1 (1 domain) {1 thread: 0.3}; kind 2 (1 domain) has no
    configuration at all.  Scale 1.5 (the largest value), so in LP units the values are 2/3, 1,
    0.6 and 0.2; the artificial cost is big = 10 x 3 = 30.

    The LP optimum: one domain with {2}, one with {1}: 1.5 + 1.0 = 2.5 (duals pi = 1/3 on the
    type, mu = 1/3 on kind 0: (1) pi + mu = 2/3, (2) 2 pi + mu = 1)."""
    counts = [np.array([[1.0], [2.0], [1.0]]), np.array([[1.0]])]
    values = [np.array([1.0, 1.5, 0.9]), np.array([0.3])]
    multiplicity = [2, 1]
    if extra_kinds:
        counts.append(np.zeros((0, 1)))
        values.append(np.zeros(0))
        multiplicity.append(1)
    return counts, values, multiplicity, np.array([3.0])


def _enumerated(counts, values, multiplicity, demand) -> float:
    """The configuration LP with every column, solved at once by scipy's HiGHS (independent)."""
    kinds = [g for g, v in enumerate(values) if len(v)]
    n = sum(len(values[g]) for g in kinds)
    a_ub = np.zeros((len(kinds), n))
    start = 0
    for row, g in enumerate(kinds):
        a_ub[row, start : start + len(values[g])] = 1.0
        start += len(values[g])
    full = linprog(
        -np.concatenate([values[g] for g in kinds]),
        A_eq=np.vstack([counts[g] for g in kinds]).T,
        b_eq=demand,
        A_ub=a_ub,
        b_ub=[float(multiplicity[g]) for g in kinds],
        bounds=(0, None),
        method="highs",
    )
    assert full.status == 0
    return -float(full.fun)


# ================================================================== the column generation, traced
def test_one_column_at_a_time_traced_by_hand():
    """add=1 on instance A.  Iteration 1: no column, the artificial carries the demand, pi = -30:
    reduced costs 2/3 + 30, 1 + 60, 0.6 + 30 (kind 0), 0.2 + 30 (kind 1): the Lagrangian is
    -90 + 2 x 61 + 30.2 = 62.2; {2} enters.  Iteration 2: lambda_{2} = 1.5, pi = 0.5, mu = 0:
    reduced 1/6, 0, 0.1, -0.3: Lagrangian 1.5 + 2/6 = 11/6; {1} enters (the best, add=1).
    Iteration 3: the optimum 5/3 (pi = mu = 1/3): {1 thread: 0.9} prices 0.6 - 2/3 < 0, so the
    run converges at iteration 3 with 2 columns and the bound 5/3 x 1.5 = 2.5."""
    counts, values, multiplicity, demand = _instance_a()
    solution: list = []
    bound, lp_value, columns, iterations, converged = column_generation(
        counts, values, multiplicity, demand, add=1, solution=solution
    )
    assert converged
    assert (columns, iterations) == (2, 3)
    assert lp_value == pytest.approx(2.5, rel=REL)
    assert bound == pytest.approx(2.5, rel=REL)
    assert _enumerated(counts, values, multiplicity, demand) == pytest.approx(2.5, rel=1e-7)
    # the last master's columns in the order they entered, with their weights
    assert [(g, j) for g, j, _ in solution] == [(0, 1), (0, 0)]
    assert [w for *_, w in solution] == pytest.approx([1.0, 1.0], abs=1e-9)


def test_two_iterations_give_the_lagrangian_bound_of_the_second():
    """max_iterations=2 stops after iteration 2 (traced above): not converged, no LP value, the
    bound the least Lagrangian so far, 11/6 x 1.5 = 2.75 -- above the LP's 2.5, as a bound must
    be.  Two columns ({2} and the {1} priced at iteration 2) and the second master's solution,
    lambda_{2} = 1.5."""
    counts, values, multiplicity, demand = _instance_a()
    solution: list = []
    bound, lp_value, columns, iterations, converged = column_generation(
        counts, values, multiplicity, demand, add=1, max_iterations=2, solution=solution
    )
    assert not converged and lp_value is None
    assert (columns, iterations) == (2, 2)
    assert bound == pytest.approx(11 / 6 * 1.5, rel=REL)
    assert bound >= _enumerated(counts, values, multiplicity, demand) * (1 - 1e-9)
    assert solution == [(0, 1, pytest.approx(1.5, rel=REL))]


def test_one_iteration_gives_the_lagrangian_of_the_artificial_prices():
    """max_iterations=1: only the all-artificial master, whose prices are -big = -30 (big = 10 x
    the 3 threads): the Lagrangian -90 + 2 (1 + 60) + (0.2 + 30) = 62.2, x 1.5 = 93.3.  A different
    big (10.1 x 3, 10 / 3, 10 x 1) or scale gives another number."""
    counts, values, multiplicity, demand = _instance_a()
    bound, lp_value, columns, iterations, converged = column_generation(
        counts, values, multiplicity, demand, add=1, max_iterations=1
    )
    assert not converged and lp_value is None
    assert (columns, iterations) == (1, 1)
    assert bound == pytest.approx(62.2 * 1.5, rel=REL)


def test_the_artificial_cost_counts_every_thread_at_least_once():
    """big = 10 x max(1, threads): with one thread, big = 10.  One type, one thread, kind of 2
    domains with {1 thread: 0.5} (scale 0.5, so 1 in LP units): one iteration prices -10:
    Lagrangian -10 + 2 (1 + 10) = 12, x 0.5 = 6.  (big = 20 would give 11; scale 1, 11 too.)"""
    bound, lp_value, columns, iterations, converged = column_generation(
        [np.array([[1.0]])], [np.array([0.5])], [2], np.array([1.0]), max_iterations=1
    )
    assert (lp_value, columns, iterations, converged) == (None, 1, 1, False)
    assert bound == pytest.approx(6.0, rel=REL)


def test_all_columns_enter_at_once_with_a_larger_add():
    """add=3 on instance A: iteration 1 prices 4 configurations, the best 3 enter ({2}: 61, {1}:
    30.67, {1 thread: 0.9}: 30.6; kind 1's 30.2 is fourth); iteration 2 is the LP's optimum and no
    column improves: 3 columns, 2 iterations, bound 2.5.  (Kind 0 has exactly `add`
    configurations: all of them are candidates.)"""
    counts, values, multiplicity, demand = _instance_a()
    bound, lp_value, columns, iterations, converged = column_generation(counts, values, multiplicity, demand, add=3)
    assert converged and (columns, iterations) == (3, 2)
    assert bound == pytest.approx(2.5, rel=REL) and lp_value == pytest.approx(2.5, rel=REL)


def test_a_column_below_its_kinds_price_does_not_enter():
    """Instance A with the empty configuration (no thread, worth 0) added to kind 0, default add:
    iteration 1 prices the four others positive (all enter) and the empty one at 0 (it does not);
    iteration 2 is the optimum, where the empty one prices 0 - 0 against kind 0's price 1/3: not
    improving.  4 columns, 2 iterations, 2.5."""
    counts, values, multiplicity, demand = _instance_a()
    counts[0] = np.vstack([counts[0], [[0.0]]])
    values[0] = np.append(values[0], 0.0)
    bound, lp_value, columns, iterations, converged = column_generation(counts, values, multiplicity, demand)
    assert converged and (columns, iterations) == (4, 2)
    assert bound == pytest.approx(2.5, rel=REL) and lp_value == pytest.approx(2.5, rel=REL)


def test_the_bound_at_convergence_is_the_lp_optimum_not_the_last_lagrangian():
    """Instance A plus kind 3 (1000 domains) with {1 thread: 0.5 + 7.5e-10}: at the optimum (pi =
    1/3) it prices 5e-10 in LP units, under the 1e-9 tolerance, so it never enters and the run
    converges at 2.5; its Lagrangian is 2.5 + 1000 x 5e-10 x 1.5 = 2.5 + 7.5e-7.  The bound
    reported is the LP's optimum, the least of the two."""
    counts, values, multiplicity, demand = _instance_a()
    counts.append(np.array([[1.0]]))
    values.append(np.array([0.5 + 7.5e-10]))
    multiplicity.append(1000)
    bound, lp_value, columns, iterations, converged = column_generation(counts, values, multiplicity, demand, add=1)
    assert converged and (columns, iterations) == (2, 3)
    assert lp_value == pytest.approx(2.5, rel=1e-12)
    assert bound == pytest.approx(2.5, rel=1e-12)


def test_default_add_is_64_columns_per_iteration():
    """Kind 0: 100 configurations of one thread, kind 1: exactly 64 (all candidates): at
    iteration 1 every one prices positive; 64 enter (the default `add`)."""
    counts = [np.ones((100, 1)), np.ones((64, 1))]
    values = [np.linspace(0.5, 1.0, 100), np.linspace(0.2, 0.7, 64)]
    bound, lp_value, columns, iterations, converged = column_generation(
        counts, values, [1, 1], np.array([1.0]), max_iterations=1
    )
    assert (columns, iterations, converged) == (64, 1, False)
    # Lagrangian: -10 + (1 + 10) + (0.7 + 10) = 11.7 (scale 1)
    assert bound == pytest.approx(11.7, rel=REL)


@pytest.mark.parametrize("value, columns", [(1e-9, 1), (1.005e-9, 2)])
def test_a_column_enters_only_if_it_improves_by_more_than_1e_9(value, columns):
    """One thread, kind 0 {1 thread: 1.0} (scale 1), kind 1 an empty configuration worth `value`:
    its reduced cost is its value exactly (no thread, no kind price yet): 1e-9 does not enter,
    1.005e-9 does."""
    counts = [np.array([[1.0]]), np.array([[0.0]])]
    _, _, found, _, converged = column_generation(counts, [np.array([1.0]), np.array([value])], [1, 1], np.array([1.0]))
    assert converged and found == columns


def test_an_artificial_past_1e_9_is_not_converged():
    """1 + 1e-9 threads of one type and one domain that holds one ({1 thread: 1.0}): after it
    enters, the artificial keeps 1 + 1e-9 - 1 = 1.00000008e-9 (in floating point), past the 1e-9
    tolerance: no column improves, yet the LP is not feasible -- not converged, no LP value.  The
    bound is the second Lagrangian (pi = -10, mu = 11): -10 (1 + 1e-9) + 11 = 1 - 1e-8."""
    bound, lp_value, columns, iterations, converged = column_generation(
        [np.array([[1.0]])], [np.array([1.0])], [1], np.array([1.0 + 1e-9])
    )
    assert (lp_value, columns, iterations, converged) == (None, 1, 2, False)
    assert bound == pytest.approx(1 - 1e-8, rel=REL)


def test_no_configuration_leaves_the_threads_to_the_artificial():
    """A kind with no configuration and one thread: the artificial carries it at big = 10, the
    price is -10, the kind adds nothing to the Lagrangian (no configuration), so the bound is
    -10 in value units of 1 (no value to scale by): not converged, no column, one iteration."""
    bound, lp_value, columns, iterations, converged = column_generation(
        [np.zeros((0, 1))], [np.zeros(0)], [1], np.array([1.0])
    )
    assert (lp_value, columns, iterations, converged) == (None, 0, 1, False)
    assert bound == pytest.approx(-10.0, rel=REL)


def test_configurations_worth_nothing_are_valued_in_units_of_1():
    """One thread, one domain whose only configuration ({1 thread}) is worth 0: the scale stays 1
    (not 0), the LP places the thread at value 0 and converges with bound 0."""
    bound, lp_value, columns, iterations, converged = column_generation(
        [np.array([[1.0]])], [np.array([0.0])], [1], np.array([1.0])
    )
    assert converged and (columns, iterations) == (1, 2)
    assert bound == pytest.approx(0.0, abs=1e-12) and lp_value == pytest.approx(0.0, abs=1e-12)


def test_a_solver_failure_raises(monkeypatch):
    """HiGHS's status other than 0 (here: 4, numerical difficulties) is reported, not read."""
    real = module.linprog

    def failing(*args, **kwargs):
        result = real(*args, **kwargs)
        result.status, result.message = 4, "Numerical difficulties encountered"
        return result

    monkeypatch.setattr(module, "linprog", failing)
    counts, values, multiplicity, demand = _instance_a()
    with pytest.raises(ConfigurationLPFailed, match="configuration LP failed: Numerical"):
        column_generation(counts, values, multiplicity, demand)


class _Clock:
    """A stand-in for `time` in the module: perf_counter advances by `step` at every call."""

    def __init__(self, step: float, start: float = 1000.0) -> None:
        self.now, self.step = start - step, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize("limit, iterations", [(1.0, 2), (0.5, 1)])
def test_the_time_limit_stops_after_the_iteration_that_passes_it(monkeypatch, limit, iterations):
    """Clock steps of 1 s: the check after iteration 1 reads 1 s elapsed, after iteration 2, 2 s.
    A limit of 1 s is not passed at 1 s (strictly more is needed): two iterations; 0.5 s: one.
    add=1 on instance A, which needs three to converge."""
    monkeypatch.setattr(module, "time", _Clock(1.0))
    counts, values, multiplicity, demand = _instance_a()
    _, lp_value, columns, found, converged = column_generation(
        counts, values, multiplicity, demand, add=1, time_limit=limit
    )
    assert (found, columns, converged, lp_value) == (iterations, iterations, False, None)


# ============================================================================ partial pricing
class _Configs:
    """A stand-in for `IndexedConfigurations`: `cells(rows)` gives the rows themselves."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def cells(self, rows):
        return np.asarray(rows)


class _Evaluator:
    """A stand-in for `ConfigurationValues`: given upper bounds and exact values; records the rows
    valued."""

    def __init__(self, upper: np.ndarray, exact: np.ndarray) -> None:
        self._upper, self._exact, self.calls = upper, exact, []

    def upper(self, configs) -> np.ndarray:
        return self._upper.copy()

    def value(self, rows: np.ndarray) -> np.ndarray:
        self.calls.append(np.array(rows))
        return self._exact[rows]


def test_lazy_values_value_on_demand_and_only_once():
    """`LazyValues[j]` gives the exact value (valuing it), and `evaluate` values only rows not
    valued yet."""
    evaluator = _Evaluator(np.array([4.0, 3.0, 2.0, 1.0]), np.array([3.5, 2.5, 1.5, 0.5]))
    lazy = LazyValues(evaluator, _Configs(4))
    assert len(lazy) == 4 and lazy.evaluated == 0
    assert lazy[1] == 2.5 and lazy.evaluated == 1
    lazy.evaluate(np.array([1, 2]))
    assert [list(c) for c in evaluator.calls] == [[1], [2]]
    assert lazy.evaluated == 2


def test_partial_pricing_values_the_batch_of_largest_upper_bounds():
    """10,000 configurations of one thread, upper bounds 2 x linspace(1e-4, 1) (scale 2), exact
    values half of them; one domain, one thread.  At iteration 1 (pi = -10) every one prices
    positive: the 8,192 with the largest upper bounds are valued (`PRICING_BATCH`), an improving
    one is among them, pricing stops.  The Lagrangian: -10 + max(valued exact: 1/2 + 10, others'
    upper bounds: 2 x u_1807 / 2 + 10) = 0.5, x 2 = 1.0; 64 columns enter."""
    n = 10_000
    upper = 2 * np.linspace(1e-4, 1.0, n)
    evaluator = _Evaluator(upper, upper / 2)
    lazy = LazyValues(evaluator, _Configs(n))
    bound, _, columns, _, converged = column_generation(
        [np.ones((n, 1))], [lazy], [1], np.array([1.0]), max_iterations=1
    )
    assert lazy.evaluated == 8192
    assert set(np.nonzero(~np.isnan(lazy.exact))[0]) == set(range(n - 8192, n))
    assert (columns, converged) == (64, False)
    assert bound == pytest.approx(1.0, rel=REL)


def test_partial_pricing_values_a_batch_of_exactly_8192_at_once():
    """Exactly `PRICING_BATCH` open configurations: all valued in one batch."""
    n = 8192
    upper = np.linspace(0.5, 1.0, n)
    lazy = LazyValues(_Evaluator(upper, upper), _Configs(n))
    column_generation([np.ones((n, 1))], [lazy], [1], np.array([1.0]), max_iterations=1)
    assert lazy.evaluated == n


@pytest.mark.parametrize("first, valued", [(1e-9, 8200), (1.005e-9, 8192)])
def test_partial_pricing_goes_on_until_a_value_improves_by_more_than_1e_9(first, valued):
    """8,200 empty configurations (no thread: their reduced cost is their value), upper bounds in
    (0.5, 1] for the first 8,192 (one is 1: scale 1) and in (0, 0.5) for the other 8, exact
    values `first` and 0.  Improving by 1e-9 is not improving: the next batch is valued too."""
    n = 8200
    upper = np.concatenate([np.linspace(0.51, 1.0, 8192), np.linspace(0.1, 0.4, 8)])
    exact = np.concatenate([np.full(8192, first), np.zeros(8)])
    lazy = LazyValues(_Evaluator(upper, exact), _Configs(n))
    column_generation([np.zeros((n, 1))], [lazy], [1], np.array([0.0]), max_iterations=1)
    assert lazy.evaluated == valued


@pytest.mark.parametrize("upper, valued", [(1e-9, 1), (1.005e-9, 2)])
def test_partial_pricing_opens_a_configuration_whose_upper_bound_improves_by_more_than_1e_9(upper, valued):
    """A configuration of one thread (value 1, scale 1), an empty one with upper bound 0.5e-9 and
    one with upper bound `upper` (reduced cost = upper bound: no thread): only upper bounds past
    1e-9 are valued."""
    uppers = np.array([1.0, 0.5e-9, upper])
    lazy = LazyValues(_Evaluator(uppers, uppers / 2), _Configs(3))
    counts = np.array([[1.0], [0.0], [0.0]])
    column_generation([counts], [lazy], [1], np.array([1.0]), max_iterations=1)
    assert lazy.evaluated == valued


def test_partial_pricing_counts_the_kinds_price_when_it_looks_for_an_improving_value():
    """Three threads of one type, 2 domains; configurations: {2 threads} (upper = value = 1,
    scale 1), group A (8,191 of one thread, upper bounds in [0.9, 0.99], values in [0.3, 0.5]
    except one of 0.6) and group B (8,200 of one thread, upper bounds in [0.7, 0.85], values in
    [0.3, 0.5]).  Iteration 1 values {2} and group A (the 8,192 largest upper bounds) and adds 64
    columns, among them {2} and the 0.6.  Iteration 2: the optimum {2} + {0.6} = 1.6, pi = 0.4,
    mu = 0.2 (pi + mu = 0.6, 2 pi + mu = 1): group B's upper bounds price past mu, so it is
    valued, a batch of 8,192 then the last 8; none is worth more than pi + mu, so every one is
    valued (a price counted with the wrong sign would stop after the first batch) and the run
    converges at 1.6."""
    a_exact = np.linspace(0.3, 0.5, 8191)
    a_exact[4000] = 0.6
    upper = np.concatenate([[1.0], np.linspace(0.9, 0.99, 8191), np.linspace(0.7, 0.85, 8200)])
    exact = np.concatenate([[1.0], a_exact, np.linspace(0.3, 0.5, 8200)])
    n = len(upper)
    lazy = LazyValues(_Evaluator(upper, exact), _Configs(n))
    counts = np.concatenate([[[2.0]], np.ones((n - 1, 1))])
    bound, lp_value, columns, iterations, converged = column_generation([counts], [lazy], [2], np.array([3.0]))
    assert converged and (columns, iterations) == (64, 2)
    assert bound == pytest.approx(1.6, rel=REL) and lp_value == pytest.approx(1.6, rel=REL)
    assert lazy.evaluated == n


def test_partial_pricing_leaves_configurations_below_the_kind_price():
    """Instance A's kind 0 valued lazily (upper bounds = values), plus an empty configuration with
    upper bound 1.5e-10 (1e-10 in LP units).  It is never valued: at iteration 3 the kind's price
    is 1/3, and 1e-10 - 1/3 is far from improving (at iterations 1 and 2 the price is 0 and
    1e-10 <= 1e-9).  The run is the traced one (3 iterations, 2 columns, 2.5); the three others
    are valued at iteration 1."""
    counts, values, multiplicity, demand = _instance_a(extra_kinds=False)
    upper = np.array([1.0, 1.5, 0.9, 1.5e-10])
    lazy = LazyValues(_Evaluator(upper, upper), _Configs(4))
    bound, lp_value, columns, iterations, converged = column_generation(
        [np.vstack([counts[0], [[0.0]]]), counts[1]], [lazy, values[1]], multiplicity, demand, add=1
    )
    assert converged and (columns, iterations) == (2, 3)
    assert bound == pytest.approx(2.5, rel=REL)
    assert lazy.evaluated == 3


# ============================================================= configuration_bound and friends
from tests.solver.test_lp_constraints import CORES  # noqa: E402  (two cores of two pipes of two strands)

THREE = "applications: {a: {tasks: {t: {cycles: 100, demand: {port: 0.6}}}}}\nworkload: [{app: a, instances: 3}]\n"


def _problem():
    """Three threads of 100 cycles at port demand 0.6 on two cores (`test_lp_constraints`): one
    alone on a core earns 10 Mpps, two on one core 2 x 1000/120; the LP optimum is 26.667 Mpps."""
    return BindingProblem(spec_from(THREE, CORES))


def _size(problem) -> int:
    types = ThreadTypes.of(problem)
    layout = Layout.of(problem, types)
    return sum(count_configurations(types, layout, sizes) for sizes in layout.kinds)


def test_the_bound_and_its_solution_on_a_small_spec():
    """The converged bound is the hand optimum 10 + 2 x 1000/120 Mpps (with its 1e-9 margin); the
    solution's weights x values add up to it, its columns place each thread type exactly as often
    as the spec has it, and no kind uses more domains than it has."""
    problem = _problem()
    found = configuration_bound(problem)
    optimum = (10 + 2e3 / 120) * 1e6
    assert found.converged
    assert found.lp_value == pytest.approx(optimum, rel=1e-7)
    assert found.value == pytest.approx(optimum * (1 + 1e-9), rel=1e-12)
    assert found.level == "core"
    assert 0 < found.columns <= found.configurations and 2 <= found.iterations <= 500
    assert 0 <= found.wall_time < 60
    assert found.solution
    assert sum(w * v for _, _, w, v in found.solution) == pytest.approx(found.lp_value, rel=1e-7)
    placed = sum(w * cells.sum(axis=0) for _, cells, w, _ in found.solution)
    assert placed == pytest.approx(ThreadTypes.of(problem).count.astype(float), abs=1e-7)
    for sizes, n_domains in Layout.of(problem, ThreadTypes.of(problem)).kinds.items():
        assert sum(w for s, _, w, _ in found.solution if s == sizes) <= n_domains + 1e-7


def test_the_wall_time_and_the_time_left_for_the_pricing(monkeypatch):
    """With a clock of 1 s steps and 10 s given, the column generation gets 10 - 1 = 9 s (the two
    clock reads of `configuration_bound` before it): its checks read 1, 2, ... s, so it converges
    (the spec needs 2 iterations); the wall time is the clock's steps, 1 per read."""
    clock = _Clock(1.0)
    monkeypatch.setattr(module, "time", clock)
    found = configuration_bound(_problem(), time_limit=10.0)
    assert found.converged and found.iterations == 2
    # reads: start, the time left, the pricing's start, one check (iteration 1), the wall time
    assert found.wall_time == pytest.approx(4.0)


def test_the_pricing_gets_the_time_left(monkeypatch):
    """Clock steps of 1.5 s and 10 s given: the pricing gets 10 - 1.5 = 8.5 s, and its one check
    reads 1.5 s: it converges (with 1 s, the least it gets, it would stop after iteration 1)."""
    monkeypatch.setattr(module, "time", _Clock(1.5))
    found = configuration_bound(_problem(), time_limit=10.0)
    assert found.converged and found.iterations == 2


def test_the_pricing_is_cut_at_one_second_when_less_is_left(monkeypatch):
    """Clock steps of 1.005 s and a limit of 1.5 s: the time left is max(1, 1.5 - 1.005) = 1 s
    (not 1.01, not 1.5 + 1.005), and the first check reads 1.005 s: past it, so the run stops
    after one iteration."""
    monkeypatch.setattr(module, "time", _Clock(1.005))
    found = configuration_bound(_problem(), time_limit=1.5)
    assert not found.converged and found.iterations == 1 and found.lp_value is None


def test_the_limits_on_size_and_estimated_time():
    """The enumeration's size (`count_configurations`, 6 here) may equal the limit; the estimate
    is 6e-6 s per configuration and may equal the time left."""
    problem = _problem()
    size = _size(problem)
    assert size == 6
    assert enumeration_fits(problem, max_configurations=size) is True
    assert enumeration_fits(problem, max_configurations=size - 1) is False
    assert enumeration_fits(problem) is True
    assert enumeration_seconds(problem) == pytest.approx(6e-6 * size, rel=1e-12)
    configuration_bound(problem, max_configurations=size)  # no NotApplicable
    with pytest.raises(NotApplicable, match="exceed the limit"):
        configuration_bound(problem, max_configurations=size - 1)
    assert configuration_bound(problem, time_limit=size * 6e-6).converged
    with pytest.raises(NotApplicable, match="would take about"):
        configuration_bound(problem, time_limit=size * 6e-6 * 0.99)


def test_the_priced_lp_equals_the_enumerated_lp_with_fewer_columns():
    """On t2-ipfwd-intadd-x2 (105 configurations of a core), the converged bound is the enumerated
    LP's optimum (scipy's HiGHS on every column), and pricing needed fewer columns than
    configurations and valued fewer than all."""
    from tasksolve.specs import load_spec

    problem = BindingProblem(load_spec("t2-ipfwd-intadd-x2"))
    found = configuration_bound(problem)
    types = ThreadTypes.of(problem)
    layout = Layout.of(problem, types)
    ((sizes, n_domains),) = layout.kinds.items()
    configs = enumerate_configurations(types, layout, sizes)
    from tasksolve.solver.binding.configurations import ConfigurationValues

    values = ConfigurationValues(problem, types, layout).value(configs)
    full = linprog(
        -values,
        A_eq=sparse.csr_matrix(configs.sum(axis=1).astype(float).T),
        b_eq=types.count.astype(float),
        A_ub=np.ones((1, len(values))),
        b_ub=[float(n_domains)],
        bounds=(0, None),
        method="highs",
    )
    assert found.converged
    assert found.lp_value == pytest.approx(-full.fun, rel=1e-7)
    assert found.value == pytest.approx(-full.fun, rel=1e-7)
    assert found.columns < len(values)
    assert found.valued < found.configurations
