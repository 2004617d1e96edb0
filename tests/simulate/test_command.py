"""The command oracle: the placement in every form, argv never through a shell, the figure read on
stdout (median of repeats), failures named, and the real pinned workload end to end."""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

import pytest

from tasksolve.simulate.command import CommandOracle
from tasksolve.simulate.errors import CommandFailed, CommandTimeout, MetricNotFound, OracleError, SimulationTimeout
from tasksolve.simulate.oracle import make_oracle
from tasksolve.simulate.pinning import PlaceholderError
from tasksolve.simulate.registry import OracleUnavailableError
from tasksolve.solver.certify.service import SamplingService
from tasksolve.solver.cli import main
from tasksolve.specs import Plan
from tasksolve.specs.errors import SpecError
from tasksolve.specs.loader import load_spec_text

WORKLOAD = Path(__file__).resolve().parents[1] / "data" / "workload.py"
TOPOLOGY = """tasksolve: 1
name: spin
topology:
  name: two cores of two strands
  clock: 1GHz
  levels: [{name: core, count: 2}, {name: strand, count: 2}]
  resources: [{name: alu, level: core, capacity: 1.0}]
applications:
  spin:
    tasks:
      A: {cycles: 1000, demand: {alu: 1.0}}
      B: {cycles: 1000, demand: {alu: 1.0}}
    edges: [{from: A, to: B, bytes: 0}]
workload: [{app: spin}]
"""


def spec_with(oracle: dict, objective: str | None = None):
    text = TOPOLOGY + "oracle: " + json.dumps(oracle) + "\n"
    if objective:
        text += f"objective: {objective}\n"
    return load_spec_text(text, "spin.yaml")


def python(code: str, *args: str) -> list[str]:
    return [sys.executable, "-c", code, *args]


RECORD = """
import json, os, sys
out = sys.argv[1]
json.dump({"argv": sys.argv[2:], "env": {k: v for k, v in os.environ.items() if k.startswith("TASKSOLVE_")},
           "plan": json.load(open(os.environ["TASKSOLVE_PLAN"]))}, open(out, "w"))
print("noise line"); print(json.dumps({"result": {"rate": 42.5}}))
"""


def test_the_placement_reaches_the_program_in_every_form_and_argv_is_never_a_shell(tmp_path):
    out = tmp_path / "seen.json"
    literal = ["a;b", "$(touch pwned)", "`touch pwned`", "two words", "{not_a_placeholder}", "x|y>z"]
    argv = python(
        RECORD, str(out), *literal, "{cpus}", "--lcores={lcores}", "{omp_places}", "{cpu:spin#0.B}", "{plan_file}"
    )
    spec = spec_with({"kind": "command", "command": argv, "metric": {"json": "result.rate"}, "repeats": 1})
    oracle = make_oracle(spec)
    assert isinstance(oracle, CommandOracle)
    m = oracle.evaluate(Plan.from_contexts(spec, [3, 0]), seed=7)
    assert m.oracle == "command" and m.throughput == 42.5
    seen = json.loads(out.read_text())
    assert seen["argv"][:6] == literal and not (Path.cwd() / "pwned").exists()
    assert seen["argv"][6:10] == ["3,0", "--lcores=0@3,1@0", "{3},{0}", "0"]
    assert seen["env"]["TASKSOLVE_CPUS"] == "3,0" and seen["env"]["TASKSOLVE_SEED"] == "7"
    assert seen["argv"][10] == seen["env"]["TASKSOLVE_PLAN"]
    assert seen["plan"]["threads"] == [
        {"thread": "spin#0.A", "context": "core1.strand1", "cpu": 3},
        {"thread": "spin#0.B", "context": "core0.strand0", "cpu": 0},
    ]
    assert not Path(seen["env"]["TASKSOLVE_PLAN"]).exists()  # the temporary plan file is removed


COUNTER = """
import sys
path = sys.argv[1]
try:
    n = int(open(path).read())
except FileNotFoundError:
    n = 0
open(path, "w").write(str(n + 1))
print(f"rate={[5.0, 1.0, 3.0][n % 3]} pps")
"""


def test_the_figure_is_the_mean_of_the_repeats_with_its_t_interval_read_by_regex(tmp_path):
    spec = spec_with(
        {
            "kind": "command",
            "command": python(COUNTER, str(tmp_path / "n")),
            "metric": {"regex": r"rate=([0-9.]+)"},
            "repeats": 3,
        }
    )
    m = make_oracle(spec).evaluate([0, 2])
    # runs 5, 1, 3: mean 3, s = 2, t(2, 0.975) = 4.303 (Law Eq. 4.12)
    assert m.throughput == 3.0 and m.half_width == pytest.approx(4.3027 * 2 / math.sqrt(3), rel=1e-4)
    assert (tmp_path / "n").read_text() == "3"
    latency = spec_with(
        {
            "kind": "command",
            "command": python(COUNTER, str(tmp_path / "m")),
            "metric": {"regex": r"rate=([0-9.]+)"},
            "repeats": 3,
        },
        objective="latency",
    )
    m = make_oracle(latency).evaluate([0, 2])
    assert m.latency_mean == 3.0 and m.value("latency") == -3.0


@pytest.mark.parametrize(
    "code, metric, error, words",
    [
        (
            "import sys; print('x', file=sys.stderr); sys.exit(3)",
            {"json": "rate"},
            CommandFailed,
            "exited with status 3",
        ),
        ("print('rate: fast')", {"regex": "rate: (\\S+)"}, MetricNotFound, "not a number"),
        ("print('nothing here')", {"regex": "rate=([0-9.]+)"}, MetricNotFound, "no match"),
        # the old README pattern on scientific notation read 1.25 pps for 1.25e6
        ("print('rate=1.25e6')", {"regex": "rate=([0-9.]+)"}, MetricNotFound, "part of the number '1.25e6'"),
        ("print('rate=-5')", {"regex": "rate=-?([0-9.]+)"}, MetricNotFound, "part of the number '-5'"),
        # a figure with letters glued on: 12.5 of what? (12.5M read as 12.5 pps)
        ("print('rate=12.5abc')", {"regex": "rate=([-+0-9.eE]+)"}, MetricNotFound, "'12.5', followed by 'abc'"),
        ("print('rate=12.5M')", {"regex": "rate=([-+0-9.eE]+)"}, MetricNotFound, "followed by 'M'"),
        ("print('12.5abc')", {"regex": "[0-9.]+"}, MetricNotFound, "followed by 'abc'"),
        ("print('{\"speed\": 1}')", {"json": "rate"}, MetricNotFound, "no key 'rate'"),
        ("print('{\"rate\": true}')", {"json": "rate"}, MetricNotFound, "not a number"),
    ],
)
def test_failures_name_the_command_and_the_plan(code, metric, error, words):
    spec = spec_with({"kind": "command", "command": python(code), "metric": metric, "repeats": 1})
    with pytest.raises(error, match=words) as caught:
        make_oracle(spec).evaluate([1, 2])
    assert sys.executable in str(caught.value) and "spin#0.A@1, spin#0.B@2" in str(caught.value)
    assert isinstance(caught.value, OracleError)


@pytest.mark.parametrize(
    "printed, value",
    [("rate=1.25e6", 1.25e6), ("rate=2.5E+06 pps", 2.5e6), ("rate=1500.", 1500.0), ("rate=1.2e6;", 1.2e6)],
)
def test_the_documented_pattern_reads_scientific_notation_whole(printed, value):
    spec = spec_with(
        {"kind": "command", "command": python(f"print({printed!r})"), "metric": {"regex": "rate=([-+0-9.eE]+)"}}
    )
    assert make_oracle(spec).evaluate([1, 2]).throughput == pytest.approx(value)


def test_a_missing_program_and_a_run_past_the_timeout(tmp_path):
    missing = spec_with({"kind": "command", "command": [str(tmp_path / "no-such-program")], "metric": {"json": "r"}})
    with pytest.raises(CommandFailed, match="cannot start the program"):
        make_oracle(missing).evaluate([0, 1])
    marker = tmp_path / "child.pid"
    slow = python(
        f"import os, subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']); "
        f"open({str(marker)!r}, 'w').write(str(p.pid)); time.sleep(30)"
    )
    spec = spec_with({"kind": "command", "command": slow, "metric": {"json": "r"}, "timeout": "1s", "repeats": 1})
    began = time.monotonic()
    with pytest.raises(CommandTimeout, match="ran past oracle.timeout \\(1 s\\)") as caught:
        make_oracle(spec).evaluate([0, 1])
    assert isinstance(caught.value, SimulationTimeout) and time.monotonic() - began < 10
    grandchild = int(marker.read_text())
    for _ in range(50):  # the whole process group was killed, the grandchild too
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the program's child survived the timeout")


def test_the_spec_and_the_oracle_refuse_incomplete_or_wrong_settings():
    with pytest.raises(SpecError, match="needs metric"):
        spec_with({"kind": "command", "command": ["x"]})
    with pytest.raises(SpecError, match="exactly one of"):
        spec_with({"kind": "command", "command": ["x"], "metric": {"regex": "a", "json": "b"}})
    with pytest.raises(SpecError, match="not a regular expression"):
        spec_with({"kind": "command", "command": ["x"], "metric": {"regex": "(unclosed"}})
    with pytest.raises(SpecError, match="oracle.timeout"):
        spec_with({"kind": "command", "command": ["x"], "metric": {"json": "r"}, "timeout": "soon"})
    with pytest.raises(OracleUnavailableError, match="needs `oracle.command`"):
        make_oracle(spec_with({"kind": "des"}), "command")
    with pytest.raises(SpecError) as caught:  # located at the argv element
        spec_with({"kind": "command", "command": ["x", "--c={cpu:spin#0.C}"], "metric": {"json": "r"}})
    assert "spin.yaml:15:" in str(caught.value) and "oracle.command[1]" in str(caught.value)
    assert "did you mean `spin#0.B`" in str(caught.value)
    spec = spec_with({"kind": "command", "command": ["x"], "metric": {"json": "r"}})
    with pytest.raises(PlaceholderError, match="did you mean `spin#0.B`"):  # overrides are checked too
        make_oracle(spec, command=["x", "{cpu:spin#0.C}"])


def test_the_sampling_service_retries_a_failing_command_once_then_records_it(tmp_path):
    spec = spec_with(
        {
            "kind": "command",
            "command": python(COUNTER.replace("print(", "sys.exit(1); print("), str(tmp_path / "n")),
            "metric": {"regex": "rate=([0-9.]+)"},
            "repeats": 1,
        }
    )
    service = SamplingService(spec, tmp_path / "samples.jsonl", oracle_kind="command", workers=2, max_samples=2)
    service.open()
    service.ensure(2)
    failed = service.failures()
    assert len(failed) == 2 and all(r.attempts == 2 and "CommandFailed" in r.error for r in failed)
    assert (tmp_path / "n").read_text() == "4"  # two plans, two attempts each


# ---------------------------------------------------------------- the pinned workload, end to end
def workload_spec(tmp_path, seconds: float, repeats: int) -> Path:
    argv = [sys.executable, str(WORKLOAD), "--contexts", "{cpus}", "--per-cpu", "2", "--seconds", str(seconds)]
    path = tmp_path / "spin.yaml"
    path.write_text(
        TOPOLOGY
        + "oracle: "
        + json.dumps({"kind": "command", "command": argv, "metric": {"json": "rate"}, "repeats": repeats})
        + "\n"
    )
    return path


needs_two_cpus = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or not {0, 1} <= os.sched_getaffinity(0),
    reason="needs CPUs 0 and 1 and sched_setaffinity",
)


@needs_two_cpus
def test_simulate_with_the_command_measures_co_located_and_spread_workers(tmp_path, capsys):
    """Both placements measured end to end through `tasksolve simulate --oracle command`, pinned
    where the plan says.  Which one wins on this host depends on its other load (an idle host:
    spread is twice as fast; a host oversubscribed by unpinned processes: the balancer evens it
    out), so the ranking is shown by bench/command_ranking.py; the simulation's is asserted."""
    spec_path = workload_spec(tmp_path, seconds=0.1, repeats=1)
    rates = {}
    for name, contexts in (
        ("together", ("core0.strand0", "core0.strand1")),
        ("spread", ("core0.strand0", "core1.strand0")),
    ):
        plan = tmp_path / f"{name}.yaml"
        plan.write_text(f'bindings: {{"spin#0.A": {contexts[0]}, "spin#0.B": {contexts[1]}}}\n')
        assert main(["simulate", str(spec_path), "--plan", str(plan), "--oracle", "command", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["oracle"] == "command" and data["throughput"]["total"] > 0
        assert [t["cpu"] for t in data["threads"]] == ([0, 1] if name == "together" else [0, 2])
        assert main(["simulate", str(spec_path), "--plan", str(plan), "--oracle", "des", "--json"]) == 0
        rates[name] = json.loads(capsys.readouterr().out)["throughput"]["total"]
    assert rates["together"] == pytest.approx(rates["spread"] / 2, rel=0.02)  # the model: one ALU shared


@needs_two_cpus
def test_certify_with_the_command_measures_every_sampled_plan(tmp_path, capsys):
    spec_path = workload_spec(tmp_path, seconds=0.02, repeats=1)
    out = tmp_path / "out"
    code = main(
        [
            "certify",
            str(spec_path),
            "--oracle",
            "command",
            "--samples",
            "20",
            "--workers",
            "2",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code in (0, 1), capsys.readouterr().err
    lines = (out / "samples.jsonl").read_text().splitlines()
    header, records = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    assert header["oracle"]["kind"] == "command" and header["oracle"]["settings"]["metric"] == {
        "regex": None,
        "json": "rate",
        "instances": None,
    }
    assert len(records) == 20 and all(r["status"] == "ok" and r["value"] > 0 for r in records)


def test_simulate_prints_the_figure_and_where_each_thread_ran(tmp_path, capsys):
    path = tmp_path / "spec.yaml"
    path.write_text(
        TOPOLOGY
        + "oracle: "
        + json.dumps(
            {
                "kind": "command",
                "command": python("print('rate=250')"),
                "metric": {"regex": "rate=([0-9]+)"},
                "repeats": 2,
            }
        )
        + "\n"
    )
    plan = tmp_path / "plan.yaml"
    plan.write_text('bindings: {"spin#0.A": core1.strand0, "spin#0.B": core0.strand1}\n')
    assert main(["simulate", str(path), "--plan", str(plan), "--allow-commands"]) == 0
    out = capsys.readouterr().out
    assert "command oracle" in out and "spin#0.A  core1.strand0  cpu 2" in out and "mean of 2 run(s)" in out
    assert main(["simulate", str(path), "--plan", str(plan), "--precision", "0.1", "--allow-commands"]) == 2
    assert "des oracle only" in capsys.readouterr().err


@needs_two_cpus
def test_blackbox_on_a_program_without_instance_figures_is_refused_with_the_reason(tmp_path, capsys):
    """The command oracle reports one figure per run; BlackBox's profiling needs each instance's
    own throughput: one clear message and exit 2, not a crash."""
    spec_path = workload_spec(tmp_path, seconds=0.02, repeats=1)
    code = main(["solve", str(spec_path), "--method", "blackbox", "--oracle", "command", "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "internal error" not in err
    assert "needs each instance's own figure" in err or "need each instance's own figure" in err


def instance_workload_spec(tmp_path, seconds: float) -> Path:
    """The workload reading the plan file, one worker per thread, each instance's rate reported, on
    a machine of 2 sockets x 2 cores x 2 strands (room for BlackBox's isolated experiments): the
    four contexts of a socket share one CPU of this host."""
    argv = [sys.executable, str(WORKLOAD), "--plan", "{plan_file}", "--per-cpu", "4", "--seconds", str(seconds)]
    metric = {"json": "rate", "instances": "instances"}
    topology = TOPOLOGY.replace(
        "levels: [{name: core, count: 2}, {name: strand, count: 2}]",
        "levels: [{name: socket, count: 2}, {name: core, count: 2}, {name: strand, count: 2}]",
    )
    assert topology != TOPOLOGY
    path = tmp_path / "spin.yaml"
    path.write_text(topology + "oracle: " + json.dumps({"kind": "command", "command": argv, "metric": metric}) + "\n")
    return path


@needs_two_cpus
def test_blackbox_profiles_and_selects_on_the_program(tmp_path, capsys):
    """BlackBox end to end on the user's program: its base-time and slowdown experiments, the
    prediction and the selection phase all measured by running the pinned workload."""
    spec_path = instance_workload_spec(tmp_path, seconds=0.02)
    code = main(["solve", str(spec_path), "--method", "blackbox", "--oracle", "command", "--workers", "1", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = json.loads(captured.out)
    assert report["method"] == "blackbox" and report["simulated"]["oracle"] == "command"
    assert report["details"]["blackbox"]["experiments"] > 0
    per_instance = report["simulated"]["throughput"]["per_instance"]
    assert set(per_instance) == {"spin#0"} and per_instance["spin#0"] > 0


@needs_two_cpus
def test_tsbsched_on_a_program_is_refused_with_the_reason(tmp_path, capsys):
    spec_path = instance_workload_spec(tmp_path, seconds=0.02)
    code = main(["solve", str(spec_path), "--method", "tsbsched", "--oracle", "command", "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "busy time" in err and "Traceback" not in err


def test_instances_go_with_a_json_metric():
    from tasksolve.specs import SpecError

    with pytest.raises(SpecError, match="goes with `json`"):
        load_spec_text(TOPOLOGY + "oracle: {kind: command, command: [x], metric: {regex: 'r=(.*)', instances: i}}\n")


LOG = """
import json, os, sys
plan = json.load(open(os.environ["TASKSOLVE_PLAN"]))
with open(sys.argv[1], "a") as log:
    log.write(json.dumps([plan["pinning"], os.environ["TASKSOLVE_PINNING"], plan["cpus"]]) + "\\n")
print(json.dumps({"rate": 100.0 + len(plan["cpus"])}))
"""


def test_plans_compared_together_are_interleaved_after_a_discarded_warm_up_and_the_os_baseline_is_unpinned(
    tmp_path,
):
    log = tmp_path / "log"
    spec = spec_with(
        {"kind": "command", "command": python(LOG, str(log)), "metric": {"json": "rate"}, "repeats": 2, "warmup": 1}
    )
    oracle = make_oracle(spec)
    placements = [oracle.placement([0, 1]), oracle.placement([0, 2]), oracle.unpinned()]
    measured = oracle.measure(placements, [0, 0, 0])
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(runs) == 3 * (1 + 2)
    assert all(a != b for a, b in zip(runs, runs[1:]))  # never one plan back to back
    assert [r[:2] for r in runs].count(["none", "none"]) == 3 and runs.count(["plan", "plan", [0, 2]]) == 3
    assert measured[2].throughput == 104.0 and measured[2].packets == 2  # every CPU of the topology
    assert "1 warm-up run(s) discarded" in measured[0].notes[0] and "interleaved with 2" in measured[0].notes[0]
    assert oracle.noise_floor() == 0.0  # the program has no noise
    one = make_oracle(spec, repeats=1, warmup=0).evaluate([0, 1])
    assert math.isinf(one.half_width) and "spread unknown" in one.notes[0]
