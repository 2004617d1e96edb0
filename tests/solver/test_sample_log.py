"""The samples file identifies its sample: resume refuses another sample's file, a fresh start
refuses to overwrite finished samples, a cut last line is repaired, the output directory is
locked, and `tasksolve evt` reads the file as it is."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tasksolve.solver.certify.designs import DEFAULT_DESIGN
from tasksolve.solver.certify.run import certify
from tasksolve.solver.certify.service import SamplingError, SamplingService, spec_hash
from tasksolve.solver.certify.settings import CertifySettings
from tasksolve.solver.cli import main
from tasksolve.specs import load_spec

ROOT = Path(__file__).resolve().parents[2]

SPEC_TEXT = textwrap.dedent("""\
    tasksolve: 1
    name: small
    topology: ultrasparc-t2
    applications:
      ipfwd:
        tasks:
          R: {cycles: 180, demand: {ifu: 0.4}}
          P: {cycles: 600, demand: {ifu: 0.9}}
          T: {cycles: 170, demand: {ifu: 0.4}}
        edges:
          - {from: R, to: P, bytes: 64B}
          - {from: P, to: T, bytes: 64B}
    workload:
      - {app: ipfwd, instances: 2}
    """)


@pytest.fixture
def spec_file(tmp_path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(SPEC_TEXT)
    return path


def _certify(spec_file, out, *extra):
    return main(["certify", str(spec_file), "--out", str(out), "--workers", "1", "--json", "--time-limit", "2", *extra])


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_the_header_names_the_sample(spec_file, tmp_path, capsys):
    out = tmp_path / "out"
    assert _certify(spec_file, out, "--oracle", "analytic", "--samples", "100", "--seed", "3") in (0, 1)
    header = json.loads(_lines(out / "samples.jsonl")[0])
    assert header["tasksolve_samples"] == 1
    assert header["spec_name"] == "small" and header["spec_hash"] == spec_hash(load_spec(str(spec_file)))
    assert header["oracle"] == {"kind": "analytic", "settings": {}}
    assert header["design"] == DEFAULT_DESIGN and header["seed"] == 3 and header["plans"]["sampler"] == "uniform"
    assert len(_lines(out / "samples.jsonl")) == 101


def test_the_spec_hash_ignores_names_and_descriptions_only():
    spec = load_spec("t2-ipfwd-intadd-x2")
    renamed = spec.model_copy(update={"name": "other", "description": "words"})
    assert spec_hash(renamed) == spec_hash(spec)
    data = spec.model_dump(mode="json", by_alias=True)
    data["applications"]["ipfwd"]["tasks"]["P"]["cycles"] = 251
    assert spec_hash(type(spec).model_validate(data)) != spec_hash(spec)


@pytest.mark.parametrize(
    "change, message",
    [
        ("spec", "the spec changed"),
        ("oracle", "the oracle changed (analytic in the file, des now)"),
        ("seed", "the seed changed (0 in the file, 4 now)"),
        ("design", "the design changed ('local-optima' in the file, 'random' now)"),
    ],
)
def test_resume_refuses_another_samples_file(spec_file, tmp_path, capsys, change, message):
    out = tmp_path / "out"
    assert _certify(spec_file, out, "--oracle", "analytic", "--samples", "300", "--seed", "0") in (0, 1)
    before = (out / "samples.jsonl").read_text()
    args = ["--oracle", "analytic", "--samples", "600", "--seed", "0", "--resume"]
    if change == "spec":
        spec_file.write_text(SPEC_TEXT.replace("cycles: 600", "cycles: 900"))
    elif change == "oracle":
        args[1] = "des"
    elif change == "design":
        args += ["--design", "random"]
    else:
        args[5] = "4"
    capsys.readouterr()
    assert _certify(spec_file, out, *args) == 2
    err = capsys.readouterr().err
    assert message in err and "--force" in err and "Traceback" not in err
    assert (out / "samples.jsonl").read_text() == before  # nothing stale reused, nothing lost


def test_resume_refuses_changed_oracle_settings(tmp_path):
    spec = load_spec("t2-ipfwd-intadd-x2")
    SamplingService(spec, tmp_path / "s.jsonl", oracle_kind="des").start_fresh()
    data = spec.model_dump(mode="json", by_alias=True)
    data["oracle"]["packets"] = 1000
    other = type(spec).model_validate(data)
    with pytest.raises(SamplingError, match=r"oracle's settings changed \(packets: 200000 -> 1000\)"):
        SamplingService(other, tmp_path / "s.jsonl", oracle_kind="des").load()


def test_resume_extends_the_same_sample(tmp_path):
    """The plan stream does not depend on the sample size: 300 then --resume 600 is the 600 run."""
    spec = load_spec("t2-ipfwd-intadd-x2")
    first = certify(spec, tmp_path / "a", CertifySettings(samples=300, oracle_kind="analytic", balanced=0))
    resumed = certify(
        spec, tmp_path / "a", CertifySettings(samples=600, oracle_kind="analytic", balanced=0, resume=True)
    )
    fresh = certify(spec, tmp_path / "b", CertifySettings(samples=600, oracle_kind="analytic", balanced=0))
    assert [r.__dict__ for r in resumed.service.ok_records()] == [r.__dict__ for r in fresh.service.ok_records()]
    assert first.service.ok_records() == fresh.service.ok_records(300)
    assert len(_lines(tmp_path / "a" / "samples.jsonl")) == 601


def test_a_fresh_start_refuses_to_overwrite_finished_samples(spec_file, tmp_path, capsys):
    out = tmp_path / "out"
    assert _certify(spec_file, out, "--oracle", "analytic", "--samples", "100") in (0, 1)
    before = (out / "samples.jsonl").read_text()
    capsys.readouterr()
    assert _certify(spec_file, out, "--oracle", "analytic", "--samples", "100") == 2
    err = capsys.readouterr().err
    assert "already holds 100 measured plans" in err and "--resume" in err and "--force" in err
    assert (out / "samples.jsonl").read_text() == before
    assert _certify(spec_file, out, "--oracle", "analytic", "--samples", "100", "--resume", "--force") == 2
    assert _certify(spec_file, out, "--oracle", "analytic", "--samples", "100", "--seed", "9", "--force") in (0, 1)
    assert json.loads(_lines(out / "samples.jsonl")[0])["seed"] == 9


def test_a_header_alone_is_not_a_finished_sample(tmp_path):
    spec = load_spec("t2-ipfwd-intadd-x2")
    service = SamplingService(spec, tmp_path / "samples.jsonl", oracle_kind="analytic")
    service.start_fresh()
    service.open(resume=False)  # nothing to lose: no error
    with (tmp_path / "samples.jsonl").open("a") as handle:
        handle.write('{"index": 0, "contexts": [1, 2')  # a cut line is not a finished sample either
    service.open(resume=False)


def test_a_cut_last_line_is_repaired_before_appending(tmp_path):
    spec = load_spec("t2-ipfwd-intadd-x2")
    full = SamplingService(spec, tmp_path / "full.jsonl", seed=3, oracle_kind="analytic", max_samples=60)
    full.start_fresh()
    full.ensure(60)
    part = SamplingService(spec, tmp_path / "part.jsonl", seed=3, oracle_kind="analytic", max_samples=60)
    part.start_fresh()
    part.ensure(25)
    with part.path.open("a") as handle:  # a crash (or a full disk) in the middle of a line
        handle.write(part.records[3].to_json()[:40])
    again = SamplingService(spec, part.path, seed=3, oracle_kind="analytic", max_samples=60)
    assert again.load() == 25
    again.ensure(60)
    lines = _lines(part.path)
    assert len(lines) == 61 and all(json.loads(line) for line in lines)
    reread = SamplingService(spec, part.path, seed=3, oracle_kind="analytic", max_samples=60)
    assert reread.load() == 60
    assert [r.__dict__ for r in reread.ok_records()] == [r.__dict__ for r in full.ok_records()]


def test_a_damaged_or_foreign_file_is_refused(tmp_path):
    spec = load_spec("t2-ipfwd-intadd-x2")
    service = SamplingService(spec, tmp_path / "s.jsonl", oracle_kind="analytic", max_samples=30)
    service.start_fresh()
    service.ensure(30)
    lines = _lines(service.path)
    value = json.loads(lines[5])["value"]
    damaged = (
        lines[:5] + [f'{{"index": 4, "contexts": [1, 2, 3, 4, 5, 6], "status": "ok", "value": {value}}}'] + lines[6:]
    )
    service.path.write_text("\n".join(damaged) + "\n")
    with pytest.raises(SamplingError, match=r"s\.jsonl:6: plan 4 is not the plan"):
        SamplingService(spec, service.path, oracle_kind="analytic").load()
    service.path.write_text("\n".join(lines[:5] + ["garbage"] + lines[6:]) + "\n")
    with pytest.raises(SamplingError, match=r"s\.jsonl:6: not a sample record"):
        SamplingService(spec, service.path, oracle_kind="analytic").load()
    service.path.write_text("\n".join(lines[1:]) + "\n")  # an older file, without header
    with pytest.raises(SamplingError, match=r"s\.jsonl:1: no samples header"):
        SamplingService(spec, service.path, oracle_kind="analytic").load()


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from tasksolve.solver.certify.service import acquire_lock
    acquire_lock(Path(sys.argv[1]))
    print("locked", flush=True)
    time.sleep(60)
""")


def test_a_second_run_into_the_same_out_fails_at_once(spec_file, tmp_path, capsys):
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert _certify(spec_file, out, "--oracle", "analytic", "--samples", "100") == 2
        err = capsys.readouterr().err
        assert f"in use by another tasksolve run (PID {holder.pid})" in err and "Traceback" not in err
        assert not (out / "samples.jsonl").exists()
    finally:
        holder.kill()
        holder.wait()
    assert _certify(spec_file, out, "--oracle", "analytic", "--samples", "100") in (0, 1)  # gone with its holder


def test_the_lock_is_released_after_a_run(spec_file, tmp_path):
    out = tmp_path / "out"
    assert _certify(spec_file, out, "--oracle", "analytic", "--samples", "100") in (0, 1)
    probe = subprocess.run(
        [sys.executable, "-c", HOLDER.replace("time.sleep(60)", ""), str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.returncode == 0 and "locked" in probe.stdout, probe.stderr


def test_evt_reads_the_samples_file_as_it_is(tmp_path, capsys):
    from tests.solver.test_certify import FlakyOracle

    spec = load_spec("t2-ipfwd-intadd-x2")
    settings = CertifySettings(samples=200, seed=5, oracle_factory=FlakyOracle, balanced=0, design="random")
    outcome = certify(spec, tmp_path, settings)
    ok = len(outcome.service.ok_records())
    assert 0 < ok < 200
    capsys.readouterr()
    assert main(["evt", str(tmp_path / "samples.jsonl"), "--json", "--gof-bootstrap", "0"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == ok
    assert result["best_observed"] == pytest.approx(outcome.service.best().value)


def test_run_refuses_before_solving(spec_file, tmp_path, capsys):
    out = tmp_path / "out"
    assert _certify(spec_file, out, "--oracle", "analytic", "--samples", "100") in (0, 1)
    capsys.readouterr()
    assert (
        main(
            [
                "run",
                str(spec_file),
                "--out",
                str(out),
                "--oracle",
                "analytic",
                "--samples",
                "100",
                "--workers",
                "1",
                "--json",
            ]
        )
        == 2
    )
    assert "--resume or discard them with --force" in capsys.readouterr().err
    assert not (out / "plan.yaml").exists()
