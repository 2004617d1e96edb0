"""Each part of the configuration LP (`solver.binding.configurations`, `configuration_lp`) and of
the level LP (`solver.binding.level_lp`) pinned by a tiny spec on which it binds: the bound's exact
value is derived by hand in the test, so dropping or loosening that part changes the value and the
test fails; and the bound is checked against the closed form's optimum, brute-forced over every
placement class (`samplers.distinct_placements`, caps applied) -- equal to it wherever the
relaxation is exact.

Units: 1 GHz, so a thread of ``E`` cycles per packet runs ``1000 / E`` Mpps.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tasksolve.simulate.analytic import BatchModel
from tasksolve.solver.binding import level_lp
from tasksolve.solver.binding.configuration_lp import configuration_bound
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.solver.binding.samplers import distinct_placements
from tests.simulate import spec_from

REL = 1e-6  # the configuration bound carries a 1e-9 margin, the level LP's 1e-6 (`LP_TOLERANCE`)

# two cores of two pipes (the cells) of two strands: a port per core, an fpu per pipe, memory
# machine-wide; a message costs 5 cycles inside a pipe, 20 inside a core, 100 across
CORES = """
  name: cores
  clock: 1GHz
  levels:
    - {name: core, count: 2}
    - {name: pipe, count: 2}
    - {name: strand, count: 2}
  resources:
    - {name: port, level: core, capacity: 1.0}
    - {name: fpu, level: pipe, capacity: 1.0}
    - {name: mem, level: machine, capacity: 1.0}
  communication: {pipe: 5, core: 20, machine: 100}
"""
# one socket (its L3 makes it the level L) of two cores (the cells) of two strands; memory
# machine-wide
SOCKET = """
  name: socket
  clock: 1GHz
  levels:
    - {name: socket, count: 1}
    - {name: core, count: 2}
    - {name: strand, count: 2}
  resources:
    - {name: l3, level: socket, capacity: 1.0}
    - {name: port, level: core, capacity: 1.0}
    - {name: mem, level: machine, capacity: 1.0}
  communication: {core: 5, socket: 20, machine: 100}
"""


def brute_force(spec) -> float:
    """Mpps: the closed form's best total throughput over every placement class within the caps."""
    problem = BindingProblem(spec)
    reps, _ = distinct_placements(spec)
    topo = spec.topology
    keep = [
        all(
            np.bincount([topo.domain_of(int(c), level) for c in row]).max() <= cap
            for level, cap in problem.caps.items()
        )
        for row in reps
    ]
    return float(BatchModel(spec).evaluate(reps[np.array(keep)]).total.max()) / 1e6


def configuration(spec) -> float:
    """Mpps: `configuration_bound`, after checking it converged, carries its margin over the LP's
    optimum and covers the brute-force optimum."""
    found = configuration_bound(BindingProblem(spec))
    assert found.converged
    assert found.value >= found.lp_value * (1 + 0.5e-9)  # the margin over the LP's optimum
    assert found.value / 1e6 >= brute_force(spec) * (1 - 1e-9)
    return found.value / 1e6


def level(spec) -> float:
    """Mpps: `level_bound`, after checking it converged, carries its margin over the LP's optimum
    and covers the brute-force optimum."""
    found = level_lp.level_bound(BindingProblem(spec))
    assert found.converged
    assert found.value >= found.lp_value * (1 + 0.5 * level_lp.LP_TOLERANCE)  # HiGHS's tolerance
    assert found.value / 1e6 >= brute_force(spec) * (1 - 1e-9)
    return found.value / 1e6


def _pair(extra: str = "", producer: str = "{cycles: 100}", consumer: str = "{cycles: 150}") -> str:
    """One instance of p -> c (by default c has the most cycles: the anchor)."""
    return f"""
applications:
  a:
    tasks: {{p: {producer}, c: {consumer}}}
    edges: [{{from: p, to: c}}]
workload: [{{app: a}}]
{extra}"""


# ====================================================================== the configuration LP
def test_configuration_message_cost_in_one_cell():
    """A configuration's value charges a message from a producer in the same cell (pipe) the
    in-cell cost: p and c on one pipe, E_c = 150 + 5: 1000/155 = 6.452 Mpps, the optimum."""
    spec = spec_from(_pair(), CORES)
    assert configuration(spec) == pytest.approx(1e3 / 155, rel=REL)
    assert brute_force(spec) == pytest.approx(1e3 / 155, rel=1e-12)


def test_configuration_cell_cap_and_in_domain_cost():
    """``max_threads: {pipe: 1}`` (the cap on the cells) keeps p and c on different pipes of one
    core: the message costs the core's 20 cycles, E_c = 170: 5.882 Mpps, the optimum."""
    spec = spec_from(_pair("constraints: {max_threads: {pipe: 1}}"), CORES)
    assert configuration(spec) == pytest.approx(1e3 / 170, rel=REL)
    assert brute_force(spec) == pytest.approx(1e3 / 170, rel=1e-12)


def test_configuration_domain_cap_and_cost_across():
    """``max_threads: {core: 1}`` (the cap on L) puts p and c in different cores: c's fragment is
    c alone and its producer's message comes from across (100 cycles), E_c = 250: 4 Mpps.  The
    configuration {p} holds no anchor and earns nothing."""
    spec = spec_from(_pair("constraints: {max_threads: {core: 1}}"), CORES)
    assert configuration(spec) == pytest.approx(4.0, rel=REL)
    assert brute_force(spec) == pytest.approx(4.0, rel=1e-12)


def test_configuration_threads_outside_the_fragment_count():
    """Anchor crediting: with the anchor the producer (a, 150 cycles) and the core cap 1, a's
    fragment is a alone, but the instance's thread outside it, b (100 cycles plus a message from
    across, 100), takes at least 200 cycles: the instance earns 1000/200 = 5 Mpps, not a's 6.667."""
    spec = spec_from(
        _pair("constraints: {max_threads: {core: 1}}", producer="{cycles: 150}", consumer="{cycles: 100}"), CORES
    )
    assert configuration(spec) == pytest.approx(5.0, rel=REL)
    assert brute_force(spec) == pytest.approx(5.0, rel=1e-12)


def test_configuration_frequency_counts_in_the_work():
    """A task's work is cycles x frequency in every model: 100 cycles visited twice per packet
    run 200 cycles, 5 Mpps (the closed form's optimum), not 10."""
    spec = spec_from("applications: {a: {tasks: {t: {cycles: 100, frequency: 2}}}}\nworkload: [{app: a}]\n", CORES)
    assert configuration(spec) == pytest.approx(5.0, rel=REL)
    assert brute_force(spec) == pytest.approx(5.0, rel=1e-12)


def test_configuration_domain_kind_rows_and_the_l_level_load():
    """The kind row ``sum_j lambda_j <= m_g`` (2 cores) and the slowdown of the L-level load:
    three threads of 100 cycles at port demand 0.6.  One alone on a core earns 10 Mpps, two on one
    core 2 x 1000/120 = 16.667; the counts (lambda_1 + 2 lambda_2 = 3) and the two cores give
    lambda_1 = lambda_2 = 1: 26.667 Mpps, the optimum.  Without the kind row, 3 x 10 = 30."""
    spec = spec_from(
        "applications: {a: {tasks: {t: {cycles: 100, demand: {port: 0.6}}}}}\nworkload: [{app: a, instances: 3}]\n",
        CORES,
    )
    assert configuration(spec) == pytest.approx(10 + 2e3 / 120, rel=REL)
    assert brute_force(spec) == pytest.approx(10 + 2e3 / 120, rel=1e-12)


def test_configuration_cell_level_load():
    """The slowdown from a cell's own load: three threads (fpu demand 1.0 per pipe) on core 0's
    two pipes: two share a pipe (1000/200 each), one is alone (10): 20 Mpps, the optimum."""
    spec = spec_from(
        "applications: {a: {tasks: {t: {cycles: 100, demand: {port: 0.1, fpu: 1.0}}}}}\n"
        "workload: [{app: a, instances: 3}]\nconstraints: {contexts: [core0]}\n",
        CORES,
    )
    assert configuration(spec) == pytest.approx(20.0, rel=REL)
    assert brute_force(spec) == pytest.approx(20.0, rel=1e-12)


def test_configuration_machine_load():
    """Machine-wide loads are the same in every configuration: two threads at memory demand 0.75
    load it 1.5, each runs at 1/1.5: 2 x 1000/150 = 13.333 Mpps, the optimum."""
    spec = spec_from(
        "applications: {a: {tasks: {t: {cycles: 100, demand: {mem: 0.75}}}}}\nworkload: [{app: a, instances: 2}]\n",
        CORES,
    )
    assert configuration(spec) == pytest.approx(2e3 / 150, rel=REL)
    assert brute_force(spec) == pytest.approx(2e3 / 150, rel=1e-12)


def test_configuration_instance_count_rows():
    """The count rows ``sum_j n_kj lambda_j = N_k``: one pipe (two contexts) must hold both
    threads of the instance, a (200 cycles) and b (100), both at port demand 1.0: slowdown 2, E_a
    = 400: 2.5 Mpps.  Were a thread allowed to stay out (<=) or the pipe to take two
    configurations (no kind row), a alone would earn 1000/200 = 5."""
    spec = spec_from(
        _pair(
            "constraints: {contexts: [core0.pipe0]}",
            producer="{cycles: 200, demand: {port: 1.0}}",
            consumer="{cycles: 100, demand: {port: 1.0}}",
        ),
        CORES,
    )
    assert configuration(spec) == pytest.approx(2.5, rel=REL)
    assert brute_force(spec) == pytest.approx(2.5, rel=1e-12)


def test_configuration_anchor_crediting():
    """An instance is credited in the L-domain of its anchor, the task with the most cycles (c):
    two instances of p (100 cycles) -> c (150), both at port demand 1.0.  With the two p on one
    core and the two c on the other, each c's fragment is c alone at slowdown 2 with its message
    from across: (150 + 100) x 2 = 500 cycles, 2 x 2 Mpps.  Each instance in its own core, p and
    c on one pipe: c takes (150 + 5) x 2 = 310 cycles, 2 x 1000/310 = 6.452 Mpps, the optimum.
    (Credited at p, the cheaper task, c would count outside at its least time: 8 Mpps.)"""
    spec = spec_from(
        _pair(producer="{cycles: 100, demand: {port: 1.0}}", consumer="{cycles: 150, demand: {port: 1.0}}").replace(
            "workload: [{app: a}]", "workload: [{app: a, instances: 2}]"
        ),
        CORES,
    )
    assert configuration(spec) == pytest.approx(2e3 / 310, rel=REL)
    assert brute_force(spec) == pytest.approx(2e3 / 310, rel=1e-12)


def test_configuration_pricing_upper_bound():
    """Partial pricing's cheap bound (`ConfigurationValues.upper`): each anchor credited ``clock /
    max(E_anchor, least time of its other roles)``, E_anchor from its slowdown in the
    configuration.  Threads of 100 cycles at port demand 0.6 (one role each): one thread on a core
    10 Mpps; two (port load 1.2), in one pipe or in two, 2 x 1000/120 = 16.667 -- the exact values
    here."""
    from tasksolve.solver.binding.configurations import ConfigurationValues, Layout, ThreadTypes

    spec = spec_from(
        "applications: {a: {tasks: {t: {cycles: 100, demand: {port: 0.6}}}}}\nworkload: [{app: a, instances: 3}]\n",
        CORES,
    )
    problem = BindingProblem(spec)
    types = ThreadTypes.of(problem)
    values = ConfigurationValues(problem, types, Layout.of(problem, types))
    configs = np.array([[[1], [0]], [[2], [0]], [[1], [1]]])  # (configurations, pipes, types)
    hand = [10.0, 2e3 / 120, 2e3 / 120]
    assert list(values.upper(configs) / 1e6) == pytest.approx(hand, rel=1e-12)
    assert list(values.value(configs) / 1e6) == pytest.approx(hand, rel=1e-12)


# ============================================================================== the level LP
@pytest.mark.parametrize("consumer_first", [False, True])
def test_level_rate_rows_of_every_type_and_the_in_cell_cost(consumer_first):
    """``w_a <= R_k`` for *every* type k of the application (the slow one listed last or first),
    and the in-cell message cost: p (100 cycles) feeds c (200) in one core (5 cycles): R_p = 10,
    R_c = 1000/205 = 4.878 Mpps, the optimum.  With only p's row the LP would claim 10."""
    body = _pair(producer="{cycles: 100, demand: {l3: 0.1}}", consumer="{cycles: 200}")
    if consumer_first:
        body = body.replace(
            "{p: {cycles: 100, demand: {l3: 0.1}}, c: {cycles: 200}}",
            "{c: {cycles: 200}, p: {cycles: 100, demand: {l3: 0.1}}}",
        )
        assert "{c: {cycles: 200}" in body
    spec = spec_from(body, SOCKET)
    assert level(spec) == pytest.approx(1e3 / 205, rel=2 * REL)
    assert brute_force(spec) == pytest.approx(1e3 / 205, rel=1e-12)


def test_level_cell_cap_and_the_cost_outside_the_cell():
    """``max_threads: {core: 1}`` (cell configurations of one thread) and the cost outside the
    cell, the cheaper of the socket's (20) and across (100): b pays 20, 1000/220 = 4.545 Mpps."""
    spec = spec_from(
        _pair(
            "constraints: {max_threads: {core: 1}}",
            producer="{cycles: 100, demand: {l3: 0.1}}",
            consumer="{cycles: 200}",
        ),
        SOCKET,
    )
    assert level(spec) == pytest.approx(1e3 / 220, rel=2 * REL)
    assert brute_force(spec) == pytest.approx(1e3 / 220, rel=1e-12)


def test_level_cell_and_domain_rows():
    """The cell rows ``sum_c y = cells z`` and the domain row ``sum_j z = m``: three threads (100
    cycles, port demand 1.0) on the socket's two cores: one core holds two (2 x 5 Mpps), the other
    one (10): 20 Mpps, the optimum.  Without either row the LP would find a third core: 30."""
    spec = spec_from(
        "applications: {a: {tasks: {t: {cycles: 100, demand: {port: 1.0, l3: 0.1}}}}}\nworkload: [{app: a, instances: 3}]\n",
        SOCKET,
    )
    assert level(spec) == pytest.approx(20.0, rel=2 * REL)
    assert brute_force(spec) == pytest.approx(20.0, rel=1e-12)


def test_level_instance_count_rows():
    """The count rows ``sum y n = N_k``: the one core allowed must hold both a's t (100 cycles)
    and b's u (1000), both at port demand 1.0: t at 1/2 (5 Mpps) and u (0.5 Mpps): 5.5 Mpps, the
    optimum.  Leaving u out would let t run alone: 10."""
    spec = spec_from(
        """
applications:
  a: {tasks: {t: {cycles: 100, demand: {port: 1.0, l3: 0.1}}}}
  b: {tasks: {u: {cycles: 1000, demand: {port: 1.0}}}}
workload: [{app: a}, {app: b}]
constraints: {contexts: [socket0.core0]}
""",
        SOCKET,
    )
    assert level(spec) == pytest.approx(5.5, rel=2 * REL)
    assert brute_force(spec) == pytest.approx(5.5, rel=1e-12)


def test_level_machine_load_and_frequency():
    """Machine-wide loads and the work of a task (cycles x frequency) in the cell rates: two
    threads of 50 cycles visited twice per packet (100 cycles of work) load the memory 0.75 each:
    slowdown 1.5, 2 x 1000/150 = 13.333 Mpps, the optimum (10 Mpps each without the memory, 20
    each with the cycles alone)."""
    spec = spec_from(
        "applications: {a: {tasks: {t: {cycles: 50, frequency: 2, demand: {mem: 0.75, l3: 0.1}}}}}\n"
        "workload: [{app: a, instances: 2}]\n",
        SOCKET,
    )
    assert level(spec) == pytest.approx(2e3 / 150, rel=2 * REL)
    assert configuration(spec) == pytest.approx(2e3 / 150, rel=REL)
    assert brute_force(spec) == pytest.approx(2e3 / 150, rel=1e-12)


def _grid_ratio(top: float, modes: int) -> float:
    """The grid's ratio (docs/design.md): from `MIN_RATIO`, times 1.5 until the modes from the
    capacity (1) to the peak load `top` fit in `modes`."""
    ratio = level_lp.MIN_RATIO
    while math.log(top) / math.log1p(ratio) + 2 > modes:
        ratio *= 1.5
    return ratio


def test_level_mode_load_rows():
    """The modes of the L-level load and their rows ``a_j z <= load <= a_{j+1} z``: two threads
    (100 cycles) at L3 demand 0.75 load the socket 1.5: the optimum is 2 x 1000/150 = 13.333
    Mpps.  A mode is credited its lower end a_j, at most a factor 1 + r below its upper end
    (r = 0.0015: log(1.5)/log(1.001) + 2 > 400 modes, log(1.5)/log(1.0015) + 2 < 400), and the
    LP mixes modes: it carries load up to a_{j+1} z at slowdown a_j, so it reaches 13.333 (1 + r)
    exactly.  Without the lower row every domain takes mode [0, 1] (no slowdown): 20.  The
    integer modes (a coarser grid of at most 60, r' = 0.0076) put the domain in one mode: its
    lower end a_j <= 1.5 < a_{j+1} gives at most 13.333 (1 + r')."""
    spec = spec_from(
        "applications: {a: {tasks: {t: {cycles: 100, demand: {l3: 0.75}}}}}\nworkload: [{app: a, instances: 2}]\n",
        SOCKET,
    )
    optimum = 2e3 / 150
    assert brute_force(spec) == pytest.approx(optimum, rel=1e-12)
    r = _grid_ratio(1.5 * (1 + 1e-9) + 1e-9, level_lp.MAX_MODES)
    assert r == pytest.approx(0.0015)
    assert level(spec) == pytest.approx(optimum * (1 + r), rel=2 * REL)
    coarse = _grid_ratio(1.5 * (1 + 1e-9) + 1e-9, 60)
    mip, _, _ = level_lp.integer_modes(level_lp.build(BindingProblem(spec), max_modes=60))
    a_j = (1 + coarse) ** math.floor(math.log(1.5) / math.log1p(coarse))
    assert mip / 1e6 == pytest.approx(2e3 / (100 * a_j), rel=1e-4)  # the MIP stops at a 1e-4 gap
    assert optimum <= mip / 1e6 <= optimum * (1 + coarse)


def test_level_cap_rows_on_l():
    """The cap on L, ``sum y |c| <= cap z`` per mode: socket 0 (two cores) and one strand of
    socket 1 are usable, at most one thread per socket.  p (100 cycles) feeds c (150).  In the LP
    each socket takes half of {p, c} in one core -- socket 0: half a cell {p, c} (cap: 2 x 1/2 <=
    1); socket 1: half {p}, half {c} -- so R_c = (1000/155 + 1000/170) / 2 = 6.167 Mpps (the
    messages outside the cell at the socket's 20 cycles).  Without the cap rows the whole {p, c}
    sits in one core: 1000/155 = 6.452.  The optimum (p and c across sockets, 1000/250 = 4) is
    below both; the configuration LP, which caps each socket, is exact."""
    spec = spec_from(
        _pair(
            "constraints: {contexts: [socket0, socket1.core0.strand0], max_threads: {socket: 1}}",
            producer="{cycles: 100, demand: {l3: 0.1}}",
        ),
        SOCKET.replace("{name: socket, count: 1}", "{name: socket, count: 2}"),
    )
    assert level(spec) == pytest.approx((1e3 / 155 + 1e3 / 170) / 2, rel=2 * REL)
    assert brute_force(spec) == pytest.approx(4.0, rel=1e-12)
    assert configuration(spec) == pytest.approx(4.0, rel=REL)


@pytest.mark.parametrize("costs, optimum", [({"core": 50, "socket": 50, "machine": 0}, 20.0)])
def test_level_lp_where_message_costs_rise_inward(costs, optimum):
    """A same-core message dearer than one across the machine: a consumer whose producer *type*
    shares its cell may still take its own producer from across the machine.  The level LP charged
    it the in-cell cost (50 cycles) and bounded at 13.333 Mpps below the closed form's 20 Mpps
    (plan [0, 3, 2, 1]: each p alone on its core's port, each c beside the other instance's p,
    fed from the other socket at 0 cycles: 1e9 / 100 per instance).  Now it charges the cheaper
    of the two: 20 Mpps, the optimum."""
    topo = f"""
  name: two-sockets
  clock: 1GHz
  levels: [{{name: socket, count: 2}}, {{name: core, count: 1}}, {{name: strand, count: 2}}]
  resources:
    - {{name: l3, level: socket, capacity: 1.0}}
    - {{name: port, level: core, capacity: 1.0}}
    - {{name: fpu, level: core, capacity: 1.0}}
  communication: {{core: {costs["core"]}, socket: {costs["socket"]}, machine: {costs["machine"]}}}
"""
    spec = spec_from(
        """
applications:
  a:
    tasks: {p: {cycles: 100, demand: {port: 1.0, l3: 0.1}}, c: {cycles: 100, demand: {fpu: 1.0}}}
    edges: [{from: p, to: c}]
workload: [{app: a, instances: 2}]
""",
        topo,
    )
    reps, _ = distinct_placements(spec)
    best = float(BatchModel(spec).evaluate(reps).total.max())
    assert best == pytest.approx(optimum * 1e6)
    assert level_lp.level_bound(BindingProblem(spec)).value >= best * (1 - 1e-9)
