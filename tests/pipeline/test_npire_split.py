"""NPIRE's task splitting (§2.5) as a graph transformation: work, edges and critical sections are
preserved, the pieces form a chain, the pipeline problem sees them, the feedback loop stops."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve.solver.pipeline.npire import piece_names, split_problem, split_search, split_spec, split_task
from tasksolve.solver.pipeline.problem import PipelineError
from tasksolve.specs import load_spec
from tasksolve.specs.application import Application
from tasksolve.specs.checks import check_application
from tasksolve.specs.strategies import application_data


@st.composite
def apps_to_split(draw):
    data = draw(application_data([], max_tasks=6))
    task = draw(st.sampled_from(sorted(data["tasks"])))
    share = draw(st.sampled_from([None, 0.1, 0.5, 0.9]))
    if share is not None:
        data["tasks"][task]["critical"] = {"lock": "heap", "cycles": f"{share * 100:g}%"}
    return Application.model_validate(data), task, draw(st.integers(1, 4))


@settings(max_examples=200, deadline=None)
@given(apps_to_split())
def test_splitting_preserves_work_edges_and_the_critical_section(case):
    app, task, k = case
    new = split_task(app, task, k)
    assert check_application("a", new, None) == []  # still one entry, no cycle
    assert new.total_cycles == pytest.approx(app.total_cycles, rel=1e-12)
    names = piece_names(app, task, k) if k > 1 else [task]
    assert set(new.tasks) == (set(app.tasks) - {task}) | set(names)
    # contracting the pieces gives back the original edges, plus the k - 1 links of the chain
    back = dict.fromkeys(names, task)
    contracted = [(back.get(e.source, e.source), back.get(e.target, e.target)) for e in new.edges]
    chain = [(a, b) for a, b in zip(names, names[1:])]
    assert sorted(contracted) == sorted([(e.source, e.target) for e in app.edges] + [(task, task)] * (k - 1))
    assert all((e.source, e.target) in {(a, b) for a, b in chain} for e in new.edges if e.source in names[:-1])
    # the critical section stays whole, in the last piece
    assert sum(t.critical_cycles for t in new.tasks.values()) == pytest.approx(
        sum(t.critical_cycles for t in app.tasks.values()), rel=1e-12
    )
    assert all(new.tasks[n].critical is None for n in names[:-1])


def test_equal_pieces_and_the_live_data_on_the_chain():
    app = load_spec("t2-npire-router").applications["router"]
    new = split_task(app, "route", 4)
    assert [new.tasks[f"route_s{i}"].cycles for i in range(1, 5)] == [130.0] * 4
    assert new.edge_bytes("route_s1", "route_s2") == 64  # what classify hands to route
    assert new.edge_bytes("classify", "route_s1") == 64 and new.edge_bytes("route_s4", "arp") == 16
    assert new.tasks["route_s2"].demand == app.tasks["route"].demand


def test_a_long_critical_section_keeps_the_last_piece_and_the_signal_moves_there():
    app = load_spec("t2-npire-locks").applications["router"]
    with pytest.raises(PipelineError, match="migrate"):
        split_task(app, "eth_tx", 3)  # wholly critical
    stats = split_task(app, "stats", 4)  # 160 cycles, last 80 critical: 3 x 80/3 then 80
    assert stats.tasks["stats_s4"].cycles == 80 and stats.tasks["stats_s4"].critical_cycles == 80
    assert stats.tasks["stats_s1"].cycles == pytest.approx(80 / 3)
    classify = split_task(app, "classify", 2)  # signal at 60% of 260 = 156: 26 into the last 130
    assert classify.tasks["classify_s2"].signal == pytest.approx(26 / 130)
    assert classify.tasks["classify_s1"].signal is None


def test_the_pipeline_problem_sees_the_pieces():
    spec = load_spec("t2-npire-router")
    problem = split_problem(spec, {"route": 2}, latency_max=None)
    assert "route_s1" in problem.tasks and "route" not in problem.tasks
    assert sum(problem.work) == sum(int(t.cycles) for t in spec.applications["router"].tasks.values())
    assert split_spec(spec, {"acl": 2}).applications["router"].tasks["acl_s1"].cycles == 170


def test_the_feedback_loop_keeps_improving_splits_and_stops():
    spec = load_spec("t2-npire-router")

    def largest_task_bound(s):  # the period of a fully pipelined plan: the largest task
        return -max(t.cycles for t in s.applications["router"].tasks.values())

    final, history = split_search(spec, largest_task_bound)
    # 520 -> 340 (route) -> 300 (acl) -> 260 (nat); then classify, route_s1 and route_s2 tie at
    # 260 and no single split lowers the largest: the loop stops
    assert [h["split"] for h in history] == [None, "route", "acl", "nat"]
    assert [h["value"] for h in history] == [-520, -340, -300, -260]
    assert final.applications["router"].total_cycles == pytest.approx(3060)
    _, history = split_search(spec, lambda s: len(s.applications["router"].tasks))
    assert len(history) == 1 + 5  # every split helps: five iterations (§2.5's cap)
    unchanged, history = split_search(spec, lambda s: 1.0)
    assert unchanged is spec and len(history) == 1
