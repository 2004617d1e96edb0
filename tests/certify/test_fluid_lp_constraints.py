"""Each row family of the fluid LP (`solver.certify.fluid_lp.build`, its data from
`fluid_bound.plan_problem`, its cuts from `fluid_cuts`, the relaxation of `fluid_max`) pinned by a
tiny spec on which that family binds: the bound's exact value is derived by hand in the test, so
dropping or loosening the family changes the value and the test fails (docs/design.md, "A bound on
the simulation", constraints 1-9).  Each test also checks the bound against the simulation of the
same plan (beyond its half-width), most of them exact there.

Units: the clock is 1 GHz unless said, so ``X`` packets per cycle is ``1000 X`` Mpps and a period
of ``p`` cycles is ``1000 / p`` Mpps.  "Rows" is the LP of constraints 1-8 (``cut_rounds=0``);
"with cuts" the default solve, which adds the joint-state cuts of constraint 9.
"""

from __future__ import annotations

import pytest

from tasksolve.simulate.des import DesSettings
from tasksolve.simulate.model import compile_plan
from tasksolve.simulate.oracle import SimulationOracle
from tasksolve.solver.certify.fluid_bound import plan_problem, solve_problem
from tasksolve.solver.certify.fluid_max import enumerated_max, relaxed_max
from tasksolve.specs import Plan, PlanThread
from tests.simulate import spec_from

REL = 1e-6  # the bound carries a relative margin of 1e-9 and HiGHS's tolerances: far below this
SIM = {"packets": 4000, "warmup": 400, "precision": 0.02, "time_cap": 20.0}

# one core of three strands, a port of capacity 1 per core, free messages
CORE = """
  name: core
  clock: 1GHz
  levels:
    - {name: core, count: 1}
    - {name: strand, count: 3}
  resources:
    - {name: port, level: core, capacity: 1.0}
  communication: {core: 0, machine: 0}
"""
# two cores of two strands; a message costs 10 cycles inside a core, 50 across
TWO_CORES = """
  name: two-cores
  clock: 1GHz
  levels:
    - {name: core, count: 2}
    - {name: strand, count: 2}
  resources:
    - {name: port, level: core, capacity: 1.0}
  communication: {core: 10, machine: 50}
"""


def _chain(*tasks: str, extra: str = "") -> str:
    """One application `a` whose tasks t0 -> t1 -> ... form a chain (message size 0)."""
    body = "applications:\n  a:\n    tasks:\n" + "".join(f"      t{k}: {t}\n" for k, t in enumerate(tasks))
    if len(tasks) > 1:
        body += "    edges: [" + ", ".join(f"{{from: t{k}, to: t{k + 1}}}" for k in range(len(tasks) - 1)) + "]\n"
    return body + "workload: [{app: a}]\n" + extra


class Case:
    """A spec and a plan (every thread on its own strand of the first contexts by default), its
    fluid LP under simulation `options`, the LP's values and the simulated figure."""

    def __init__(self, body: str, topology: str = CORE, plan: Plan | None = None, **options) -> None:
        self.spec = spec_from(body, topology)
        self.plan = plan or Plan.from_contexts(self.spec, list(range(len(self.spec.threads))))
        self.options = options
        self.settings = DesSettings.from_spec(self.spec, **options)
        self.problem = plan_problem(compile_plan(self.spec, self.plan), self.settings)

    def rows(self, objective: str | None = None) -> float:
        """Mpps: the LP of constraints 1-8."""
        return solve_problem(self.problem, objective or self.spec.objective, cut_rounds=0).value / 1e6

    def with_cuts(self, objective: str | None = None) -> float:
        """Mpps: the default bound (constraint 9's cuts added)."""
        return solve_problem(self.problem, objective or self.spec.objective).value / 1e6

    def relaxed(self) -> float:
        """Mpps: `fluid_max.relaxed_max`, the LP over every plan.  On the one-core machine every
        plan shares the one port, and the relaxation is the plan's LP without its chords and cuts."""
        return relaxed_max(self.spec, self.settings, self.spec.objective).value / 1e6

    def assert_sound(self, bound_mpps: float, objective: str | None = None) -> float:
        """The simulated figure (Mpps), after checking the bound is not below it beyond its half-width."""
        objective = objective or self.spec.objective
        m = SimulationOracle(self.spec, **SIM, **self.options).evaluate(self.plan)
        value = m.value(objective)
        half = m.half_width if objective == "total_throughput" else max(m.per_instance_half_width.values())
        assert bound_mpps * 1e6 >= value - half - 1e-9 * value, (bound_mpps, value / 1e6, half / 1e6)
        return value / 1e6


# ------------------------------------------------------------------------- 1. slot capacity
def test_slot_capacity_busy_demand():
    """Constraint 1, the busy term ``sum_u d_u y_u <= C``: three threads of one chain share the
    port, so every packet takes 0.5*300 + 0.5*300 + 0.6*200 = 420 port-cycles out of 1 per cycle:
    X <= 1/420, 2.381 Mpps.  No chord reaches it (each spans the loads from its own demand to 1.6),
    nor does any idle term (no idle demand).  The simulation reaches it: t0 and t1 (0.5 each, the
    same work) are never idle, so the port is never loaded below its capacity.  The relaxation
    over every plan (`fluid_max.relaxed_max`: one core, so one domain) gives the same."""
    case = Case(
        _chain(
            "{cycles: 300, demand: {port: 0.5}}",
            "{cycles: 300, demand: {port: 0.5}}",
            "{cycles: 200, demand: {port: 0.6}}",
        )
    )
    hand = 1e3 / 420
    assert case.relaxed() == pytest.approx(hand, rel=REL)
    assert case.rows() == pytest.approx(hand, rel=REL)
    assert case.with_cuts() == pytest.approx(hand, rel=REL)
    assert case.assert_sound(hand) == pytest.approx(hand, rel=1e-3)


def test_slot_capacity_idle_demand():
    """Constraint 1, the idle term ``k sum_u i_u s_u`` with ``k = min(1, C / L_max)``: t0 does no
    busy work on the port but loads 1.0 while it waits.  L_max = 1 + 1 + 1 = 3 (t0 counts at
    max(d, i) = 1), k = 1/3; t0 has rho_min 1 (no busy demand), so its idle fraction is at least
    1 - 200 X.  The row: 200 X + 100 X + (1/3)(1 - 200 X) <= 1, i.e. (700/3) X <= 2/3: X = 1/350,
    2.857 Mpps.  Without the idle term: 300 X <= 1, 3.333 Mpps; with k = 1 the row would allow
    nothing (and be below the simulation, 2.5 Mpps).  The relaxation over every plan gives the
    same (its k from the three heaviest max(d, i), its rho_min from the worst company)."""
    case = Case(
        _chain(
            "{cycles: 200, idle_demand: {port: 1.0}}",
            "{cycles: 200, demand: {port: 1.0}}",
            "{cycles: 100, demand: {port: 1.0}}",
        )
    )
    assert case.problem.slots[0].k == pytest.approx(1 / 3, rel=1e-12)
    assert list(case.problem.rho_min) == pytest.approx([1.0, 1 / 3, 1 / 3])
    hand = 1e3 / 350
    assert case.relaxed() == pytest.approx(hand, rel=REL)
    assert case.rows() == pytest.approx(hand, rel=REL)
    assert case.with_cuts() == pytest.approx(hand, rel=REL)
    assert case.assert_sound(hand) == pytest.approx(2.5, rel=1e-3)


# ------------------------------------------------------------------ 2. idle time, 7. work, 6. flow
def test_idle_fraction_and_work_rows():
    """Constraint 2, ``s_u >= 1 - y_u / rho_min_u``, with constraint 7's ``y <= x w``: t0 (100
    cycles, no busy demand, rho_min 1) loads 0.3 only while idle, so it is idle at least 1 - 100 X
    of the time; t1 (300 cycles, demand 1.0).  k = 1/1.3 and the slot row (the same as t1's chord
    here) reads 300 X + (0.3/1.3)(1 - 100 X) <= 1, i.e. 360 X <= 1: X = 1/360, 2.778 Mpps -- the
    simulation exactly (t1 at rate 1 during t0's 100 busy cycles, at 1/1.3 for the other 200 of
    its work: a period of 100 + 260 cycles).  Without the idle row (t0 never idle) or with t0
    doing more work than its packets need, t1 would run at rate 1: 3.333 Mpps.  The relaxation
    over every plan gives the same."""
    case = Case(_chain("{cycles: 100, idle_demand: {port: 0.3}}", "{cycles: 300, demand: {port: 1.0}}"))
    hand = 1e3 / 360
    assert case.relaxed() == pytest.approx(hand, rel=REL)
    assert case.rows() == pytest.approx(hand, rel=REL)
    assert case.with_cuts() == pytest.approx(hand, rel=REL)
    assert case.assert_sound(hand) == pytest.approx(hand, rel=1e-3)


def test_idle_row_of_a_slowed_thread():
    """Constraint 2 with ``rho_min < 1`` feeding the idle term of constraint 1: the chain of
    `test_slot_capacity_busy_demand` with t2 (200 cycles, demand 0.6) loading 0.3 while idle.
    t2's lowest rate is 1/1.6 (t0, t1 busy), so it is idle at least 1 - 200 X / 0.625 = 1 - 320 X
    of the time; k = 1/1.6.  The slot row: 420 X + 0.3/1.6 (1 - 320 X) <= 1, i.e. 360 X <= 0.8125:
    2.257 Mpps, the rows' bound (the chords give the same) and the relaxation's (no chords: the
    slot row alone).  The simulation: t2 busy 320 cycles a packet at 1/1.6, idle T cycles with
    t0 at 1/1.3, 320/1.6 + T/1.3 = 300, T = 130: a period of 450, 2.222 Mpps, which the cuts
    reach."""
    case = Case(
        _chain(
            "{cycles: 300, demand: {port: 0.5}}",
            "{cycles: 300, demand: {port: 0.5}}",
            "{cycles: 200, demand: {port: 0.6}, idle_demand: {port: 0.3}}",
        )
    )
    assert list(case.problem.rho_min) == pytest.approx([0.625, 0.625, 0.625])
    hand = 1e3 * 0.8125 / 360
    assert case.rows() == pytest.approx(hand, rel=REL)
    assert case.relaxed() == pytest.approx(hand, rel=REL)
    assert case.with_cuts() == pytest.approx(1e3 / 450, rel=REL)
    assert case.assert_sound(hand) == pytest.approx(1e3 / 450, rel=1e-3)


def test_unbounded_queues_let_the_producer_run_ahead():
    """Constraint 6 with unbounded queues: the flow rows are ``x_u >= X_i``, not equalities.  The
    spec of `test_idle_fraction_and_work_rows`: t0 can process packets ahead of t1 without end, is
    then never idle and t1 always runs at rate 1: 1000/300 = 3.333 Mpps, which the simulation
    reaches.  An equality here would give 2.778 Mpps, below the simulation."""
    case = Case(
        _chain("{cycles: 100, idle_demand: {port: 0.3}}", "{cycles: 300, demand: {port: 1.0}}"),
        queue_capacity=None,
    )
    assert not case.problem.bounded
    hand = 1e3 / 300
    assert case.rows() == pytest.approx(hand, rel=REL)
    assert case.assert_sound(hand) == pytest.approx(hand, rel=1e-3)


@pytest.mark.parametrize("queue_capacity", [16, None])
def test_group_flow_rows(queue_capacity):
    """Constraint 6: every group of the instance processes (at least) X_i packets.  Two threads
    of one chain, 100 cycles each at demand 1.0 on one port: 100 X + 100 X <= 1, X = 1/200, 5
    Mpps (the simulation: both always busy at rate 1/2).  Without the flow rows nothing ties X
    to the threads' work and only the box X <= 1/100 is left: 10 Mpps."""
    case = Case(
        _chain("{cycles: 100, demand: {port: 1.0}}", "{cycles: 100, demand: {port: 1.0}}"),
        queue_capacity=queue_capacity,
    )
    assert case.rows() == pytest.approx(5.0, rel=REL)
    assert case.with_cuts() == pytest.approx(5.0, rel=REL)
    assert case.assert_sound(5.0) == pytest.approx(5.0, rel=1e-3)


# ----------------------------------------------------------------------- 8. chords, 9. cuts
CHORD = _chain("{cycles: 100, demand: {port: 0.6}}", "{cycles: 200, demand: {port: 0.8}}")


def test_chord_rows_and_the_lower_frechet_bound():
    """Constraint 8 (with ``w_uv >= b_u + b_v - 1``), rows only.  t1's port load is 0.8 + 0.6 *
    [t0 busy], in [0.8, 1.4]: the chord runs through (1, 1) and (1.4, 1/1.4), slope -5/7, value
    8/7 at 0.8, so ``y1 <= 8/7 b1 - 5/7 * 0.6 w``; t0's load is in [0.6, 1.4], the same line,
    value 9/7 at 0.6: ``y0 <= 9/7 b0 - 5/7 * 0.8 w``.  At the optimum t1 is always busy (b1 = 1,
    so w = b0 by Frechet): t0 needs b0 >= 7/5 * 100 X = 140 X, and 200 X <= 8/7 - 3/7 * 140 X,
    i.e. 260 X <= 8/7: X = 2/455, 4.3956 Mpps.  Without the chords (or without w >= b_u + b_v - 1,
    which lets w = 0) only the slot row 60 X + 160 X <= 1 is left: 4.545 Mpps."""
    case = Case(CHORD)
    hand = 2e3 / 455
    assert case.rows() == pytest.approx(hand, rel=REL)
    case.assert_sound(hand)


def test_joint_state_cuts_make_the_chord_exact():
    """Constraint 9 (`fluid_cuts`), same spec: the load takes two values only.  t0's rate is 1
    with t1 idle (0.6) and 5/7 with t1 busy (1.4): the cut ``y0 <= b0 - 2/7 w``; t1's likewise
    ``y1 <= b1 - 2/7 w``.  At b1 = 1, w = b0: b0 >= 140 X and 200 X <= 1 - 2/7 * 140 X = 1 - 40 X:
    X = 1/240, 4.1667 Mpps -- the simulation exactly (t0's 100 cycles at 5/7 take 140, during
    which t1 does 100 of its 200; the rest at rate 1: a period of 240)."""
    case = Case(CHORD)
    hand = 1e3 / 240
    assert case.with_cuts() == pytest.approx(hand, rel=REL)
    assert case.assert_sound(hand) == pytest.approx(hand, rel=1e-3)


@pytest.mark.parametrize("consumer_first", [False, True])
def test_upper_frechet_bounds(consumer_first):
    """Constraint 8 with ``w_uv <= b_u`` and ``w_uv <= b_v`` (t0 listed first or second, so the
    pair's helper is its u or its v): t0 (100 cycles) loads the port only while idle (0.5), so it
    *helps* t1 (300 cycles, demand 0.75) by being busy.  t1's load is 0.75 + 0.5 [t0 idle], in
    [0.75, 1.25]; the chord through (1, 1) and (1.25, 0.8), slope -0.8, is 0.8 at 1.25:
    ``y1 <= 0.8 b1 + 0.8 * 0.5 w``, and w <= b0 <= y0 = 100 X (t0's idle row, rho_min 1): 300 X
    <= 0.8 + 40 X, X = 1/325, 3.077 Mpps.  Without ``w <= b0`` the slot row decides: 225 X +
    0.8 * 0.5 (1 - 100 X) <= 1, 3.243 Mpps.  The cuts use the two loads that occur (rate 1 and
    0.8): ``y1 <= 0.8 b1 + 0.2 w``, 280 X <= 0.8, X = 1/350, 2.857 Mpps: the simulation."""
    producer, consumer = "{cycles: 100, idle_demand: {port: 0.5}}", "{cycles: 300, demand: {port: 0.75}}"
    if consumer_first:
        body = f"applications:\n  a:\n    tasks: {{c: {consumer}, p: {producer}}}\n    edges: [{{from: p, to: c}}]\n"
        case = Case(body + "workload: [{app: a}]\n")
    else:
        case = Case(_chain(producer, consumer))
    assert case.rows() == pytest.approx(1e3 / 325, rel=REL)
    assert case.with_cuts() == pytest.approx(1e3 / 350, rel=REL)
    assert case.assert_sound(1e3 / 350) == pytest.approx(1e3 / 350, rel=1e-3)


def test_chord_above_the_capacity():
    """Constraint 8 where the load never falls to the capacity: t0 (300 cycles, demand 1.0) sees
    1.0 + 0.25 (t1 idle) .. 1.5 (t1 busy at 0.5), so its chord runs through (1.25, 0.8) and (1.5,
    2/3), not through (1, 1): slope -8/15, ``y0 <= 0.8 b0 - 8/15 * 0.25 w``.  t1 (100 cycles,
    load 0.5 .. 1.5, chord through (1, 1), value 4/3 at 0.5): ``y1 <= 4/3 b1 - 2/3 w``.  t0 always
    busy (w = b1): b1 >= 150 X and 300 X <= 0.8 - 2/15 * 150 X: X = 1/400, 2.5 Mpps -- the
    simulation exactly (t1's 100 cycles at 2/3 take 150, t0's other 200 at 0.8 take 250).  A
    chord through (1, 1) would allow 300 X <= 5/6 - 25 X: 2.564 Mpps."""
    case = Case(
        _chain("{cycles: 300, demand: {port: 1.0}}", "{cycles: 100, demand: {port: 0.5}, idle_demand: {port: 0.25}}")
    )
    assert case.rows() == pytest.approx(2.5, rel=REL)
    assert case.with_cuts() == pytest.approx(2.5, rel=REL)
    assert case.assert_sound(2.5) == pytest.approx(2.5, rel=1e-3)


# --------------------------------------------------------------------------------- 3. best rate
def test_best_rate_row():
    """Constraint 3, ``y_u <= rho_max_u (1 - s_u)``: a's thread (100 cycles) loads 0.5 busy or idle,
    b's (100 cycles) 1.0 busy, 0 idle.  rho_max_b = 1/1.5 (a loads 0.5 whatever it does: min(d, i)
    counted), rho_max_a = 1.  a's chord (load 0.5 .. 1.5, through (1, 1) and (1.5, 2/3)):
    ``y_a <= 4/3 b_a - 2/3 w``; with w >= b_a + b_b - 1: y_a <= 2/3 b_a - 2/3 b_b + 2/3.  The best
    rate row b_b >= 1.5 y_b then gives y_a + y_b <= 2/3 b_a + 2/3 <= 4/3: 13.333 Mpps, the
    simulation (both always busy at 2/3).  Without it b could claim to be idle while working at
    its full rate (no w), and the slot row 0.5 y_a + y_b <= 1 would allow y_a = 1, y_b = 0.5: 15."""
    case = Case(
        """
applications:
  a: {tasks: {t: {cycles: 100, demand: {port: 0.5}, idle_demand: {port: 0.5}}}}
  b: {tasks: {t: {cycles: 100, demand: {port: 1.0}}}}
workload: [{app: a}, {app: b}]
"""
    )
    assert list(case.problem.rho_max) == pytest.approx([1.0, 2 / 3])
    assert list(case.problem.rho_min) == pytest.approx([2 / 3, 2 / 3])
    hand = 1e3 * 4 / 3 / 100
    assert case.rows() == pytest.approx(hand, rel=REL)
    assert case.with_cuts() == pytest.approx(hand, rel=REL)
    assert case.assert_sound(hand) == pytest.approx(hand, rel=1e-3)


# -------------------------------------------------------------------------------------- 4. locks
def test_lock_row():
    """Constraint 4, ``sum_h x_h crit_h / rho_max_h <= 1``: t0 (100 cycles, demand 1.0) and t1 (100
    cycles, demand 0.5 busy and idle) run all their cycles under one lock.  rho_max_t0 = 1/1.5 (t1
    always loads 0.5), rho_max_t1 = 1: the lock is busy 100/(2/3) + 100 = 250 cycles per packet,
    4 Mpps -- the simulation exactly (t0 holds it 150 cycles, t1 100).  Without the row the port
    allows 6.667 Mpps (150 X + 1/3 (1 - 150 X) <= 1); with cycles not divided by rho_max, 5."""
    case = Case(
        _chain(
            "{cycles: 100, demand: {port: 1.0}, critical: {lock: heap}}",
            "{cycles: 100, demand: {port: 0.5}, idle_demand: {port: 0.5}, critical: {lock: heap}}",
        )
    )
    assert case.problem.locks == [[(0, 100.0), (1, 100.0)]]
    assert list(case.problem.rho_max) == pytest.approx([2 / 3, 1.0])
    assert case.rows() == pytest.approx(4.0, rel=REL)
    assert case.with_cuts() == pytest.approx(4.0, rel=REL)
    assert case.assert_sound(4.0) == pytest.approx(4.0, rel=1e-3)


def test_optimistic_sections_take_no_lock_and_cost_their_retries():
    """Constraints 4 and 7 with NPIRE's optimistic sections: t0's section fails 20% of the time and
    takes no lock; its mean work is 100 + 0.2/0.8 * (100 + 40) = 135 cycles.  Only t1 holds the
    lock (100 cycles per packet).  The bound is t0's 1000/135 = 7.407 Mpps; counting t0's section
    in the lock row would make it 5 Mpps, below the simulation (7.40 +- 0.15)."""
    case = Case(
        _chain(
            "{cycles: 100, critical: {lock: heap, speculate: 20%}}",
            "{cycles: 100, critical: {lock: heap}}",
        )
    )
    assert case.problem.locks == [[(1, 100.0)]]
    assert list(case.problem.w_lo) == pytest.approx([135.0, 100.0])
    hand = 1e3 / 135
    assert case.rows() == pytest.approx(hand, rel=REL)
    case.assert_sound(hand)


# ------------------------------------------------------------------ objective rows and arrivals
MIN_MAX = """
applications:
  a: {tasks: {t: {cycles: 100, demand: {port: 1.0}}}}
  b: {tasks: {t: {cycles: 300, demand: {port: 1.0}}}}
workload: [{app: a}, {app: b}]
"""


def test_min_throughput_rows():
    """The ``min_throughput`` objective's rows ``z <= X_i``: a (100 cycles) and b (300 cycles), both
    at demand 1.0 on one port: 100 X_a + 300 X_b <= 1.  The minimum: X_a = X_b = 1/400, 2.5 Mpps
    (without the rows only z's box, b's 1/300, is left: 3.333).  The total: X_a = 1/100, 10 Mpps.
    The simulation: both always busy at 1/2, 5 and 1.667 Mpps."""
    case = Case(MIN_MAX)
    assert case.rows("min_throughput") == pytest.approx(2.5, rel=REL)
    assert case.with_cuts("min_throughput") == pytest.approx(2.5, rel=REL)
    assert case.rows("total_throughput") == pytest.approx(10.0, rel=REL)
    assert case.assert_sound(2.5, "min_throughput") == pytest.approx(1e3 / 600, rel=1e-3)
    assert case.assert_sound(10.0, "total_throughput") == pytest.approx(1e3 / 150, rel=1e-3)


def test_arrival_cap():
    """Constraint 5, ``X_i <=`` the arrival rate per cycle: two instances of a 100-cycle thread
    without contention on a 2 GHz clock could each do 20 Mpps; packets arrive at 4 Mpps per
    instance (4e6 / 2e9 = 0.002 per cycle): 8 Mpps in all, 4 for the minimum -- the simulation."""
    topology = CORE.replace("clock: 1GHz", "clock: 2GHz")
    case = Case(
        "applications: {a: {tasks: {t: {cycles: 100}}}}\nworkload: [{app: a, instances: 2}]\n",
        topology,
        arrival="deterministic",
        rate=4e6,
    )
    assert case.problem.arrival == pytest.approx(0.002)
    assert case.rows() == pytest.approx(8.0, rel=REL)
    assert case.rows("min_throughput") == pytest.approx(4.0, rel=REL)
    assert case.assert_sound(8.0) == pytest.approx(8.0, rel=1e-3)


# --------------------------------------------------- 6. flow of replicas, 7. work of messages
def _pipeline_plan(spec, threads: dict[str, tuple[str, int, int, int]]) -> Plan:
    """name -> (task, stage, replica, context) for instance 0 of application `a`."""
    names = spec.topology.context_names
    return Plan(
        bindings={name: names[ctx] for name, (_, _, _, ctx) in threads.items()},
        threads={
            name: PlanThread(app="a", instance=0, tasks=[task], stage=stage, replica=replica)
            for name, (task, stage, replica, _) in threads.items()
        },
    )


def test_replicas_without_a_pace_share_the_group_flow():
    """Constraint 6, the sum row ``sum_u x_u = X_i``: one group of three saturated replicas (100
    cycles, demand 1.0), two on core 0 and one on core 1, and no one-thread group to hold them to
    one pace.  Core 0's pair does 1/100 packets per cycle between them, the third 1/100: 20 Mpps,
    the simulation.  Splitting X_i equally would give 3 * 1/200: 15 Mpps, below it."""
    body = (
        "applications: {a: {tasks: {x: {cycles: 100, demand: {port: 1.0}}}}}\nworkload: [{app: a}]\nproblem: pipeline\n"
    )
    spec = spec_from(body, TWO_CORES)
    plan = _pipeline_plan(spec, {"x0": ("x", 0, 0, 0), "x1": ("x", 0, 1, 1), "x2": ("x", 0, 2, 2)})
    case = Case(body, TWO_CORES, plan)
    assert case.problem.equal == [False]
    assert case.rows() == pytest.approx(20.0, rel=REL)
    assert case.assert_sound(20.0) == pytest.approx(20.0, rel=1e-3)


PACED = """
applications:
  a:
    tasks:
      x: {cycles: 100, demand: {port: 1.0}}
      y: {cycles: 200, demand: {port: 1.0}}
    edges: [{from: x, to: y}]
workload: [{app: a}]
problem: pipeline
"""


def _paced_plan(spec) -> Plan:
    """x on core 0; y's replica 0 beside it (messages 10 cycles), replica 1 on core 1 (50)."""
    return _pipeline_plan(spec, {"x": ("x", 0, 0, 0), "y0": ("y", 1, 0, 1), "y1": ("y", 1, 1, 2)})


def test_replicas_held_to_one_pace_split_equally():
    """Constraints 6 and 7: x (one thread) holds y's two replicas to one pace, so each does X/2
    (bounded queues, round robin).  Work: y0 200 + 10 (a message within the core), y1 200 + 50.
    Core 0 carries x and y0: 100 X + 210 X/2 <= 1, X = 1/205, 4.878 Mpps (the simulation reaches
    it up to its half-width).  With unbounded queues or a shared queue nothing fixes the split and
    only y0 + y1 >= X holds: y1 <= 1/250, 100 X + 210 (X - 1/250) <= 1, X = 1.84/310, 5.935 Mpps."""
    spec = spec_from(PACED, TWO_CORES)
    case = Case(PACED, TWO_CORES, _paced_plan(spec))
    assert case.problem.equal == [True, True]
    assert list(case.problem.w_lo) == pytest.approx([100.0, 210.0, 250.0])
    assert case.rows() == pytest.approx(1e3 / 205, rel=REL)
    case.assert_sound(1e3 / 205)
    for options in ({"queue_capacity": None}, {"shared_queue": True}):
        free = Case(PACED, TWO_CORES, _paced_plan(spec), **options)
        assert free.problem.equal == [True, False]
        assert free.rows() == pytest.approx(1e3 * 1.84 / 310, rel=REL)


def test_shared_queue_work_range():
    """Constraint 7 with a shared queue: which replica of x made a packet is decided at run time,
    so y's work is only known to lie in [200 + 10, 200 + 50] (x0 beside it on core 0, x1 on core
    1) and the bound takes the cheaper: 1000/210 = 4.762 Mpps.  Under round robin the mean is
    exact, 200 + 30: 1000/230 = 4.348 Mpps, the simulation in both cases."""
    body = """
applications:
  a:
    tasks: {x: {cycles: 50}, y: {cycles: 200}}
    edges: [{from: x, to: y}]
workload: [{app: a}]
problem: pipeline
"""
    spec = spec_from(body, TWO_CORES)
    plan = _pipeline_plan(spec, {"x0": ("x", 0, 0, 0), "x1": ("x", 0, 1, 2), "y": ("y", 1, 0, 1)})
    shared = Case(body, TWO_CORES, plan, shared_queue=True)
    assert list(shared.problem.w_lo) == pytest.approx([50.0, 50.0, 210.0])
    assert list(shared.problem.w_hi) == pytest.approx([50.0, 50.0, 250.0])
    assert shared.rows() == pytest.approx(1e3 / 210, rel=REL)
    shared.assert_sound(1e3 / 210)
    turn = Case(body, TWO_CORES, plan)
    assert turn.rows() == pytest.approx(1e3 / 230, rel=REL)
    assert turn.assert_sound(1e3 / 230) == pytest.approx(1e3 / 230, rel=1e-3)


# ---------------------------------------------------------------- the relaxation over all plans
def test_relaxed_slot_capacity_counts_the_domains_threads_can_occupy():
    """`fluid_max.relaxed_problem`: three 100-cycle threads at demand 1.0 on two cores of two
    strands.  The port's relaxed row has capacity 1 x min(2 usable cores, 3 threads) = 2: 100
    (X_1 + X_2 + X_3) <= 2, 20 Mpps -- the best plan (two threads sharing a core at 5 Mpps each,
    one alone at 10), which the enumeration and the simulation both give."""
    spec = spec_from(
        "applications: {a: {tasks: {t: {cycles: 100, demand: {port: 1.0}}}}}\nworkload: [{app: a, instances: 3}]\n",
        TWO_CORES,
    )
    settings = DesSettings.from_spec(spec)
    assert relaxed_max(spec, settings, "total_throughput").value / 1e6 == pytest.approx(20.0, rel=REL)
    best = enumerated_max(spec, settings, "total_throughput")
    assert best.value / 1e6 == pytest.approx(20.0, rel=REL)
    m = SimulationOracle(spec, **SIM).evaluate(Plan.from_contexts(spec, best.contexts))
    assert m.throughput / 1e6 == pytest.approx(20.0, rel=1e-3)


# ------------------------------------------------------------------- the certificate's boxes
def test_variable_boxes_and_the_dual_margin():
    """The finite boxes the weak-duality certificate needs (docs/design.md: ``x_u <= 1 / w_lo_u``,
    ``y_u <= rho_max_u``, ``s_u, w_uv <= 1``; ``X_i`` at most its group's packet rate and the
    arrival rate, ``z`` at most the least ``X_i`` box) and the 1e-9 relative margin on the
    certified value.  The rows imply every box, so no optimum shows them: this states them, on the
    spec of `test_best_rate_row` with b's thread at 200 cycles (rho_max 1 and 2/3) and arrivals at
    8 Mpps (0.008 per cycle, between the threads' 1/100 and 1/200)."""
    from tasksolve.solver.certify.fluid_lp import build, certified_max

    case = Case(
        """
applications:
  a: {tasks: {t: {cycles: 100, demand: {port: 0.5}, idle_demand: {port: 0.5}}}}
  b: {tasks: {t: {cycles: 200, demand: {port: 1.0}}}}
workload: [{app: a}, {app: b}]
""",
        arrival="deterministic",
        rate=8e6,
    )
    lp = build(case.problem, "min_throughput")
    ub = list(lp.ub)
    assert ub[0:2] == pytest.approx([0.008, 0.005])  # X_i: min(1 / w, the arrival rate)
    assert ub[2:4] == pytest.approx([0.01, 0.005])  # x_u: 1 / w_lo
    assert ub[4:6] == pytest.approx([1.0, 2 / 3])  # y_u: rho_max
    assert ub[6:-1] == [1.0] * (len(ub) - 7)  # s_u and w_uv
    assert ub[-1] == pytest.approx(0.005)  # z: the least X_i box
    _, bound, _ = certified_max(lp)
    value = solve_problem(case.problem, "min_throughput", cut_rounds=0).value
    assert value >= bound * 1e9 * (1 + 0.5e-9)  # the margin on the weak-duality bound


def test_the_group_flow_row_of_a_second_instance():
    """Constraint 6's sum row names its own instance's ``X_i``: as in
    `test_replicas_without_a_pace_share_the_group_flow`, but the unpaced replicas are instance 1,
    behind an application `b` (one 100-cycle thread, no demand, on the fourth strand: 10 Mpps).
    a's three replicas do 20 Mpps, as there: 30 Mpps in all, the simulation's."""
    body = """
applications:
  b: {tasks: {t: {cycles: 100}}}
  a: {tasks: {x: {cycles: 100, demand: {port: 1.0}}}}
workload: [{app: b}, {app: a}]
problem: pipeline
"""
    spec = spec_from(body, TWO_CORES)
    plan = _pipeline_plan(spec, {"x0": ("x", 0, 0, 0), "x1": ("x", 0, 1, 1), "x2": ("x", 0, 2, 2)})
    names = spec.topology.context_names
    plan.bindings["b0"] = names[3]
    plan.threads["b0"] = PlanThread(app="b", instance=0, tasks=["t"], stage=0, replica=0)
    case = Case(body, TWO_CORES, plan)
    assert case.problem.groups == [(1, (0, 1, 2)), (0, (3,))] and case.problem.equal == [False, True]
    assert case.rows() == pytest.approx(30.0, rel=REL)
    assert case.assert_sound(30.0) == pytest.approx(30.0, rel=1e-3)


def test_a_failed_highs_solve_is_an_error_not_a_bound(monkeypatch):
    """The LP is always feasible (v = 0) and bounded (every variable boxed), so HiGHS fails only on
    a numerical breakdown: that is `SolverFailed` with HiGHS's message, never a figure read from a
    failed solve."""
    import scipy.optimize

    from tasksolve.solver.errors import SolverFailed

    case = Case(CHORD)
    real = scipy.optimize.linprog

    def failing(*args, **kwargs):
        res = real(*args, **kwargs)
        res.status, res.message = 4, "numerical difficulties"
        return res

    monkeypatch.setattr(scipy.optimize, "linprog", failing)
    with pytest.raises(SolverFailed, match="HiGHS could not solve the LP \\(numerical difficulties\\)"):
        case.rows()
