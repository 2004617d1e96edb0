"""NPIRE's critical sections, optimistic sections and early signals in the simulation and the
closed form, against schedules worked by hand and queueing theory (docs/design.md, "Semantics
every oracle shares"; NPIRE §2.4, §2.6, §2.7, §5)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve.simulate import AnalyticOracle, BatchModel, SimulationOracle, ideal_runs, simulate
from tasksolve.simulate.experiments import bounding_limit
from tasksolve.simulate.locks import lock_period
from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.solver.cli import main
from tasksolve.specs import Plan, PlanThread, dump_spec
from tests.simulate import spec_from

FLOAT = 1e-9

# no communication cost and no resource, so that hand schedules hold exactly
BARE = """
  name: bare
  clock: 1GHz
  levels:
    - {name: core, count: 4}
    - {name: strand, count: 2}
  communication: {core: 0, machine: 0}
"""

ENTRY_AND_LOCKED = """
applications:
  a:
    tasks:
      x: {cycles: %(x)s}
      y: {cycles: %(y)s, critical: {lock: table, cycles: %(crit)s}}
    edges: [{from: x, to: y}]
workload: [{app: a}]
problem: pipeline
"""


def replicated(spec, replicas: int) -> Plan:
    """x alone, y run by `replicas` threads taking packets in turn."""
    threads = {"x": PlanThread(app="a", instance=0, tasks=["x"], stage=0, replica=0)}
    bindings = {"x": "core0.strand0"}
    for r in range(replicas):
        threads[f"y{r}"] = PlanThread(app="a", instance=0, tasks=["y"], stage=1, replica=r)
        bindings[f"y{r}"] = spec.topology.context_names[1 + r]
    return Plan(bindings=bindings, threads=threads)


def within(value, truth, half_width):
    return abs(value - truth) <= half_width + FLOAT * abs(truth)


def test_a_lock_bound_replicated_task_runs_at_one_packet_per_critical_section():
    # 3 replicas of y (100 cycles, its last 80 under the lock): alone they would take a packet
    # every 100/3 cycles, but the lock passes one critical section at a time: 80 cycles a packet
    spec = spec_from(ENTRY_AND_LOCKED % {"x": 20, "y": 100, "crit": 80}, topology=BARE)
    plan = replicated(spec, 3)
    m = simulate(spec, plan)
    assert m.converged and within(m.throughput, 1e9 / 80, m.half_width)
    a = AnalyticOracle(spec).evaluate(plan)
    assert a.throughput == pytest.approx(1e9 / 80, rel=1e-12)
    assert a.bottleneck.startswith("y")
    # the replicas wait their turn: each works 100 of every 240 cycles
    assert all(t["utilization"] == pytest.approx(100 / 240, rel=1e-3) for t in m.threads if t["thread"] != "x")


def test_a_short_critical_section_does_not_bind():
    spec = spec_from(ENTRY_AND_LOCKED % {"x": 20, "y": 100, "crit": 30}, topology=BARE)
    m = simulate(spec, replicated(spec, 3))
    assert within(m.throughput, 3e9 / 100, m.half_width)


@settings(max_examples=12, deadline=None)
@given(
    x=st.sampled_from([10, 25, 40]),
    y=st.sampled_from([60, 100, 150]),
    share=st.sampled_from([0.1, 0.3, 0.5, 0.8, 1.0]),
    replicas=st.integers(1, 4),
)
def test_the_closed_form_lock_bound_is_the_saturated_deterministic_throughput(x, y, share, replicas):
    # period = max(x, y / R, critical): the entry, the replicas in turn, the lock
    crit = share * y
    spec = spec_from(ENTRY_AND_LOCKED % {"x": x, "y": y, "crit": crit}, topology=BARE)
    plan = replicated(spec, replicas)
    truth = 1e9 / max(x, y / replicas, crit)
    m = SimulationOracle(spec).evaluate(plan)
    a = AnalyticOracle(spec).evaluate(plan)
    assert a.throughput == pytest.approx(truth, rel=1e-12)
    assert within(m.throughput, truth, m.half_width)


def test_lock_period_is_the_locks_busy_time_per_packet():
    # two holders at full speed, one of them replicated twice at half speed
    assert lock_period([30, 40], [1.0, 0.5], [1, 2]) == pytest.approx(30 + 40)
    assert lock_period([], [], []) == 0.0


def test_a_lock_whose_holders_do_all_their_work_inside_is_an_md1_queue():
    # one task, wholly critical (100 cycles), 4 replicas taking packets from one queue: the lock
    # is a single FIFO server with deterministic service; Poisson arrivals at rho = 0.7 give the
    # Pollaczek-Khinchine mean sojourn D + rho * D / (2 (1 - rho))
    spec = spec_from(
        """
applications:
  a:
    tasks:
      y: {cycles: 100, critical: {lock: table}}
workload: [{app: a}]
problem: pipeline
""",
        topology=BARE,
    )
    threads = {f"y{r}": PlanThread(app="a", instance=0, tasks=["y"], stage=0, replica=r) for r in range(4)}
    plan = Plan(bindings={f"y{r}": spec.topology.context_names[r] for r in range(4)}, threads=threads)
    rho, service = 0.7, 100.0
    m = simulate(
        spec,
        plan,
        arrival="poisson",
        rate=rho * 1e9 / service,
        shared_queue=True,
        stop_on=("throughput", "latency"),
        precision=0.01,
        packets=400_000,
        seed=3,
        time_cap=None,  # a statistics test: it stops on packets and precision, never on the clock
    )
    sojourn = (service + rho * service / (2 * (1 - rho))) / 1e9
    assert m.converged
    assert abs(m.latency_mean - sojourn) <= 2 * m.latency_half_width


CHAIN = """
applications:
  a:
    tasks:
      x: {cycles: 100%(signal)s}
      y: {cycles: 100}
    edges: [{from: x, to: y, bytes: 64B}]
workload: [{app: a}]
"""


@pytest.mark.parametrize("signal", [0.0, 0.4, 0.75])
def test_an_early_signal_shortens_the_latency_by_the_work_left(signal):
    # unloaded (one packet every 1000 cycles): x then y, 100 cycles each, y pays 40 for the
    # message (machine level); with the signal y starts (1 - signal) * 100 cycles earlier
    late = spec_from(CHAIN % {"signal": ""})
    early = spec_from(CHAIN % {"signal": f", signal: {signal}"})
    plan = Plan(bindings={"a#0.x": "socket0.core0.strand0", "a#0.y": "socket1.core0.strand0"})
    options = {"arrival": "deterministic", "rate": 1e6}
    base, m = simulate(late, plan, **options), simulate(early, plan, **options)
    assert base.latency_mean == pytest.approx(240e-9, rel=1e-9)
    assert m.latency_mean == pytest.approx(240e-9 - (1 - signal) * 100e-9, rel=1e-9)
    assert m.throughput == pytest.approx(base.throughput, rel=1e-9)
    closed = AnalyticOracle(early).evaluate(plan)
    assert closed.latency_mean == pytest.approx(m.latency_mean, rel=1e-9)


def test_an_optimistic_section_takes_no_lock_and_pays_its_failures():
    # y: 100 cycles, its last 50 optimistic, failing 20% of the time; each failure costs the
    # section again and 40 cycles of rollback: 0.2 / 0.8 * (50 + 40) = 22.5 cycles a packet on
    # average; the 3 replicas do not serialise (one shared queue, so that the random work of one
    # replica does not hold the others back)
    spec = spec_from(
        """
applications:
  a:
    tasks:
      x: {cycles: 20}
      y: {cycles: 100, critical: {lock: table, cycles: 50%, speculate: 20%}}
    edges: [{from: x, to: y}]
workload: [{app: a}]
problem: pipeline
""",
        topology=BARE,
    )
    plan = replicated(spec, 3)
    truth = 3e9 / 122.5
    m = simulate(spec, plan, precision=0.005, shared_queue=True)
    assert within(m.throughput, truth, m.half_width)
    assert AnalyticOracle(spec).evaluate(plan).throughput == pytest.approx(truth, rel=1e-12)
    # without synchronisation (NPIRE's S) the sections never fail
    free = ideal_runs(spec, plan, what=("locks",), shared_queue=True)["locks"]
    assert free.throughput == pytest.approx(3e9 / 100, rel=1e-6)


def test_a_random_run_never_stops_on_a_zero_half_width():
    """x's optimistic section fails half the time (geometric retries: 2 x 180.5 = 361 cycles a
    packet on average), y takes 50 plus 251 to receive: x bounds `a` at 1e8 / 361 pps, and b's
    lone task adds a steady 2 Mpps.  Early in the run x's luck fed y back to back, so every batch
    of the total held the same count: the run stopped on that zero spread and measured
    2.332 Mpps +- 3e-9 pps (the truth 2.277; a spec hypothesis found)."""
    spec = spec_from(
        """
applications:
  a:
    tasks:
      x: {cycles: 180.5, critical: {lock: table, speculate: 50%, rollback: 0}}
      y: {cycles: 50}
    edges: [{from: x, to: y}]
  b:
    tasks:
      z: {cycles: 50}
workload: [{app: a}, {app: b}]
""",
        topology="""
  name: three
  clock: 100MHz
  levels:
    - {name: socket, count: 1}
    - {name: core, count: 3}
  communication: {socket: 251, machine: 35}
""",
    )
    m = simulate(spec, Plan.from_contexts(spec, [0, 1, 2]), precision=1e-6, packets=3000, warmup=300)
    assert m.half_width > 0
    assert within(m.throughput, 1e8 / 361 + 2e6, 2 * m.half_width)


def test_a_random_run_whose_randomness_never_binds_stops_on_a_lasting_zero_spread():
    """x's failures (20%) never reach y's 300-cycle pace once the queue between them is full: the
    output is y's, exact, and the run ends at its second zero check, far below the packet cap."""
    spec = spec_from(
        """
applications:
  a:
    tasks:
      x: {cycles: 60, critical: {lock: table, speculate: 20%}}
      y: {cycles: 300}
    edges: [{from: x, to: y}]
workload: [{app: a}]
""",
        topology=BARE,
    )
    m = simulate(spec, Plan.from_contexts(spec, [0, 2]), precision=0.01)
    assert m.throughput == pytest.approx(1e9 / 300, rel=1e-9)
    assert m.packets < 1000 and not m.notes


def test_the_simulation_with_locks_is_deterministic_for_a_seed():
    spec = spec_from(ENTRY_AND_LOCKED % {"x": 20, "y": 100, "crit": 60}, topology=BARE)
    plan = replicated(spec, 2)
    first = simulate(spec, plan, service="exponential", seed=4).to_dict()
    again = simulate(spec, plan, service="exponential", seed=4).to_dict()
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)


def test_idealised_runs_name_the_lock_as_the_bound():
    spec = spec_from(ENTRY_AND_LOCKED % {"x": 20, "y": 100, "crit": 80}, topology=BARE)
    runs = ideal_runs(spec, replicated(spec, 3))
    assert runs["locks"].throughput == pytest.approx(3e9 / 100, rel=1e-6)
    limit, ratio = bounding_limit(runs)
    assert limit == "locks" and ratio == pytest.approx(80 / (100 / 3), rel=1e-6)


def test_without_locks_the_locks_run_is_the_actual_one():
    spec = spec_from(ENTRY_AND_LOCKED.replace(", critical: {lock: table, cycles: %(crit)s}", "") % {"x": 50, "y": 60})
    runs = ideal_runs(spec, Plan.from_contexts(spec, [0, 2]), what=("locks",))
    assert runs["locks"] is runs["actual"]
    assert bounding_limit(runs) == (None, 1.0)


def test_the_cli_reports_the_bounding_limit(capsys, tmp_path):
    spec = spec_from(ENTRY_AND_LOCKED % {"x": 20, "y": 100, "crit": 80}, topology=BARE)
    spec_path, plan_path = tmp_path / "spec.yaml", tmp_path / "plan.yaml"
    spec_path.write_text(dump_spec(spec))
    replicated(spec, 3).save(plan_path)
    code = main(["simulate", str(spec_path), "--plan", str(plan_path), "--ideal", "all", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    data = json.loads(out.out)
    assert set(data["ideal"]) == {"contention", "communication", "queues", "locks"}
    assert data["bounded_by"]["limit"] == "locks"
    assert data["bounded_by"]["ratio"] == pytest.approx(2.4, rel=1e-6)
    code = main(["simulate", str(spec_path), "--plan", str(plan_path), "--ideal", "locks"])
    out = capsys.readouterr()
    assert code == 0 and "bounded by  locks (x2.4 without it)" in out.out


def test_the_batch_model_agrees_with_the_closed_form_on_locks_and_signals():
    spec = spec_from(
        """
applications:
  a:
    tasks:
      x: {cycles: 100, demand: {port: 0.6}, signal: 30%}
      y: {cycles: 300, demand: {port: 0.5, bus: 0.4}, critical: {lock: heap, cycles: 50%}}
      z: {cycles: 200, demand: {bus: 0.7}, critical: {lock: heap, cycles: 120, speculate: 10%}}
      w: {cycles: 250, demand: {port: 0.3}, critical: {lock: heap, cycles: 200}}
    edges: [{from: x, to: y, bytes: 64B}, {from: x, to: z, bytes: 64B}, {from: y, to: w}, {from: z, to: w}]
workload: [{app: a, instances: 2}]
"""
    )
    rows = uniform_plans(spec, 20, np.random.default_rng(2))
    batch = BatchModel(spec).evaluate(rows)
    closed = AnalyticOracle(spec)
    for p, row in enumerate(rows):
        m = closed.evaluate(Plan.from_contexts(spec, row))
        assert batch.total[p] == pytest.approx(m.throughput, rel=1e-12)
        assert batch.latency_mean[p] == pytest.approx(m.latency_mean, rel=1e-12)
    # the lock (y's 150 + w's 200 cycles a packet, at rates <= 1) binds every plan here
    assert all(batch.per_instance[:, 0] <= 1e9 / 350 * (1 + 1e-12))


@settings(max_examples=8, deadline=None)
@given(
    crit=st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=3, max_size=3),
    seed=st.integers(0, 3),
)
def test_no_plan_beats_the_locks_busy_time(crit, seed):
    # whatever the placement and the contention (rates <= 1), one packet holds the lock for at
    # least the sum of its critical cycles: throughput <= clock / that sum
    tasks = {"a": 120, "b": 200, "c": 160}
    lines = []
    for (name, cycles), share in zip(tasks.items(), crit):
        lock = f", critical: {{lock: heap, cycles: {share * 100:g}%}}" if share else ""
        lines.append(f"      {name}: {{cycles: {cycles}, demand: {{port: 0.7}}{lock}}}")
    spec = spec_from(
        "applications:\n  app:\n    tasks:\n" + "\n".join(lines) + "\n    edges: [{from: a, to: b}, {from: b, to: c}]\n"
        "workload: [{app: app}]\n"
    )
    held = sum(c * s for c, s in zip(tasks.values(), crit))
    row = uniform_plans(spec, 1, np.random.default_rng(seed))[0]
    m = simulate(spec, Plan.from_contexts(spec, row), seed=seed)
    if held:
        assert m.throughput <= 1e9 / held + m.half_width + FLOAT * m.throughput
