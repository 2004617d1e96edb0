"""Pins of `solver.binding.level_lp`'s column generation (`solve_level_lp`), `level_bound` and
`integer_modes`.

The soundness tests (`test_level_lp.py`, `test_lp_constraints.py`) check that the bound is never
below an optimum; each test here kills mutants of the module that the soundness tests cannot see,
since a looser bound is still sound: the Lagrangian bound of an unconverged run, the iteration and
column counts, the initial master, `add`, the time limits, the solver-failure paths, the fields of
`level_bound`'s result and the integer-mode MIP's bound, options and fallbacks.

Expected values are derived by hand on tiny specs (in the docstrings) or come from the enumerated
LP (``full=True``: every column in one master, no pricing).  Units: 1 GHz, so a thread of ``E``
cycles per packet runs ``1000 / E`` Mpps.  Tolerances: 1e-9 relative where HiGHS reproduces a
small rational LP's hand value to rounding; 1e-7 relative (the project's LP convention) between
the priced and the enumerated LP.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.optimize

from tasksolve.solver.binding import level_lp
from tasksolve.solver.binding.configuration_lp import ConfigurationLPFailed
from tasksolve.solver.binding.configurations import NotApplicable
from tasksolve.solver.binding.problem import BindingProblem
from tests.simulate import spec_from

REL = 1e-9

from tests.solver.test_lp_constraints import SOCKET  # noqa: E402  (the level L, its L3, two cores)

TWO_SOCKETS = SOCKET.replace("{name: socket, count: 1}", "{name: socket, count: 2}")
# three threads of 100 cycles at port demand 1.0 (L3 0.1: one mode, [0, 1])
THREE = (
    "applications: {a: {tasks: {t: {cycles: 100, demand: {port: 1.0, l3: 0.1}}}}}\nworkload: [{app: a, instances: 3}]\n"
)
# two threads of 100 cycles at L3 demand 0.75: the socket's load 1.5 needs modes
MODES = "applications: {a: {tasks: {t: {cycles: 100, demand: {l3: 0.75}}}}}\nworkload: [{app: a, instances: 2}]\n"
# two threads at L3 demand 0.5005: load 1.001, three modes [0, 1], [1, 1.001], [1.001, 1.002001]
THREE_MODES = (
    "applications: {a: {tasks: {t: {cycles: 100, demand: {l3: 0.5005}}}}}\nworkload: [{app: a, instances: 2}]\n"
)


def _lp(body: str, topology: str = SOCKET, max_modes: int | None = None) -> level_lp.LevelLP:
    return level_lp.build(BindingProblem(spec_from(body, topology)), max_modes=max_modes)


def _grid_ratio(top: float, modes: int) -> float:
    """The grid's ratio (docs/design.md): from 0.001, times 1.5 until the modes fit."""
    ratio = 0.001
    while math.log(top) / math.log1p(ratio) + 2 > modes:
        ratio *= 1.5
    return ratio


def _unconverged_ok(found, full_value: float, iterations: int) -> None:
    bound, lp_value, _, found_iterations, converged = found
    assert not converged and lp_value is None and found_iterations == iterations
    assert math.isfinite(bound) and bound >= full_value * (1 - 1e-9)


# ==================================================================== the column generation
def test_three_threads_on_a_socket_traced_by_hand():
    """One socket, two cores (cells of 2), three threads: configurations of a cell hold 0, 1 or 2
    threads, summed rate 0, 10 or 2 x 5 Mpps (port slowdown 2): scale 10 Mpps.  The LP optimum:
    one core with 2 threads, one with 1: 20 Mpps.  The first master holds only the empty cell
    (1 column); iteration 1 prices both others, iteration 2 is the optimum: 3 columns, 2
    iterations, bound = LP = 20 Mpps.  The enumerated LP (every column at once) is the same in 1
    iteration."""
    lp = _lp(THREE)
    bound, lp_value, columns, iterations, converged = level_lp.solve_level_lp(lp)
    assert converged and (columns, iterations) == (3, 2)
    assert lp_value == pytest.approx(20e6, rel=REL) and bound == pytest.approx(20e6, rel=REL)
    full = level_lp.solve_level_lp(lp, full=True)
    assert full[2:] == (3, 1, True)
    assert full[1] == pytest.approx(20e6, rel=REL)


def test_one_iteration_gives_the_lagrangian_of_the_all_artificial_master():
    """max_iterations=1 on the three threads: the master places no thread (artificials at BIG =
    10 each: 30), its duals are 10 on the count row and -1 on the rate row (w <= 0 binds at the
    least price that prices w at 0).  The configurations of 1 and 2 threads (rates 1, 1 in
    units of 10 Mpps) price -(10 + 1) and -(20 + 1); each may take U = 2 cells x 1 socket:
    Lagrangian (minimisation) 30 + 2 (-11 - 21) = -34, a bound of 34 x 10 Mpps.  Not converged,
    no LP value, the 2 priced columns added."""
    found = level_lp.solve_level_lp(_lp(THREE), max_iterations=1)
    _unconverged_ok(found, 20e6, 1)
    assert found[2] == 3
    assert found[0] == pytest.approx(340e6, rel=REL)


def test_the_lagrangian_counts_every_domain_of_a_kind():
    """The same on two sockets (one kind of 2 domains): U = 2 cells x 2 sockets = 4, so the first
    Lagrangian is 30 + 4 (-11 - 21) = -98: 980 Mpps.  The LP optimum puts each thread alone on a
    core: 30 Mpps, reached at iteration 2."""
    lp = _lp(THREE, TWO_SOCKETS)
    found = level_lp.solve_level_lp(lp, max_iterations=1)
    _unconverged_ok(found, 30e6, 1)
    assert found[0] == pytest.approx(980e6, rel=REL)
    bound, lp_value, columns, iterations, converged = level_lp.solve_level_lp(lp)
    assert converged and (columns, iterations) == (3, 2)
    assert bound == pytest.approx(30e6, rel=REL) and lp_value == pytest.approx(30e6, rel=REL)


def test_the_mode_grid_lp_is_the_hand_value_and_the_enumerated_one():
    """Two threads at L3 demand 0.75 (load 1.5) with at most 8 modes: the grid ratio is r =
    0.001 x 1.5^11 = 0.0865 (log 1.5 / log(1 + r) + 2 <= 8), and the LP, mixing modes, carries the
    load 1.5 at the slowdown of a lower end 1.5 / (1 + r): 2 x 1000/150 x (1 + r) = 14.487 Mpps
    (`test_lp_constraints.test_level_mode_load_rows`), the enumerated LP's value."""
    lp = _lp(MODES, max_modes=8)
    r = _grid_ratio(1.5 * (1 + 1e-9) + 1e-9, 8)
    hand = 2e3 / 150 * (1 + r) * 1e6
    assert len(lp.modes) == 6
    bound, lp_value, columns, iterations, converged = level_lp.solve_level_lp(lp)
    _, full_value, full_columns, full_iterations, full_converged = level_lp.solve_level_lp(lp, full=True)
    assert converged and full_converged and full_iterations == 1
    assert full_columns == 6 * 3  # every mode x every cell configuration (0, 1, 2 threads)
    assert lp_value == pytest.approx(hand, rel=1e-7) and full_value == pytest.approx(hand, rel=1e-7)
    assert bound == pytest.approx(hand, rel=1e-7)
    assert 2 <= iterations <= 400 and columns <= full_columns
    _unconverged_ok(level_lp.solve_level_lp(lp, max_iterations=1), hand, 1)


def test_a_solver_failure_raises(monkeypatch):
    """HiGHS's status other than 0 is reported, not read."""
    real = scipy.optimize.linprog

    def failing(*args, **kwargs):
        result = real(*args, **kwargs)
        result.status, result.message = 4, "Numerical difficulties encountered"
        return result

    monkeypatch.setattr(scipy.optimize, "linprog", failing)
    with pytest.raises(ConfigurationLPFailed, match="level LP failed: Numerical"):
        level_lp.solve_level_lp(_lp(THREE))


from tests.solver.test_configuration_lp_pins import _Clock  # noqa: E402  (a fake perf_counter)


@pytest.mark.parametrize("limit, converged", [(1.0, True), (0.5, False)])
def test_the_time_limit_stops_after_the_iteration_that_passes_it(monkeypatch, limit, converged):
    """Clock steps of 1 s: the check after iteration 1 reads 1 s elapsed.  A limit of 1 s is not
    passed (strictly more is needed): iteration 2 converges; 0.5 s: the run stops after one."""
    monkeypatch.setattr(level_lp, "time", _Clock(1.0))
    _, lp_value, _, iterations, found = level_lp.solve_level_lp(_lp(THREE), time_limit=limit)
    assert found == converged and iterations == (2 if converged else 1)
    assert (lp_value is None) == (not converged)


def test_default_add_is_200_columns_per_iteration():
    """With the default grid the load 1.5 takes 272 modes (r = 0.0015); the first master holds the
    empty cell of every mode (272 columns), and iteration 1 adds the 200 best-priced (of 2 x 272
    priced negative)."""
    lp = _lp(MODES)
    assert len(lp.modes) == 272
    _, _, columns, iterations, converged = level_lp.solve_level_lp(lp, max_iterations=1)
    assert (columns, iterations, converged) == (272 + 200, 1, False)


def test_pricing_needs_fewer_columns_than_the_enumerated_lp():
    """On the 272 modes, the priced LP reaches the enumerated LP's optimum (2 x 1000/150 x
    (1 + 0.0015) Mpps) with fewer columns than the 272 x 3 of the enumerated one."""
    lp = _lp(MODES)
    bound, lp_value, columns, _, converged = level_lp.solve_level_lp(lp)
    _, full_value, full_columns, _, _ = level_lp.solve_level_lp(lp, full=True)
    hand = 2e3 / 150 * (1 + 0.0015) * 1e6
    assert converged and full_columns == 272 * 3 and columns < full_columns
    assert full_value == pytest.approx(hand, rel=1e-7) and lp_value == pytest.approx(full_value, rel=1e-7)
    assert bound == pytest.approx(full_value, rel=1e-7)


# ============================================================================== level_bound
def test_level_bound_reports_the_lp_and_its_margin(monkeypatch):
    """Two threads at L3 demand 0.5005 (load 1.001): three modes, three cell configurations each
    (9 configurations); both threads on one core credited at the mode [1, 1.001]'s lower end 1
    (no slowdown): 2 x 10 = 20 Mpps, widened by `LP_TOLERANCE` (1e-6).  The clock (1 s steps) is
    read at the start, at the pricing's start and at the end: a wall time of 2 s."""
    monkeypatch.setattr(level_lp, "time", _Clock(1.0))
    found = level_lp.level_bound(BindingProblem(spec_from(THREE_MODES, SOCKET)))
    assert found.converged and found.source == "level LP"
    assert found.level == "socket (by level)"
    assert found.configurations == 9
    assert (found.columns, found.iterations) == (9, 2)
    assert found.lp_value == pytest.approx(20e6, rel=REL)
    assert found.value == pytest.approx(20e6 * (1 + 1e-6), rel=REL)
    assert found.wall_time == pytest.approx(2.0)


def test_level_bound_bounds_only_total_throughput():
    problem = BindingProblem(spec_from(THREE, SOCKET))
    with pytest.raises(NotApplicable, match="total-throughput"):
        level_lp.level_bound(problem, objective="latency")
    assert level_lp.level_bound(problem, objective="total_throughput").converged


@pytest.mark.parametrize("step, limit, converged", [(1.0, 10.0, True), (0.503, 0.8, False)])
def test_level_bound_gives_the_pricing_the_time_left_and_at_least_half_a_second(monkeypatch, step, limit, converged):
    """The pricing gets max(0.5, limit - elapsed): with 1 s steps and 10 s, 9 s, so its one check
    (1 s) passes and it converges; with 0.503 s steps and 0.8 s, 0.5 s (not 0.505, not 1.303),
    which the first check (0.503 s) passes: one iteration."""
    monkeypatch.setattr(level_lp, "time", _Clock(step))
    found = level_lp.level_bound(BindingProblem(spec_from(THREE, SOCKET)), time_limit=limit)
    assert found.converged == converged and found.iterations == (2 if converged else 1)


# ============================================================================ integer_modes
def _mip_hand() -> float:
    """The integer-mode MIP on `MODES` with 8 modes: the socket takes the one mode holding the
    load 1.5, credited its lower end a_j = (1 + r)^floor(log 1.5 / log(1 + r)): 2 x 1000 /
    (100 a_j) Mpps."""
    r = _grid_ratio(1.5 * (1 + 1e-9) + 1e-9, 8)
    return 2e3 / (100 * (1 + r) ** math.floor(math.log(1.5) / math.log1p(r))) * 1e6


def test_integer_modes_is_the_hand_value_between_the_optimum_and_the_lp():
    lp = _lp(MODES, max_modes=8)
    bound, x, proven = level_lp.integer_modes(lp)
    assert proven and x is not None
    assert bound == pytest.approx(_mip_hand(), rel=1e-4)  # HiGHS stops at a 1e-4 gap
    assert 2e3 / 150 * 1e6 <= bound <= level_lp.solve_level_lp(lp)[0] * (1 + 1e-9)
    z = x[1 : 1 + len(lp.modes)]  # one application (w), then z per mode
    assert z == pytest.approx(np.round(z), abs=1e-6) and z.sum() == pytest.approx(1.0, abs=1e-6)


def test_integer_modes_refuses_more_columns_than_its_limit(monkeypatch):
    """1 kind x 6 modes x 3 configurations = 18 columns: a limit of 18 is met, 17 is not."""
    lp = _lp(MODES, max_modes=8)
    monkeypatch.setattr(level_lp, "MAX_MIP_COLUMNS", 18)
    assert level_lp.integer_modes(lp)[2]
    monkeypatch.setattr(level_lp, "MAX_MIP_COLUMNS", 17)
    with pytest.raises(ConfigurationLPFailed, match="18 columns: too many"):
        level_lp.integer_modes(lp)


def _capture(monkeypatch, change=None) -> list:
    """Wrap scipy's `milp`: record its options, let `change` alter the result."""
    real, seen = scipy.optimize.milp, []

    def wrapped(*args, **kwargs):
        seen.append(dict(kwargs["options"]))
        result = real(*args, **kwargs)
        if change is not None:
            change(result)
        return result

    monkeypatch.setattr(scipy.optimize, "milp", wrapped)
    return seen


@pytest.mark.parametrize("limit, expected", [(None, None), (0.1, 0.5), (2.0, 2.0)])
def test_integer_modes_passes_its_gap_and_at_least_half_a_second(monkeypatch, limit, expected):
    seen = _capture(monkeypatch)
    level_lp.integer_modes(_lp(MODES, max_modes=8), time_limit=limit)
    assert seen[0]["mip_rel_gap"] == 1e-4
    assert seen[0].get("time_limit") == expected


@pytest.mark.parametrize("dual", [None, math.inf])
def test_without_a_dual_bound_the_incumbent_is_widened_by_the_gap(monkeypatch, dual):
    """No (finite) dual bound but an optimal incumbent: its value x (1 + 1e-4)."""

    def change(result):
        if dual is None:
            del result["mip_dual_bound"]
        else:
            result["mip_dual_bound"] = dual

    _capture(monkeypatch, change)
    bound, x, proven = level_lp.integer_modes(_lp(MODES, max_modes=8))
    assert proven and x is not None
    assert bound == pytest.approx(_mip_hand() * (1 + 1e-4), rel=1e-6)


def test_without_a_dual_bound_or_an_optimal_incumbent_it_raises(monkeypatch):
    def change(result):
        del result["mip_dual_bound"]
        result["status"], result["message"] = 1, "Time limit reached"

    _capture(monkeypatch, change)
    with pytest.raises(ConfigurationLPFailed, match="gave no bound: Time limit"):
        level_lp.integer_modes(_lp(MODES, max_modes=8))


def test_an_unfinished_mip_gives_its_dual_bound_unproven(monkeypatch):
    def change(result):
        result["status"] = 1
        result["mip_dual_bound"] = -0.75  # minimisation, in units of the scale (20 Mpps)

    _capture(monkeypatch, change)
    bound, _, proven = level_lp.integer_modes(_lp(MODES, max_modes=8))
    assert not proven and bound == pytest.approx(0.75 * 20e6, rel=REL)


def test_an_lp_that_cannot_place_every_thread_is_not_converged():
    """Three threads, at most 2 on the socket (the cap row ``sum |c| y <= 2 z``): no plan exists;
    the LP keeps a thread on its artificial variable, so pricing ends without an improving column
    yet the run is not converged and has no LP value; the MIP, which fixes the artificials at 0,
    is infeasible and says so."""
    spec = spec_from(THREE + "constraints: {max_threads: {socket: 2}}\n", SOCKET, feasibility=False)
    lp = level_lp.build(BindingProblem(spec))
    _, lp_value, _, _, converged = level_lp.solve_level_lp(lp)
    assert not converged and lp_value is None
    with pytest.raises(ConfigurationLPFailed, match="gave no bound: The problem is infeasible"):
        level_lp.integer_modes(lp)


# ==================================================================== the LP's data (`build`)
# A socket level with three resources (l3, bw, and `spare` that no thread loads), a core (the
# cell) with its port, a strand with its ALU (below the cells), memory at the machine level; one
# of the two sockets has a core with one usable strand: two kinds of socket, cells of 1 and 2.
RICH = """
  name: rich
  clock: 1GHz
  levels:
    - {name: socket, count: 2}
    - {name: core, count: 2}
    - {name: strand, count: 2}
  resources:
    - {name: l3, level: socket, capacity: 1.0}
    - {name: bw, level: socket, capacity: 0.5}
    - {name: spare, level: socket, capacity: 1.0}
    - {name: port, level: core, capacity: 1.0}
    - {name: alu, level: strand, capacity: 0.5}
    - {name: mem, level: machine, capacity: 1.0}
  communication: {core: 5, socket: 20, machine: 100}
"""
RICH_BODY = """
applications:
  a:
    tasks:
      p: {cycles: 100, demand: {l3: 0.75, port: 0.75, mem: 0.3}}
      q: {cycles: 200, demand: {bw: 0.75, alu: 0.625, mem: 0.3}}
    edges: [{from: p, to: q, bytes: 64B}]
workload: [{app: a, instances: 2}]
constraints:
  contexts: [socket0.core0.strand0, socket0.core0.strand1, socket0.core1.strand0, socket0.core1.strand1,
             socket1.core0.strand0, socket1.core1.strand0, socket1.core1.strand1]
"""


def _rich() -> tuple[BindingProblem, level_lp.LevelLP]:
    problem = BindingProblem(spec_from(RICH_BODY, RICH))
    return problem, level_lp.build(problem, max_modes=16)


def _grid(load: float, cap: float, per_resource: float) -> list[tuple[float, float]]:
    """The module docstring's grid, relaxation 2: the top is the load widened by 1e-9 (relative
    and absolute); above the capacity, points cap (1 + r)^i with r from 0.001 times 1.5 until
    log(top / cap) / log(1 + r) + 2 fits `per_resource`; else the one mode [0, max(cap, top)]."""
    top = load * (1 + 1e-9) + 1e-9
    if top <= cap:
        return [(0.0, max(cap, top))]
    ratio = 0.001
    while math.log(top / cap) / math.log1p(ratio) + 2 > per_resource:
        ratio *= 1.5
    points = [0.0] + [cap * (1 + ratio) ** i for i in range(math.ceil(math.log(top / cap) / math.log1p(ratio)) + 1)]
    return list(zip(points[:-1], points[1:]))


def test_the_modes_are_the_grids_of_the_l_level_resources_a_thread_loads():
    """l3 (load 2 x 0.75 = 1.5 on capacity 1) and bw (1.5 on 0.5) have grids of at most
    16^(1/2) = 4 points; `spare`, loaded by no thread, has none: 3 x 3 = 9 modes, lower ends then
    upper ends, in `itertools.product` order."""
    problem, lp = _rich()
    assert [
        problem.topology.resources[j].name for j in level_lp._modes(problem, lp.types, _layout(problem), 16)[0]
    ] == [
        "l3",
        "bw",
    ]
    expected = [
        np.array([lo1, lo2, hi1, hi2])
        for (lo1, hi1), (lo2, hi2) in itertools.product(_grid(1.5, 1.0, 4), _grid(1.5, 0.5, 4))
    ]
    assert len(lp.modes) == len(expected) == 9
    for got, want in zip(lp.modes, expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("demand, modes", [(0.5, [(0.0, 1.0), (1.0, 1.001)]), (0.25, [(0.0, 1.0)])])
def test_a_load_at_the_capacity_gets_a_mode_above_it_and_one_below_gets_one_mode(demand, modes):
    """Two threads at L3 demand 0.5 load the socket exactly to its capacity 1: the 1e-9 widening
    puts the top above it, so a second mode [1, 1.001] follows; at 0.25 the load 0.5 is below,
    and the one mode ends at the capacity, not at the load."""
    body = f"applications: {{a: {{tasks: {{t: {{cycles: 100, demand: {{l3: {demand}}}}}}}}}}}\nworkload: [{{app: a, instances: 2}}]\n"
    lp = _lp(body)
    np.testing.assert_allclose(np.array(lp.modes), np.array(modes), rtol=1e-12)


def _layout(problem):
    from tasksolve.solver.binding.configurations import Layout, ThreadTypes

    return Layout.of(problem, ThreadTypes.of(problem))


def _rates_by_hand(problem, lp: level_lp.LevelLP, size: int) -> np.ndarray:
    """Relaxations 2 and 3 of the module docstring, one thread at a time: a thread's slowdown is
    the largest load / capacity over the resources it loads -- the mode's lower end on the L
    level, the machine's whole load, its cell's load, its own demand below the cells -- and its
    work adds, per producer type, the in-cell cost when the cell holds more producers than the
    threads of its type before it, else the cheapest cost outside the cell."""
    topo, types, layout = problem.topology, lp.types, _layout(problem)
    resources = level_lp._modes(problem, types, layout, 16)[0]
    configs = lp.configs[size]
    out = np.zeros((len(lp.modes), len(configs), lp.n_types))
    for j, mode in enumerate(lp.modes):
        for c, counts in enumerate(configs):
            for k in range(lp.n_types):
                for i in range(int(counts[k])):
                    work = types.cycles[k]
                    for producer, message, share in types.in_edges[k]:
                        outside = min(layout.cost_same_domain[message], layout.cost_across[message])
                        inside = min(layout.cost_same_cell[message], outside)
                        work += (inside if counts[producer] > i else outside) * share
                    slow = 1.0
                    for r, resource in enumerate(topo.resources):
                        if types.demand[k, r] <= 0:
                            continue
                        level = topo.level_index(resource.level)
                        if level == layout.level:
                            load = mode[resources.index(r)]
                        elif level < 0:
                            load = float(types.count @ types.demand[:, r])
                        elif level == layout.cell_level:
                            load = float(counts @ types.demand[:, r])
                        else:
                            load = types.demand[k, r]
                        slow = max(slow, load / resource.capacity)
                    out[j, c, k] += float(topo.clock) / (work * slow)
    return out


def test_cell_rates_are_the_documented_relaxation_thread_by_thread():
    """Every (mode, configuration, type) summed rate of both cell sizes against `_rates_by_hand`;
    the scale is the largest of them, and the L-level loads are the configurations' own."""
    problem, lp = _rich()
    raw = {size: _rates_by_hand(problem, lp, size) for size in lp.configs}
    assert lp.scale == pytest.approx(max(float(r.max()) for r in raw.values()), rel=1e-12)
    for size, rates in raw.items():
        np.testing.assert_allclose(lp.rates[size] * lp.scale, rates, rtol=1e-12)
        np.testing.assert_allclose(lp.loads[size], lp.configs[size] @ lp.types.demand[:, [0, 1]], rtol=1e-12)
    assert sorted(lp.configs) == [1, 2] and [m for m, _ in lp.kinds] == [1, 1]


def test_rates_below_one_packet_per_second_are_not_scaled_up():
    """A thread of 2e9 cycles at 1 GHz runs 0.5 packets/s: the scale stays 1 (rates are scaled
    down to at most 1, never up)."""
    lp = _lp(
        "applications: {a: {tasks: {t: {cycles: 2000000000, demand: {l3: 0.1}}}}}\nworkload: [{app: a, instances: 1}]\n"
    )
    assert lp.scale == 1.0
    assert float(lp.rates[2].max()) == pytest.approx(0.5, rel=1e-12)


def test_a_machine_without_cells_is_refused():
    """Only the core's port is loaded: the L level is the core, the level right above the
    contexts, so there is no cell level to decompose into."""
    with pytest.raises(NotApplicable, match="needs cells"):
        _lp("applications: {a: {tasks: {t: {cycles: 100, demand: {port: 0.5}}}}}\nworkload: [{app: a, instances: 2}]\n")


def test_the_column_limits_are_checked_at_their_boundaries(monkeypatch):
    """RICH has 2 kinds x 9 modes; cells of 1 and 2 contexts hold C(2 + 1, 1) = 3 and C(2 + 2, 2)
    = 6 multisets of 2 types, of which 3 and 6 respect the counts (2 and 2): 18 x 9 = 162 columns.
    The configurations check (per cell size, before building: C x kinds x modes = 6 x 18 = 108
    for cells of 2) refuses above its limit only; the columns check likewise."""
    problem = BindingProblem(spec_from(RICH_BODY, RICH))
    monkeypatch.setattr(level_lp, "MAX_COLUMNS", 162)
    assert len(level_lp.build(problem, max_modes=16).kinds) == 2  # both at their limits: built
    monkeypatch.setattr(level_lp, "MAX_COLUMNS", 161)
    with pytest.raises(NotApplicable, match="162 level-LP columns exceed the limit of 161"):
        level_lp.build(problem, max_modes=16)
    monkeypatch.setattr(level_lp, "MAX_COLUMNS", 107)
    with pytest.raises(NotApplicable, match="cells of 2 contexts have too many configurations"):
        level_lp.build(problem, max_modes=16)


def test_the_blocks_hold_each_l_resource_mode_row_and_the_reduced_costs_read_them():
    """Two L-level resources (l3, bw) and at most 3 threads per socket: the load rows of mode j
    are ``a_j z - load <= 0`` then ``load - a_{j+1} z <= 0`` for each resource in turn, the cap
    row ``|c| - cap z <= 0``; every column's reduced cost is ``-(pi_eq . a_eq + pi_ub . a_ub)``
    of its own block, for any duals."""
    body = RICH_BODY.replace("constraints:\n", "constraints:\n  max_threads: {socket: 3}\n")
    lp = level_lp.build(BindingProblem(spec_from(body, RICH)), max_modes=16)
    rows = level_lp._Rows(lp)
    assert rows.R == 2 and lp.domain_cap == 3
    cost, fixed_eq, fixed_ub = level_lp._fixed_block(lp, rows)
    apps, modes = len(lp.types.apps), len(lp.modes)
    assert list(cost[:apps]) == [-1.0] and list(cost[apps + len(lp.kinds) * modes :]) == [level_lp.BIG] * lp.n_types
    rng = np.random.default_rng(0)
    pi_eq, pi_ub = rng.normal(size=rows.n_eq), rng.normal(size=rows.n_ub)
    reduced = level_lp._reduced_costs(lp, rows, pi_eq, pi_ub)
    for g, (_, cells) in enumerate(lp.kinds):
        for j, mode in enumerate(lp.modes):
            base, cap_row, z = rows.loads[(g, j)], rows.caps[(g, j)], apps + g * modes + j
            for q in range(2):
                assert fixed_ub[base + 2 * q, z] == mode[q] and fixed_ub[base + 2 * q + 1, z] == -mode[2 + q]
            assert fixed_ub[cap_row, z] == -3 and cap_row == base + 4
            for s in cells:
                index = np.arange(len(lp.configs[s]))
                a_eq, a_ub = level_lp._y_block(lp, rows, g, j, s, index)
                for q in range(2):
                    np.testing.assert_array_equal(a_ub[base + 2 * q], -lp.loads[s][:, q])
                    np.testing.assert_array_equal(a_ub[base + 2 * q + 1], lp.loads[s][:, q])
                np.testing.assert_array_equal(a_ub[cap_row], lp.configs[s].sum(axis=1))
                np.testing.assert_allclose(reduced[(g, j, s)], -(pi_eq @ a_eq + pi_ub @ a_ub), rtol=1e-12, atol=1e-12)


def test_the_configurations_check_refuses_above_its_limit_only(monkeypatch):
    """Two threads of one type on one socket of two cores of 2 strands: cells of 2 hold C(1 + 2, 2)
    = 3 multisets (0, 1, 2 threads), all within the count, in each of the 6 modes: 18 columns,
    which both checks count alike.  At a limit of 18 both pass; at 17 the configurations check,
    the first, refuses."""
    problem = BindingProblem(spec_from(MODES, SOCKET))
    modes = len(level_lp.build(problem, max_modes=8).modes)
    monkeypatch.setattr(level_lp, "MAX_COLUMNS", 3 * modes)
    assert level_lp.build(problem, max_modes=8).configs[2].shape == (3, 1)
    monkeypatch.setattr(level_lp, "MAX_COLUMNS", 3 * modes - 1)
    with pytest.raises(NotApplicable, match="cells of 2 contexts have too many configurations"):
        level_lp.build(problem, max_modes=8)


def test_a_cell_resource_slows_only_the_threads_that_load_it():
    """RICH with a port of capacity 0.5: p alone loads it, 0.75 -- past the capacity even beside a
    q, whose rate the port must not touch (`_rates_by_hand`)."""
    problem = BindingProblem(
        spec_from(RICH_BODY, RICH.replace("port, level: core, capacity: 1.0", "port, level: core, capacity: 0.5"))
    )
    lp = level_lp.build(problem, max_modes=16)
    for size in lp.configs:
        np.testing.assert_allclose(lp.rates[size] * lp.scale, _rates_by_hand(problem, lp, size), rtol=1e-12)
