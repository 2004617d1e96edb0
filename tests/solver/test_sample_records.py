"""Samples records read back are checked like spec input (issue 25): file:line and exit 2 for a
value that is not a finite number in the metric's domain, an unknown status, or a value orders of
magnitude away from the others."""

from __future__ import annotations

import json

import pytest

from tasksolve.solver.certify.records import RecordError, check_spread, checked_record
from tasksolve.solver.cli import main
from tests.solver.test_outdir import FAST, SPEC_TEXT


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    folder = tmp_path_factory.mktemp("records")
    spec = folder / "small.yaml"
    spec.write_text(SPEC_TEXT)
    assert main(["certify", str(spec), "--out", str(folder / "out"), *FAST]) in (0, 1)
    return spec, folder / "out" / "samples.jsonl"


@pytest.mark.parametrize(
    "value, words",
    [
        ("1e300", "outside the plausible"),
        ('"abc"', "not a finite number"),
        ("null", "not a finite number"),
        ('"1.5"', "not a finite number"),
        ("NaN", "not a finite number"),
        ("-5.0", "must be positive"),
        ("0", "must be positive"),
    ],
)
def test_a_bad_value_is_exit_2_with_file_and_line(finished, tmp_path, capsys, value, words):
    spec, samples = finished
    out = tmp_path / "out"
    out.mkdir()
    lines = samples.read_text().splitlines()
    record = json.loads(lines[3])
    assert record["status"] == "ok"
    lines[3] = json.dumps(record).replace(json.dumps(record["value"]), value, 1)
    (out / "samples.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["certify", str(spec), "--out", str(out), *FAST, "--resume"]) == 2
    err = capsys.readouterr().err
    assert "samples.jsonl:4:" in err and words in err and "Traceback" not in err


def test_an_unknown_status_is_an_error_not_skipped(finished, tmp_path, capsys):
    spec, samples = finished
    out = tmp_path / "out"
    out.mkdir()
    lines = samples.read_text().splitlines()
    lines[2] = lines[2].replace('"status":"ok"', '"status":"pending"')
    (out / "samples.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["certify", str(spec), "--out", str(out), *FAST, "--resume"]) == 2
    assert "samples.jsonl:3: unknown status 'pending'" in capsys.readouterr().err


def test_a_value_orders_of_magnitude_away_is_refused():
    lines = [
        json.dumps({"index": i, "contexts": [i], "status": "ok", "value": v})
        for i, v in enumerate([5e6, 6e6, 5.5e6, 7e9])
    ]
    for line in lines:
        checked_record(line, "s.jsonl", 2, "total_throughput")
    with pytest.raises(RecordError, match=r"s\.jsonl:5: `value` 7e\+09 is .* times the median"):
        check_spread("s.jsonl", lines, first=2)
    check_spread("s.jsonl", lines[:3], first=2)


def test_a_latency_record_is_stored_natural_and_must_be_positive():
    good = json.dumps({"index": 0, "contexts": [0], "status": "ok", "value": 2e-6})
    assert checked_record(good, "s", 2, "latency")["value"] == 2e-6
    with pytest.raises(RecordError, match="latency of -2e-06: it must be positive"):
        checked_record(good.replace("2e-6", "-2e-6").replace("2e-06", "-2e-06"), "s", 2, "latency")


def test_a_latency_certificate_resumes_from_its_own_samples(tmp_path, capsys):
    spec = tmp_path / "latency.yaml"
    spec.write_text(SPEC_TEXT + "objective: latency\n")
    out = tmp_path / "out"
    assert main(["certify", str(spec), "--out", str(out), *FAST]) in (0, 1)
    first = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()[1:]]
    assert all(r["value"] > 0 for r in first if r["status"] == "ok")  # seconds, as the samples' analysis reads them
    more = [a if a != "40" else "60" for a in FAST]
    assert main(["certify", str(spec), "--out", str(out), *more, "--resume"]) in (0, 1)
    assert "must be positive" not in capsys.readouterr().err
    assert len((out / "samples.jsonl").read_text().splitlines()) - 1 == 60  # the 40 kept, 20 more drawn


def test_oracle_range_bounds_the_records():
    line = json.dumps({"index": 0, "contexts": [0], "status": "ok", "value": 50.0})
    with pytest.raises(RecordError, match=r"outside oracle.range \[100, 1000\]"):
        checked_record(line, "s", 2, "total_throughput", (100.0, 1000.0))
