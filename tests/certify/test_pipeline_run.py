"""`tasksolve run` on a pipeline spec: solve, certify with pipeline samples, report; resumable,
reproducible, and binding samples files unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tasksolve.solver.certify.service import Record, SamplingService
from tasksolve.solver.cli import main
from tasksolve.solver.job import run as run_job
from tasksolve.solver.pipeline.job import build_problem
from tasksolve.solver.pipeline.plans import pipeline_problems, to_plan
from tasksolve.solver.pipeline.sampling import decode, is_valid
from tasksolve.specs import load_spec, load_spec_text
from tests.pipeline.helpers import spec_text

ROOT = Path(__file__).resolve().parents[2]
TINY = spec_text(
    {"a": 200, "b": 300, "c": 250, "d": 100},
    [("a", "b", 64), ("a", "c", 64), ("b", "d", 64), ("c", "d", 64)],
    communication={"pair": 20, "machine": 90},
    latency_max="0.8us",  # Parallel's plan is over it
    name="tiny-pipe",
)


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


def _certificate(out: Path) -> dict:
    data = json.loads((out / "certificate.json").read_text())
    data["samples"].pop("file")
    for row in data["solve"]["comparison"]:  # wall times
        row.pop("seconds")
        if row["simulated"]:
            row["simulated"].pop("seconds")
    return data


def test_run_on_a_pipeline_spec_through_the_cli(tiny, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["run", str(tiny), "--out", str(out), "--samples", "60", "--time-limit", "5", "--json"])
    assert code in (0, 1)
    result = json.loads(capsys.readouterr().out)
    for name in ("plan.yaml", "certificate.json", "samples.jsonl", "report.html", "pinning.txt"):
        assert (out / name).is_file(), name
    cert = json.loads((out / "certificate.json").read_text())
    positive = cert["verdict"] in ("proven", "certified", "best_found")
    assert code == cert["exit_code"] == (0 if positive else 1) and result["certificate"]["verdict"] == cert["verdict"]
    solve = result["solve"]
    assert {row["method"] for row in solve["comparison"]} == {
        "cpsat",
        "lata",
        "parallel",
        "list",
        "greedy",
        "random",
        "bipar",
    }
    assert all(row["simulated"]["loaded_latency_mean"] is not None for row in solve["comparison"])
    assert cert["samples"]["n"] == 60 and cert["design"] == "local-optima"
    within = {f"{row['method']} plan" for row in solve["comparison"] if row["meets_bound"]}
    others = {f"{row['method']} plan" for row in solve["comparison"]} - within
    assert others and not others & {k["plan"] for k in cert["known_plans"]}  # over the bound: not in the space
    assert cert["bounds"][0]["applies"] is False  # the pipeline closed form bounds no oracle
    on_simulation = [b for b in cert["bounds"] if b["applies"]]  # the contention-free relaxation, the walk
    assert on_simulation and all(b["oracle"] == "des" for b in on_simulation)
    assert cert["verdict"] == "proven" and "without contention" in cert["sentence"]  # no resources: exact
    spec = load_spec(tiny)
    problem = build_problem(spec)
    lines = (out / "samples.jsonl").read_text().splitlines()[1:]
    for line in lines:
        record = json.loads(line)
        cand = decode(record["pipeline"])
        assert is_valid(problem, cand) and pipeline_problems(spec, to_plan(problem, cand)) == []
        assert record["start"] is not None and record["value"] == record["throughput"]
    page = (out / "report.html").read_text()
    assert "lata" in page and "taskset -c" in page and cert["verdict"].replace("_", " ") in page
    assert "<th>at load</th>" in page and "parallel (over L0)" in page
    pins = [line for line in (out / "pinning.txt").read_text().splitlines() if not line.startswith("#")]
    assert len(pins) == len(json.loads((out / "certificate.json").read_text())["plan"]["bindings"])


def test_resume_after_a_kill_and_the_same_seed_give_the_same_certificate(tiny, tmp_path):
    spec = load_spec(tiny)
    options = dict(samples=40, time_limit=5, seed=2, design="random")
    run_job(spec, tmp_path / "full", **options)
    run_job(spec, tmp_path / "again", **options)
    assert _certificate(tmp_path / "full") == _certificate(tmp_path / "again")
    # what kill -9 leaves: some records and a line cut in the middle
    cut = tmp_path / "cut"
    cut.mkdir()
    lines = (tmp_path / "full" / "samples.jsonl").read_text().splitlines(keepends=True)
    (cut / "samples.jsonl").write_text("".join(lines[:16]) + lines[16][:30])
    run_job(spec, cut, resume=True, **options)
    assert _certificate(cut) == _certificate(tmp_path / "full")


def test_binding_records_keep_their_form(tmp_path):
    """No `pipeline` key in a binding record: files written before read and resume the same."""
    line = Record(3, [1, 2, 3], "ok", 1.0, 1.0, 0.0, 1e-6, seed=7).to_json()
    assert "pipeline" not in json.loads(line)
    spec = load_spec("t2-ipfwd-intadd-x2")
    service = SamplingService(spec, tmp_path / "s.jsonl", seed=1, oracle_kind="analytic", max_samples=10)
    service.start_fresh()
    service.ensure(10)
    again = SamplingService(spec, tmp_path / "s.jsonl", seed=1, oracle_kind="analytic", max_samples=10)
    assert again.load() == 10 and all(r.pipeline is None for r in again.ok_records())


def test_a_latency_objective_on_a_pipeline_spec_is_refused_in_words(tmp_path, capsys):
    path = tmp_path / "lat.yaml"
    path.write_text(TINY + "objective: latency\n")
    load_spec_text(path.read_text())  # the spec itself is valid
    code = main(["run", str(path), "--out", str(tmp_path / "o"), "--samples", "30", "--json"])
    assert code == 2
    assert "objective: latency" in json.loads(capsys.readouterr().out)["error"]["message"]


def test_run_on_the_example_starts(tmp_path):
    """xeon-lata-dag is accepted (no more "use tasksolve pipeline"): 20 samples, closed form."""
    done = subprocess.run(
        [sys.executable, "-m", "tasksolve.solver.cli", "run", "xeon-lata-dag", "--out", str(tmp_path / "x")]
        + ["--samples", "20", "--oracle", "analytic", "--time-limit", "3", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["certificate"]["samples"]["n"] == 20


class _Failing:
    """The analytic oracle, failing on plans using the context pair0.core0."""

    def __init__(self, spec):
        from tasksolve.simulate.oracle import make_oracle

        self.inner = make_oracle(spec, "analytic")

    def evaluate(self, plan, seed=None):
        if "pair0.core0" in plan.bindings.values():
            raise RuntimeError("the measurement crashed")
        return self.inner.evaluate(plan, seed=seed)


def test_pipeline_failures_are_recorded_and_resumed(tiny, tmp_path):
    spec = load_spec(tiny)
    problem = build_problem(spec)
    options = dict(seed=4, oracle_kind="analytic", max_samples=30, design="random", pipeline=problem)
    service = SamplingService(spec, tmp_path / "s.jsonl", oracle_factory=_Failing, **options)
    service.start_fresh()
    service.ensure(30)
    failed = service.failures()
    assert failed and all(r.error == "RuntimeError: the measurement crashed" and r.attempts == 2 for r in failed)
    assert len(failed) + len(service.ok_records()) == 30
    again = SamplingService(spec, tmp_path / "s.jsonl", oracle_factory=_Failing, **options)
    assert again.load() == 30 and [r.__dict__ for r in again.records.values()] == [
        r.__dict__ for r in service.records.values()
    ]
    binding = SamplingService(spec, tmp_path / "s.jsonl", seed=4, oracle_kind="analytic", oracle_factory=_Failing)
    with pytest.raises(Exception, match="plan stream changed"):
        binding.load()


def test_kill_9_during_sampling_and_resume_gives_the_uninterrupted_certificate(tiny, tmp_path):
    import os
    import time

    def command(out: Path, *extra: str) -> list[str]:
        return [sys.executable, "-m", "tasksolve.solver.cli", "run", str(tiny), "--out", str(out)] + [
            "--samples",
            "150",
            "--workers",
            "1",  # one CP-SAT worker: with two its threads pick among symmetric optima by timing
            "--seed",
            "5",
            "--time-limit",
            "5",
            "--json",
            *extra,
        ]

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    whole = subprocess.run(command(tmp_path / "whole"), cwd=ROOT, capture_output=True, text=True, env=env)
    assert whole.returncode in (0, 1), whole.stderr
    out = tmp_path / "killed"
    process = subprocess.Popen(command(out), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    path, deadline = out / "samples.jsonl", time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") > 40:
            break
        time.sleep(0.01)
    process.kill()
    process.wait()
    finished = path.read_bytes().count(b"\n") - 1
    resumed = subprocess.run(command(out, "--resume"), cwd=ROOT, capture_output=True, text=True, env=env)
    assert resumed.returncode in (0, 1), resumed.stderr
    assert _certificate(out) == _certificate(tmp_path / "whole")
    lines = path.read_text().splitlines()
    assert sorted(json.loads(line)["index"] for line in lines[1:]) == list(range(150))
    assert 0 < finished < 150  # the kill cut the sampling


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--load", "150%"], "--load"),
        (["--load", "0"], "--load must be a share"),
        (["--load", "fast"], "--load"),
    ],
)
def test_a_bad_load_is_one_message(tiny, tmp_path, capsys, args, words):
    code = main(["run", str(tiny), "--out", str(tmp_path / "o"), "--json", *args])
    assert code == 2
    assert words in json.loads(capsys.readouterr().out)["error"]["message"]


def test_load_on_a_binding_spec_and_a_bad_oracle_load_are_refused(tmp_path, capsys):
    code = main(["run", "t2-ipfwd-intadd-x2", "--out", str(tmp_path / "o"), "--load", "90%", "--json"])
    assert code == 2 and "pipeline" in json.loads(capsys.readouterr().out)["error"]["message"]
    path = tmp_path / "bad.yaml"
    path.write_text(TINY + "oracle:\n  load: 0%\n")
    code = main(["run", str(path), "--out", str(tmp_path / "p"), "--json"])
    message = json.loads(capsys.readouterr().out)["error"]["message"]
    assert code == 2 and "oracle.load" in message and "bad.yaml" in message


def test_an_undecided_pipeline_certificate_has_no_binding_climbs(tiny, tmp_path, monkeypatch):
    """The finalists' climbs move threads of binding plans: a pipeline plan still undecided after
    its sample skips them (it had raised KeyError on `dag#0.rx` reading the pipeline plan's
    contexts as a binding's, on xeon-lata-dag when nothing beat its plan)."""
    from tasksolve.solver.certify.judgement import Judgement

    monkeypatch.setattr(Judgement, "decided", property(lambda self: False))  # as a budget-cut sample is
    result = run_job(
        load_spec(tiny), tmp_path / "out", samples=20, time_limit=5, seed=2, design="random", oracle_kind="des"
    )
    assert result.kind == "pipeline" and result.certificate.samples.n == 20


def test_the_pipeline_job_adopts_its_probe_when_it_beat_the_answer():
    """A pipeline's known plans are kept whole only for its local-search probe: the strategy adopts
    that plan when it is the one that beat the answer beyond noise (xeon-lata-dag: the probe's
    1.791 Mpps beat CP-SAT's 1.661), once, and no other known plan."""
    from types import SimpleNamespace

    from tasksolve.solver.certify.known import KnownPlan
    from tasksolve.solver.job.pipeline import PipelineStrategy

    strategy = PipelineStrategy.__new__(PipelineStrategy)
    strategy.report = SimpleNamespace(
        plan="cpsat's", chosen="cpsat", measured={"cpsat": SimpleNamespace(throughput=1.661e6)}
    )
    probe = KnownPlan("best of 10 local-search restarts", 1.791e6)
    strategy.probed = (probe, "the probe's")
    assert strategy.adopt(KnownPlan("best sampled plan", 1.9e6)) is None and strategy.plan == "cpsat's"
    said = strategy.adopt(probe)
    assert "best of 10 local-search restarts (1.791 Mpps)" in said and "cpsat plan (1.661 Mpps)" in said
    assert strategy.plan == "the probe's" and strategy.adopt(probe) is None  # once
