"""The sample log identifies its run: resume refuses another run's file, finished work is never
overwritten or glued, one run writes into a directory at a time; the plan stream is a prefix
stream; the executor gives the same certificate inline, with 2 processes and on a Dask cluster."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from solver.certify.run import certify
from solver.certify.service import PlanStream, SamplingError, SamplingService
from solver.cli import main
from specs import load_spec

SPEC = "t2-ipfwd-intadd-x2"
ROOT = Path(__file__).resolve().parents[2]


def certificate_of(out: Path) -> dict:
    data = json.loads((out / "certificate.json").read_text())
    data["samples"].pop("file")
    data.pop("versions")
    return data


def test_the_plan_stream_does_not_depend_on_the_sample_size():
    spec = load_spec(SPEC)
    a, b = PlanStream(spec, 3), PlanStream(spec, 3)
    assert [list(a[i]) for i in range(0, 3000, 97)] == [list(b[i]) for i in range(0, 3000, 97)]
    assert list(PlanStream(spec, 4)[5]) != list(a[5]) or list(PlanStream(spec, 4)[6]) != list(a[6])


def test_resume_refuses_a_changed_spec_or_oracle(tmp_path, capsys):
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text("tasksolve: 1\nname: x\ntopology: ultrasparc-t2\napplications: {ipfwd: ipfwd-intadd}\n"
                         "workload: [{app: ipfwd, instances: 2}]\n")
    out = tmp_path / "out"
    assert main(["certify", str(spec_file), "--samples", "100", "--oracle", "analytic", "--out", str(out),
                 "--workers", "1", "--json"]) in (0, 1)
    spec_file.write_text(spec_file.read_text().replace("ipfwd-intadd", "ipfwd-l1"))
    code = main(["certify", str(spec_file), "--samples", "200", "--oracle", "analytic", "--out", str(out),
                 "--resume", "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "written for another run" in err and "the spec" in err
    spec_file.write_text(spec_file.read_text().replace("ipfwd-l1", "ipfwd-intadd"))
    code = main(["certify", str(spec_file), "--samples", "200", "--oracle", "des", "--out", str(out), "--resume",
                 "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "the oracle ('analytic' then, 'des' now)" in err


def test_finished_samples_are_not_overwritten_without_resume_or_force(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["certify", SPEC, "--samples", "100", "--oracle", "analytic", "--out", str(out), "--workers", "1"]
    assert main(args) in (0, 1)
    before = (out / "samples.jsonl").read_text()
    assert main(args) == 2
    assert "--resume" in capsys.readouterr().err
    assert (out / "samples.jsonl").read_text() == before
    assert main(args + ["--force"]) in (0, 1)


def test_a_cut_last_line_is_dropped_before_appending(tmp_path):
    spec = load_spec(SPEC)
    path = tmp_path / "samples.jsonl"
    service = SamplingService(spec, path, seed=1, oracle_kind="analytic", max_samples=60)
    service.start_fresh()
    service.ensure(30)
    text = path.read_text()
    path.write_text(text[:-25])  # a crash in the middle of the last record
    again = SamplingService(spec, path, seed=1, oracle_kind="analytic", max_samples=60)
    assert again.load() == 29
    again.ensure(60)
    lines = path.read_text().splitlines()
    records = [json.loads(line) for line in lines[1:]]
    assert sorted(r["index"] for r in records) == list(range(60))


def test_one_run_per_directory(tmp_path):
    spec = load_spec(SPEC)
    first = SamplingService(spec, tmp_path / "samples.jsonl", oracle_kind="analytic", max_samples=20)
    first.lock()
    second = SamplingService(spec, tmp_path / "samples.jsonl", oracle_kind="analytic", max_samples=20)
    with pytest.raises(SamplingError, match="another tasksolve run"):
        second.lock()
    first.release()
    second.lock()
    second.release()


def test_the_same_certificate_inline_with_two_processes_and_on_dask(tmp_path):
    from distributed import Client, LocalCluster

    spec = load_spec(SPEC)
    results = []
    for name, options in (("inline", dict(workers=1)), ("processes", dict(workers=2))):
        certify(spec, out_dir=tmp_path / name, samples=300, seed=7, oracle_kind="des", balanced=0, **options)
        results.append(json.loads((tmp_path / name / "samples.jsonl").read_text().splitlines()[0]))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        outcome = certify(spec, out_dir=tmp_path / "dask", samples=300, seed=7, oracle_kind="des", balanced=0,
                          scheduler=client)
    certificates = []
    for name in ("inline", "processes", "dask"):
        lines = (tmp_path / name / "samples.jsonl").read_text().splitlines()
        certificates.append(sorted(lines[1:], key=lambda line: json.loads(line)["index"]))
    assert certificates[0] == certificates[1] == certificates[2]
    assert outcome.certificate.samples["n"] == 300


def run_cli(out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "solver.cli", "certify", SPEC, "--samples", "1200", "--oracle", "des",
                             "--workers", "2", "--seed", "3", "--out", str(out), "--json"] + (["--resume"] if out.exists() else []),
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def records(out: Path) -> int:
    try:
        return max(0, len((out / "samples.jsonl").read_text().splitlines()) - 1)
    except FileNotFoundError:
        return 0


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_kill_9_then_resume_gives_the_uninterrupted_certificate(tmp_path):
    """SIGKILL at 10 points of a 2-worker run, each followed by --resume: the result equals the
    uninterrupted run's, and no worker outlives its killed parent."""
    import os
    import random
    import signal

    reference = tmp_path / "reference"
    done = run_cli(reference)
    done.communicate(timeout=600)
    assert done.returncode in (0, 1)
    out = tmp_path / "killed"
    rng = random.Random(0)
    points = sorted(rng.sample(range(50, 1150), 10))
    for point in points:
        proc = run_cli(out)
        deadline = time.monotonic() + 120
        while proc.poll() is None and records(out) < point and time.monotonic() < deadline:
            time.sleep(0.02)
        if proc.poll() is not None:
            break
        workers = children_of(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        deadline = time.monotonic() + 10
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(w) for w in workers), "a worker outlived its killed parent"
    final = run_cli(out)
    final.communicate(timeout=600)
    assert final.returncode == done.returncode
    assert certificate_of(out) == certificate_of(reference)
