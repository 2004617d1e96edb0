"""A task's `replicas` in a binding spec (RX -> N workers -> TX), against queueing theory.

* Round robin to N equal workers on N cores: the saturated throughput is ``N * clock / work`` (the
  workers are the bottleneck), on the closed form, CP-SAT's plan and the simulation.
* Random splitting (``dispatch: hash``) of a Poisson stream of rate lambda: each worker sees a
  Poisson stream of rate lambda / N (thinning), so its mean wait is M/D/1's
  ``rho * S / (2 (1 - rho))`` (Pollaczek-Khinchine, deterministic service S); round robin gives
  each worker Erlang-N gaps, whose mean wait comes from Lindley's recursion, computed here
  independently of the simulation.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tasksolve.simulate.analytic import BatchModel, evaluate
from tasksolve.simulate.des import simulate
from tasksolve.solver.binding.cpsat import solve_binding
from tasksolve.solver.binding.problem import BindingProblem
from tasksolve.specs import Plan, load_spec_text
from tasksolve.specs.errors import SpecError

CLOCK = 1.4e9  # the T2's


def _bench():
    """bench/replicas_truth.py, whose spec and Lindley recursion the tests share."""
    path = Path(__file__).resolve().parents[2] / "bench" / "replicas_truth.py"
    spec = importlib.util.spec_from_file_location("_replicas_truth", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def spec_text(dispatch: str = "round_robin", rx: int = 200, tx: int = 200, extra: str = "") -> str:
    """R -> W (2000 cycles, 4 replicas) -> T on the T2, with `extra` top-level lines."""
    return BENCH.spec_text(4, dispatch, rx, tx) + extra


def test_replicas_are_threads_with_names_and_constraints():
    spec = load_spec_text(
        spec_text(extra="constraints:\n  forbid: {fwd#0.W: [core7]}\n  pin: {fwd#0.W.r2: core3.pipe0.strand0}\n")
    )
    assert spec.thread_names == ["fwd#0.R", "fwd#0.W.r0", "fwd#0.W.r1", "fwd#0.W.r2", "fwd#0.W.r3", "fwd#0.T"]
    assert sorted(spec.constraints.forbid) == [f"fwd#0.W.r{k}" for k in range(4)]  # the task's forbid, per replica
    with pytest.raises(SpecError, match=r"4 replicas: name one, `fwd#0.W.r0`"):
        load_spec_text(spec_text(extra="constraints:\n  pin: {fwd#0.W: core3.pipe0.strand0}\n"))
    with pytest.raises(SpecError, match=r"has 4 replicas"):
        load_spec_text(spec_text(extra="constraints:\n  pin: {fwd#0.W.r4: core3.pipe0.strand0}\n"))
    # a pipeline spec keeps the task's replicas as its stage's fixed count (tests/pipeline/test_fixed_replicas.py)
    pipeline = load_spec_text(spec_text(extra="problem: pipeline\n"))
    assert pipeline.thread_names == ["fwd#0.R", "fwd#0.W", "fwd#0.T"]  # the stage's replicas are the plan's
    with pytest.raises(SpecError, match=r"dispatch.*take packets in turn.*`dispatch: hash` is for binding specs"):
        load_spec_text(spec_text("hash", extra="problem: pipeline\n"))


def test_round_robin_workers_reach_the_queueing_throughput_on_every_oracle():
    """The acceptance case: four 2000-cycle replicas on four cores give 4 x 1.4 GHz / 2000 less the
    messages' cost, within 5%, on CP-SAT's plan, the closed form and the simulation."""
    spec = load_spec_text(spec_text())
    found = solve_binding(BindingProblem(spec), time_limit=20, seed=0).best
    assert found.status == "OPTIMAL"
    ideal = 4 * CLOCK / 2000
    plan = Plan.from_contexts(spec, found.contexts)
    closed = evaluate(spec, plan)
    simulated = simulate(spec, plan, seed=1)
    assert float(BatchModel(spec).evaluate(np.array(found.contexts)).total[0]) == pytest.approx(closed.throughput)
    assert found.objective == pytest.approx(closed.throughput, rel=1e-6)
    for value in (closed.throughput, simulated.throughput):
        assert 0.95 * ideal <= value <= ideal
    # each worker takes a quarter of the packets: it is busy all the time, the others are not
    busy = {row["thread"]: row["utilization"] for row in simulated.threads}
    assert all(busy[f"fwd#0.W.r{k}"] == pytest.approx(1.0, abs=0.02) for k in range(4))
    assert busy["fwd#0.R"] < 0.6


@pytest.mark.parametrize("dispatch", ["hash", "round_robin"])
def test_worker_waits_follow_the_splitting_rule(dispatch):
    """Poisson arrivals at 2 Mpps into R (1 cycle, nearly no delay) -> four workers: each worker's
    mean wait is M/D/1's at 0.5 Mpps for random splitting, Erlang-4/D/1's for round robin."""
    spec = load_spec_text(spec_text(dispatch, rx=1, tx=1))
    plan = Plan.from_contexts(spec, [0, 8, 16, 24, 32, 40])  # one core each: no sharing
    measured = simulate(spec, plan, seed=3, arrival="poisson", rate=2.0e6, queue_capacity=None, packets=120_000)
    workers = [row for row in measured.threads if row["thread"].startswith("fwd#0.W")]
    service = workers[0]["work"] / CLOCK  # cycles plus the message from R, deterministic
    lam = 2.0e6 / 4
    if dispatch == "hash":
        rho = lam * service
        expected = rho * service / (2 * (1 - rho))
    else:
        gaps = np.random.default_rng(7).exponential(1 / 2.0e6, (400_000, 4)).sum(axis=1)
        expected = BENCH.lindley(gaps, service)
    waits = np.array([row["queue_wait"] for row in workers])
    # 120,000 packets, 30,000 per worker at rho = 0.75: the batch-means error of a mean wait is a
    # few percent; 8% on the mean of four workers
    assert waits.mean() == pytest.approx(expected, rel=0.08)
    assert measured.throughput == pytest.approx(2.0e6, rel=0.03)


def test_random_splitting_waits_longer_than_round_robin():
    """The same load: random splitting leaves a worker's queue more variable arrivals (Poisson
    against Erlang-4 gaps), so its workers wait about three times as long."""
    waits = {}
    for dispatch in ("hash", "round_robin"):
        spec = load_spec_text(spec_text(dispatch, rx=1, tx=1))
        plan = Plan.from_contexts(spec, [0, 8, 16, 24, 32, 40])
        m = simulate(spec, plan, seed=5, arrival="poisson", rate=2.0e6, queue_capacity=None, packets=40_000)
        waits[dispatch] = np.mean([row["queue_wait"] for row in m.threads if row["thread"].startswith("fwd#0.W")])
    assert waits["hash"] > 2 * waits["round_robin"]


def test_hash_dispatch_is_reproducible_and_saturation_costs_throughput():
    """The same seed gives the same run; under saturation a random choice can block the
    dispatcher on a full queue while another worker idles: below the closed form, never above."""
    spec = load_spec_text(spec_text("hash"))
    plan = Plan.from_contexts(spec, [0, 8, 16, 24, 32, 40])
    first = simulate(spec, plan, seed=2)
    again = simulate(spec, plan, seed=2)
    assert first.throughput == again.throughput
    closed = evaluate(spec, plan).throughput
    assert first.throughput + first.half_width < closed
