"""Every instance of a pipeline workload is placed: one block of contexts per instance, the same
plan on each (`solver.pipeline.blocks`), measured on all of them -- or the spec is refused."""

from __future__ import annotations

import json

import pytest
import yaml

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.cli import main
from tasksolve.solver.pipeline.blocks import NoBlocks, find_blocks, isomorphic
from tasksolve.solver.pipeline.evaluation import evaluate
from tasksolve.solver.pipeline.job import build_problem, solve_pipeline
from tasksolve.solver.pipeline.plans import pipeline_problems, to_plan
from tasksolve.solver.pipeline.sampling import decode
from tasksolve.specs import Plan, load_plan, load_spec_text

LEVELS = [{"name": "socket", "count": 3}, {"name": "core", "count": 2}, {"name": "strand", "count": 2}]
FAST = ("--time-limit", "2", "--workers", "1", "--oracle", "analytic")


def spec_data(instances=3, *, levels=None, resources=None, demand=0.0, apps=None, **constraints) -> dict:
    """`infer` (a -> b, c -> d; 700 cycles, critical path 500) x `instances` on `levels`; a latency
    bound of 650 cycles makes b and c run in parallel threads.  `resources`: topology resources,
    each task demanding `demand` of every one."""
    tasks = {"a": 100, "b": 300, "c": 200, "d": 100}
    names = [r["name"] for r in resources or ()]
    app = {
        "tasks": {
            t: {"cycles": c, **({"demand": dict.fromkeys(names, demand)} if names else {})} for t, c in tasks.items()
        },
        "edges": [{"from": a, "to": b, "bytes": "64B"} for a, b in (("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"))],
    }
    levels = levels or LEVELS
    communication = {level["name"]: 5 * (i + 1) for i, level in enumerate(reversed(levels[:-1]))} | {"machine": 40}
    data = {
        "tasksolve": 1,
        "name": "infer-x",
        "topology": {"name": "t", "clock": "1GHz", "levels": levels, "communication": communication},
        "problem": "pipeline",
        "applications": {"infer": app, **(apps or {})},
        "workload": [{"app": "infer", "instances": instances}] + [{"app": a, "instances": 1} for a in apps or ()],
        "constraints": {"latency_max": 650, **constraints},
    }
    if resources:
        data["topology"]["resources"] = resources
    return data


def load(data: dict):
    return load_spec_text(yaml.safe_dump(data, sort_keys=False))


def write(tmp_path, data: dict, name="spec.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def instance_plan(plan: Plan, instance: int) -> Plan:
    """The threads of one instance, renamed as instance 0's (a plan of the one-instance spec)."""
    mine = [n for n, t in plan.threads.items() if t.instance == instance]
    rename = {n: n.replace(f"#{instance}.", "#0.") for n in mine}
    threads = {rename[n]: plan.threads[n].model_copy(update={"instance": 0}) for n in mine}
    return Plan(
        spec=plan.spec, method=plan.method, bindings={rename[n]: plan.bindings[n] for n in mine}, threads=threads
    )


# ------------------------------------------------------------------------------ the blocks
def test_blocks_are_whole_outer_domains_when_the_count_divides():
    strides = [4, 2, 1]  # socket:3 > core:2 > strand:2
    found = find_blocks(range(12), strides, [0] * 12, 3)
    assert found.blocks == ((0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11)) and found.level == 0 and not found.unused
    two = find_blocks(range(12), strides, [0] * 12, 2)  # 2 blocks of 3 cores would straddle sockets unalike
    assert two.blocks == ((0, 1, 2, 3), (4, 5, 6, 7)) and two.unused == (8, 9, 10, 11)


def test_blocks_leave_out_what_no_isomorphic_split_uses():
    strides = [4, 2, 1]  # socket:2 > core:2 > strand:2
    found = find_blocks(range(8), strides, [0] * 8, 3)
    # 3 blocks of 3 strands would cross sockets unlike each other: blocks of one core, 2 strands left
    assert found.blocks == ((0, 1), (2, 3), (4, 5)) and found.level == 1 and found.unused == (6, 7)


def test_blocks_follow_kinds_of_core():
    strides = [2, 1]  # core:4 > strand:2; cores 0-1 fast (kind 0), 2-3 slow (kind 1)
    kinds = [0, 0, 0, 0, 1, 1, 1, 1]
    found = find_blocks(range(8), strides, kinds, 2)
    assert found.blocks == ((0, 1, 4, 5), (2, 3, 6, 7)) and found.level == 0  # a fast and a slow core each
    assert isomorphic(found.blocks, strides, kinds) and not isomorphic([(0, 1, 2, 3), (4, 5, 6, 7)], strides, kinds)


def test_caps_are_shared_by_the_blocks_meeting_in_a_domain():
    strides = [2, 1]  # core:2 > strand:2, max 1 thread per core
    found = find_blocks(range(4), strides, [0] * 4, 2, caps=[(0, 1)])
    assert found.blocks == ((0, 1), (2, 3)) and found.caps == ((0, 1),)
    with pytest.raises(NoBlocks, match="3 instances of `g` cannot each get a block"):
        find_blocks(range(4), strides, [0] * 4, 3, caps=[(0, 1)], app="g")  # two would share a core


def test_more_instances_than_contexts_is_refused_naming_both():
    with pytest.raises(NoBlocks, match="5 instances of `g` need a context each at least: the spec has 4 usable"):
        find_blocks(range(4), [2, 1], [0] * 4, 5, app="g")


# ------------------------------------------------------------------------------ the problem and its plans
def test_the_plan_holds_every_instance_on_disjoint_corresponding_contexts():
    spec = load(spec_data(3))
    problem = build_problem(spec)
    assert problem.instances == 3 and problem.contexts == (0, 1, 2, 3) and problem.n_contexts == 4
    job = solve_pipeline(spec, methods="lata,cpsat", time_limit=2, workers=1, oracle="analytic")
    plan = job.plan
    assert {(t.app, t.instance) for t in plan.threads.values()} == {("infer", 0), ("infer", 1), ("infer", 2)}
    assert pipeline_problems(spec, plan) == []
    assert len(set(plan.bindings.values())) == len(plan.bindings)  # disjoint
    names = spec.topology.context_names
    for name, thread in plan.threads.items():  # the same position in its socket as instance 0's twin
        twin = name.replace(f"#{thread.instance}.", "#0.")
        assert names.index(plan.bindings[name]) - 4 * thread.instance == names.index(plan.bindings[twin])
    ev = evaluate(problem, job.result.candidate)
    assert ev.instances == 3 and ev.throughput == pytest.approx(3 * problem.clock * problem.scale / float(ev.period))


def test_three_instances_on_blocks_sharing_nothing_make_three_times_one():
    """The truth check: socket blocks, a per-core resource only -- the 3-instance plan's analytic
    throughput is 3 x its instance's plan alone on a one-instance spec of socket 0."""
    ports = [{"name": "ports", "level": "core", "capacity": 1.0}]
    spec = load(spec_data(3, resources=ports, demand=0.6))
    job = solve_pipeline(spec, methods="lata,cpsat", time_limit=2, workers=1, oracle="analytic")
    alone = load(spec_data(1, resources=ports, demand=0.6, contexts=["socket0"]))
    whole = make_oracle(spec, "analytic").evaluate(job.plan).throughput
    one = make_oracle(alone, "analytic").evaluate(instance_plan(job.plan, 0)).throughput
    assert whole == pytest.approx(3 * one, rel=1e-12)
    assert job.measured[job.chosen].throughput == pytest.approx(whole, rel=1e-12)
    assert job.result.evaluation.throughput == pytest.approx(whole, rel=1e-3)  # the model: demands in thousandths


def test_a_machine_wide_resource_is_measured_on_every_instance():
    """Blocks share the machine's memory: the measured figure (every instance on the oracle) is
    below 3 x one instance's, which is what the one-instance model charges."""
    mem = [{"name": "mem", "level": "machine", "capacity": 1.0}]
    spec = load(spec_data(3, resources=mem, demand=0.3))
    job = solve_pipeline(spec, methods="lata,cpsat", time_limit=2, workers=1, oracle="analytic")
    measured = job.measured[job.chosen].throughput
    assert measured == pytest.approx(make_oracle(spec, "analytic").evaluate(job.plan).throughput, rel=1e-12)
    assert measured < job.result.evaluation.throughput * (1 - 1e-3)


# ------------------------------------------------------------------------------ through the CLI
def test_run_places_and_certifies_every_instance(tmp_path, capsys):
    path, out = write(tmp_path, spec_data(3)), tmp_path / "out"
    code = main(["run", str(path), "--out", str(out), "--samples", "30", *FAST, "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0, result
    spec = load(spec_data(3))
    plan = load_plan(out / "plan.yaml")
    assert {t.instance for t in plan.threads.values()} == {0, 1, 2} and pipeline_problems(spec, plan) == []
    assert len(set(plan.bindings.values())) == len(plan.bindings)
    pinning = (out / "pinning.txt").read_text()
    assert all(f"infer#{i}." in pinning for i in range(3))
    cert = json.loads((out / "certificate.json").read_text())
    whole = make_oracle(spec, "analytic").evaluate(plan).throughput
    assert cert["plan_performance"]["value"] == pytest.approx(whole, rel=1e-12)
    alone = load(spec_data(1, contexts=["socket0"]))
    assert whole == pytest.approx(3 * make_oracle(alone, "analytic").evaluate(instance_plan(plan, 0)).throughput)
    problem = build_problem(spec)
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()[1:]]
    assert len(samples) == 30
    for sample in samples[:5]:  # each sample is measured as a plan of every instance
        drawn = to_plan(problem, decode(sample["pipeline"]))
        assert {t.instance for t in drawn.threads.values()} == {0, 1, 2}
        assert sample["value"] == pytest.approx(make_oracle(spec, "analytic").evaluate(drawn).throughput, rel=1e-12)
    assert cert["solve"]["instances"] == 3 and len(cert["solve"]["blocks"]) == 3
    # the bounds and the sample range over repeated plans only: a positive verdict says so
    assert (
        cert["exit_code"] == 0
        and "among plans repeating one instance's plan on each of its 3 blocks" in cert["sentence"]
    )


def test_pipeline_command_says_where_each_instance_runs(tmp_path, capsys):
    path = write(
        tmp_path,
        spec_data(
            2, levels=[{"name": "socket", "count": 2}, {"name": "core", "count": 2}, {"name": "strand", "count": 2}]
        ),
    )
    code = main(["pipeline", str(path), "-m", "lata", *FAST, "--out", str(tmp_path / "o")])
    out = capsys.readouterr().out
    assert code == 0
    assert "2 instances of `infer`, each on its own block of 4 contexts, whole `socket` domains" in out
    assert "#0: socket0; #1: socket1" in out
    assert {t.instance for t in load_plan(tmp_path / "o" / "plan.yaml").threads.values()} == {0, 1}


def test_too_many_instances_are_refused(tmp_path, capsys):
    path = write(tmp_path, spec_data(13))
    code = main(["run", str(path), "--out", str(tmp_path / "out"), "--samples", "30", *FAST])
    err = capsys.readouterr().err
    assert code == 2 and "13 instances of `infer`" in err and "12 usable contexts" in err
    assert not (tmp_path / "out" / "plan.yaml").exists()


def test_several_applications(tmp_path, capsys):
    other = {"route": {"tasks": {"r": {"cycles": 50}}, "edges": []}}
    path = write(tmp_path, spec_data(2, apps=other))
    code = main(["run", str(path), "--out", str(tmp_path / "out"), "--samples", "30", *FAST])
    err = capsys.readouterr().err
    assert code == 2 and "several applications (`infer` x2, `route` x1)" in err
    code = main(["pipeline", str(path), "--app", "infer", "-m", "lata", *FAST, "--json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert code == 1 and data["meets_bound"] and not data["covers_workload"] and data["left_out"] == ["`route` x1"]
    assert {t["instance"] for t in data["plan"]["threads"].values()} == {0, 1}
    code = main(["pipeline", str(path), "--app", "infer", "-m", "lata", *FAST])
    captured = capsys.readouterr()
    assert code == 1 and "the plan covers `infer` only: it leaves `route` x1 of the workload out" in captured.err
    assert "left out of the workload: `route` x1" in captured.out
