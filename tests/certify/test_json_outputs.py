"""Every JSON the tool writes is strict JSON with numbers as numbers: no "inf"/"nan" strings, no
Infinity/NaN literals; a missing or infinite figure is null, with its reason in ``nulls``.  The
certificate reads back into the typed `Certificate` and follows its schema's keys."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tasksolve.solver.certify.certificate import FORMAT_VERSION, Certificate, certificate_schema
from tasksolve.solver.cli import main
from tests.certify.test_pipeline_run import TINY

BAD_STRINGS = {"inf", "-inf", "+inf", "nan", "infinity", "-infinity"}


def strict(text: str):
    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def walk(value, where="$"):
    """Every (path, value) of a JSON value."""
    yield where, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from walk(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from walk(item, f"{where}[{i}]")


def check(data, what: str) -> None:
    for where, value in walk(data):
        assert not (isinstance(value, str) and value.strip().lower() in BAD_STRINGS), f"{what}: {where} = {value!r}"
        if isinstance(value, dict) and "nulls" in value:
            for key in value["nulls"]:
                base = key.split("[")[0]
                assert base in value, f"{what}: {where}.nulls names {key!r}, which is not a field"


def check_files(out: Path) -> int:
    count = 0
    for path in sorted(out.rglob("*.json")) + sorted(out.rglob("*.jsonl")):
        lines = path.read_text().splitlines() if path.suffix == ".jsonl" else [path.read_text()]
        for line in lines:
            if line.strip():
                check(strict(line), str(path))
                count += 1
    return count


def run(capsys, *args) -> tuple[int, dict]:
    code = main(list(args))
    text = capsys.readouterr().out
    return code, strict(text)


def answered(data: dict, code: int, expected: int, *fields: str) -> None:
    """The command exited with its documented code (README.md, "Exit codes") and printed an answer,
    not an ``{"error": ...}`` object: no "error" key, and every field a person reads is there."""
    assert code == expected, (code, data.get("error"))
    assert "error" not in data
    missing = [name for name in fields if data.get(name) is None]
    assert not missing, f"missing or null: {missing}"


def test_run_and_certify_write_no_infinity_strings(tmp_path, capsys):
    out = tmp_path / "run"
    code, data = run(
        capsys, "run", "t2-ipfwd-intadd-x2", "--out", str(out), "--oracle", "analytic", "--samples", "200",
        "--time-limit", "5", "--workers", "1", "--methods", "cpsat", "--compare-samples", "50", "--deterministic",
        "--json",
    )  # fmt: skip
    check(data, "run --json")
    # `proven`, exit 0: CP-SAT proves the closed form's optimum (10.94 Mpps; OPTIMAL within its 5 s of
    # deterministic time) and the plan is that optimum, on the closed form it is measured on
    answered(data, code, 0, "verdict", "certificate", "solve", "files")
    assert data["verdict"] == data["certificate"]["verdict"] == "proven"
    assert data["solve"]["status"] == "OPTIMAL" and data["solve"]["objective"] == pytest.approx(10_937_500)
    assert check_files(out) > 200  # certificate.json and every line of both samples files
    cert = strict((out / "certificate.json").read_text())
    assert cert["format"] == FORMAT_VERSION and code == cert["exit_code"] == 0
    assert cert["sentence"].startswith("proven:")
    typed = Certificate.from_dict(cert)
    assert typed.verdict == cert["verdict"] and typed.samples.n == cert["samples"]["n"] == 200
    assert set(cert) <= set(certificate_schema()["properties"])
    # every one of the 200 local optima ends on the optimum: an atom, whose interval is open above --
    # null, and the reason says so
    assert cert["optimum"]["top_atom"]["hits"] == 200
    assert cert["optimum"]["upper"] is None and "open" in cert["optimum"]["nulls"]["upper"]

    out = tmp_path / "certify"
    code, data = run(
        capsys, "certify", "t2-ipfwd-intadd-x2", "--out", str(out), "--oracle", "analytic", "--samples", "100",
        "--design", "random", "--compare-samples", "0", "--json",
    )  # fmt: skip
    check(data, "certify --json")
    # `not_certified`, exit 1: without --plan the plan is the best of 100 random plans (9.50 Mpps),
    # 13% below the optimum (10.94 Mpps) that CP-SAT proves and the local-search probe reaches
    answered(data, code, 1, "verdict", "sentence", "plan", "plan_performance", "samples", "optimum", "gap")
    assert data["verdict"] == "not_certified" and data["exit_code"] == 1
    assert data["sentence"].startswith("not certified:") and data["samples"]["n"] == 100
    assert data["gap"]["proven_optimum"] < -0.05
    check_files(out)


def test_evt_solve_pipeline_simulate_and_schema_json(tmp_path, capsys):
    heavy = tmp_path / "heavy.txt"
    np.savetxt(heavy, stats.pareto(2.0).rvs(2000, random_state=np.random.default_rng(0)))
    code, data = run(capsys, "evt", str(heavy), "--json", "--gof-bootstrap", "0")
    check(data, "evt --json")
    answered(data, code, 0, "n", "optimum", "flags")  # an analysis, whatever its tail: exit 0
    assert data["n"] == 2000
    assert data["optimum"]["upper"] is None and data["optimum"]["nulls"]["upper"]

    code, data = run(
        capsys, "solve", "t2-ipfwd-intadd-x2", "--time-limit", "5", "--workers", "1", "--deterministic", "--json"
    )
    check(data, "solve --json")
    # exit 0: no solver step failed; CP-SAT proves the optimum and the simulation confirms it
    answered(data, code, 0, "method", "status", "objective", "plan", "simulated", "comparison")
    assert data["status"] == "OPTIMAL" and data["failed_steps"] == []
    assert data["objective"] == pytest.approx(10_937_500)
    assert data["simulated"]["throughput"]["total"] == pytest.approx(10_937_500, rel=1e-6)
    assert len(data["plan"]["bindings"]) == 6

    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY)
    code, data = run(capsys, "pipeline", str(spec), "--time-limit", "5", "--json", "--out", str(tmp_path / "pipe"))
    check(data, "pipeline --json")
    # exit 0: the chosen plan (CP-SAT's, 0.75 us) meets the 0.8 us latency bound (exit 1 if it missed it)
    answered(data, code, 0, "method", "status", "throughput", "latency", "meets_bound", "plan")
    assert data["meets_bound"] is True and data["latency"] <= data["latency_max"]
    assert data["method"] == "cpsat" and data["throughput"] > 0

    code, data = run(capsys, "simulate", "t2-ipfwd-intadd-x2", "--json")
    check(data, "simulate --json")
    answered(data, code, 0, "oracle", "throughput", "latency", "threads", "plan")
    assert data["oracle"] == "des" and data["throughput"]["total"] > 0 and len(data["threads"]) == 6

    code = main(["schema", "--certificate"])
    schema = strict(capsys.readouterr().out)
    assert code == 0 and set(schema["properties"]["verdict"]["enum"]) >= {"proven", "best_found", "refuted"}


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_figure_is_null_with_a_reason(value):
    from tasksolve.specs.files import json_text

    data = strict(json_text({"a": {"x": value, "xs": [1.0, value]}}))
    assert data["a"]["x"] is None and data["a"]["xs"] == [1.0, None]
    assert data["a"]["nulls"]["x"] and data["a"]["nulls"]["xs[1]"]


def test_the_one_conversion_nulls_every_non_finite_number_and_keeps_the_rest():
    from tasksolve.specs.files import finite_or_none, json_text, plain

    class Typed:
        def to_dict(self):
            return {"typed": True}

    value = {"a": float("inf"), "b": [np.float64(2.5), float("nan")], "c": Typed(), "d": np.int64(3), "e": "inf"}
    assert plain(value) == {"a": None, "b": [2.5, None], "c": {"typed": True}, "d": 3, "e": "inf"}
    written = strict(json_text({"a": float("-inf"), "b": [1.0, float("nan")]}))
    assert written == {
        "a": None,
        "b": [1.0, None],
        "nulls": {"a": "-infinity: no finite value", "b[1]": "not a number: the figure could not be computed"},
    }
    assert [finite_or_none(x) for x in (None, True, "x", "2", float("inf"), np.float32(1.5))] == [
        None,
        None,
        None,
        2.0,
        None,
        1.5,
    ]
