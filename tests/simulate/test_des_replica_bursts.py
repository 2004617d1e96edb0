"""Replicas that start together deliver packets in bursts; the simulation must measure the rate
over bursts, not interpolate across the quiet between two of them."""

from __future__ import annotations

import pytest

from tasksolve.simulate.analytic import evaluate as closed_form
from tasksolve.simulate.des import simulate
from tasksolve.specs import Plan, PlanThread, load_spec


@pytest.mark.parametrize("replicas", [8, 64])
def test_fully_replicated_graph_matches_the_closed_form(replicas):
    spec = load_spec("t2-npire-router")
    app = spec.applications["router"]
    tasks = list(app.topological_order)
    threads = {
        f"router#0.s0r{r}": PlanThread(app="router", instance=0, tasks=tasks, stage=0, replica=r)
        for r in range(replicas)
    }
    bindings = {name: spec.topology.context_names[r] for r, name in enumerate(threads)}
    plan = Plan(bindings=bindings, threads=threads)
    exact = closed_form(spec, plan)
    measured = simulate(spec, plan)
    assert measured.packets > 0 and measured.latency_mean == measured.latency_mean  # not NaN
    # every thread is busy all the time (no queue between threads), so the simulation is exact
    # for the closed form; 1% is the simulation's precision target
    assert measured.throughput == pytest.approx(exact.throughput, rel=0.01)
