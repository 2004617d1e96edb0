"""The spec commands end to end: validate, count, examples, schema, --version, --help."""

from __future__ import annotations

import json

import pytest
import yaml

from solver.cli import main
from specs import builtin_names, load_spec


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_example_validates(capsys):
    names = builtin_names("")
    assert len(names) >= 10
    code, out, err = run(capsys, "validate", *names)
    assert code == 0, err
    assert out.count("ok ") == len(names)


def test_validate_json(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("tasksolve: 1\nname: x\n")
    code, out, _ = run(capsys, "validate", "t2-ipfwd-l1-x2", str(bad), "--json")
    assert code == 2
    results = json.loads(out)
    assert [r["valid"] for r in results] == [True, False]
    assert results[0]["summary"]["threads"] == 6
    error = results[1]["errors"][0]
    assert error["file"] == str(bad) and error["line"] == 1 and "missing required field" in error["message"]


def test_count_json_keys_and_values(capsys):
    code, out, _ = run(capsys, "count", "t2-ipfwd-intadd-x2", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["threads"] == 6 and result["contexts"] == 64
    assert result["placements"] == 64 * 63 * 62 * 61 * 60 * 59
    assert result["distinct_placements"] == 1526


def test_count_respects_usable_contexts(capsys):
    code, out, _ = run(capsys, "count", "t2-constrained", "--json")
    result = json.loads(out)
    assert result["contexts"] == 12
    assert result["placements"] == 12 * 11 * 10 * 9 * 8 * 7


def test_count_is_instant_for_64_threads(capsys, tmp_path):
    spec = tmp_path / "full.yaml"
    spec.write_text(yaml.safe_dump({
        "tasksolve": 1, "name": "full", "topology": "ultrasparc-t2",
        "applications": {"ipfwd": "ipfwd-l1"}, "workload": [{"app": "ipfwd", "instances": 21}],
    }) + "")
    code, out, _ = run(capsys, "count", str(spec), "--json")
    assert code == 0
    assert json.loads(out)["threads"] == 63


def test_examples_copy(capsys, tmp_path):
    code, out, _ = run(capsys, "examples", "t2-ipfwd-l1-x2", "--copy", str(tmp_path))
    assert code == 0
    copied = tmp_path / "t2-ipfwd-l1-x2.yaml"
    assert load_spec(copied) == load_spec("t2-ipfwd-l1-x2")


def test_examples_unknown_name(capsys):
    code, _, err = run(capsys, "examples", "t2-ipfwd-l3-x2")
    assert code == 2
    assert "did you mean" in err


def test_examples_json(capsys):
    code, out, _ = run(capsys, "examples", "--json")
    data = json.loads(out)
    assert "ultrasparc-t2" in data["topologies"]
    assert {row["name"] for row in data["specs"]} == set(builtin_names(""))


def test_schema_describes_the_format(capsys):
    code, out, _ = run(capsys, "schema")
    schema = json.loads(out)
    assert code == 0
    assert set(schema["required"]) >= {"tasksolve", "name", "topology", "applications", "workload"}
    assert "Topology" in schema["$defs"]
    assert schema["properties"]["topology"]["anyOf"][0]["type"] == "string"


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("tasksolve ")


@pytest.mark.parametrize("command", ["validate", "count", "examples", "schema"])
def test_help(capsys, command):
    code, out, _ = run(capsys, command, "--help")
    assert code == 0 and "Usage" in out
