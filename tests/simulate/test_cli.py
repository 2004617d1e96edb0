"""`tasksolve simulate` end to end."""

from __future__ import annotations

import json

import pytest

from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.solver.cli import main
from tasksolve.specs import Plan, load_spec


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_keys_for_a_plan_file(capsys, tmp_path):
    spec = load_spec("t2-ipfwd-l1-x2")
    plan = Plan.from_contexts(spec, uniform_plans(spec, 1, seed=0)[0])
    path = tmp_path / "plan.yaml"
    plan.save(path)
    code, out, err = run(capsys, "simulate", "t2-ipfwd-l1-x2", "--plan", str(path), "--json", "--seed", "3")
    assert code == 0, err
    data = json.loads(out)
    assert set(data["throughput"]) >= {"total", "per_instance", "half_width"}
    assert set(data["latency"]) >= {"mean", "p50", "p99"}
    assert data["plan_source"] == str(path)
    for thread in data["threads"]:
        assert set(thread) >= {"thread", "context", "utilization", "queue_wait"}
    assert {t["context"] for t in data["threads"]} == set(plan.bindings.values())
    assert data["bottleneck"] in plan.bindings and data["oracle"] == "des"
    assert data["throughput"]["half_width"] <= 0.01 * data["throughput"]["total"]


def test_without_a_plan_a_balanced_placement_is_simulated_and_said(capsys):
    code, out, err = run(capsys, "simulate", "t2-ipfwd-intadd-x2")
    assert code == 0, err
    assert "balanced placement" in out and "throughput" in out and "bottleneck" in out
    code, out, _ = run(capsys, "simulate", "t2-ipfwd-intadd-x2", "--oracle", "analytic", "--json")
    data = json.loads(out)
    assert code == 0 and data["oracle"] == "analytic" and data["throughput"]["half_width"] == 0
    assert data["plan_source"].startswith("balanced")


def test_ideal_and_max_rate(capsys):
    code, out, err = run(
        capsys,
        "simulate",
        "t2-ipfwd-intadd-x2",
        "--ideal",
        "communication",
        "--ideal",
        "queues",
        "--max-rate",
        "--json",
        "--precision",
        "0.02",
    )
    assert code == 0, err
    data = json.loads(out)
    assert set(data["ideal"]) == {"communication", "queues"}
    assert data["ideal"]["communication"]["throughput"] >= data["throughput"]["total"] * 0.99
    assert 0 < data["max_rate"]["per_instance"] <= data["throughput"]["min"] * 1.02


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["no-such-spec.yaml"], 2, "no-such-spec"),
        (["t2-ipfwd-l1-x2", "--plan", "missing.yaml"], 2, "missing.yaml"),
        (["t2-ipfwd-l1-x2", "--precision", "2"], 2, "precision"),
        (["t2-ipfwd-l1-x2", "--rate", "fast"], 2, "rate"),
        (["t2-ipfwd-l1-x2", "--arrival", "poisson"], 3, "rate"),
        (["t2-ipfwd-l1-x2", "--oracle", "analytic", "--max-rate"], 2, "des"),
        (["xeon-lata-dag"], 2, "--plan"),
    ],
)
def test_errors_are_one_message_and_an_exit_code(capsys, args, code, message):
    got, out, err = run(capsys, "simulate", *args)
    assert got == code
    assert message in err and "Traceback" not in err


def test_a_plan_with_a_problem_is_located(capsys, tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text('bindings:\n  "ipfwd#0.R": core0.pipe0.strand0\n  "ipfwd#0.P": core0.pipe0.strand0\n')
    code, _, err = run(capsys, "simulate", "t2-ipfwd-l1-x2", "--plan", str(path))
    assert code == 2 and str(path) in err and "not bound" in err


def test_help_documents_the_options(capsys):
    code, out, _ = run(capsys, "simulate", "--help")
    assert code == 0
    for option in ("--plan", "--oracle", "--max-rate", "--ideal", "--seed", "--json"):
        assert option in out


@pytest.mark.parametrize(
    ("args", "meaning"),
    [
        (["--oracle", "analytic"], "unloaded critical path with the plan's sharing"),
        ([], "saturated sources: every queue full"),
        (["--arrival", "poisson", "--rate", "1Mpps"], "poisson arrivals at 1.000 Mpps per instance"),
    ],
)
def test_the_latency_line_says_which_latency_it_is(capsys, args, meaning):
    assert main(["simulate", "t2-ipfwd-l1-x2", *args]) == 0
    text = " ".join(capsys.readouterr().out.split())  # the line may wrap
    assert meaning in text
