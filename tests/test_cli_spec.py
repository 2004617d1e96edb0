"""The spec commands end to end: validate, count, examples, schema, --version, --help."""

from __future__ import annotations

import json

import pytest
import yaml

from tasksolve.solver.cli import main
from tasksolve.specs import builtin_names, load_spec


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
    spec.write_text(
        yaml.safe_dump(
            {
                "tasksolve": 1,
                "name": "full",
                "topology": "ultrasparc-t2",
                "applications": {"ipfwd": "ipfwd-l1"},
                "workload": [{"app": "ipfwd", "instances": 21}],
            }
        )
        + ""
    )
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
    assert {row["name"] for row in data["specs"]} == set(builtin_names(""))
    assert {row["name"] for row in data["topologies"]} == set(builtin_names("topologies"))
    assert {row["name"] for row in data["applications"]} == set(builtin_names("apps"))
    t2 = next(row for row in data["topologies"] if row["name"] == "ultrasparc-t2")
    assert t2["contexts"] == 64 and t2["levels"] == ["core", "pipe", "strand"]


@pytest.mark.parametrize(
    "name, folder", [("ultrasparc-t2", "topologies"), ("npire-router", "apps"), ("t2-constrained", "")]
)
def test_examples_shows_every_kind_verbatim(capsys, name, folder):
    from tasksolve.specs.loader import builtin_path

    code, out, _ = run(capsys, "examples", name)
    assert code == 0 and out == builtin_path(folder, name).read_text()


def test_examples_suggests_across_kinds(capsys):
    code, _, err = run(capsys, "examples", "ultrasparc-t3")
    assert code == 2 and "did you mean `ultrasparc-t2`?" in err
    code, _, err = run(capsys, "examples", "ipfwd-intaddd")
    assert code == 2 and "did you mean `ipfwd-intadd`?" in err


def test_examples_copy_keeps_an_edited_file_unless_forced(capsys, tmp_path):
    from tasksolve.specs.loader import builtin_path

    original = builtin_path("topologies", "ultrasparc-t2").read_text()
    target = tmp_path / "topologies" / "ultrasparc-t2.yaml"
    assert run(capsys, "examples", "ultrasparc-t2", "--copy", str(tmp_path))[0] == 0
    assert target.read_text() == original
    code, out, _ = run(capsys, "examples", "ultrasparc-t2", "--copy", str(tmp_path))  # same content: fine
    assert code == 0 and "unchanged" in out
    target.write_text(original.replace("count: 8", "count: 4"))
    code, out, err = run(capsys, "examples", "ultrasparc-t2", "--copy", str(tmp_path))
    assert code == 2 and "--force" in err and str(target) in err
    assert "count: 4" in target.read_text()
    code, out, _ = run(capsys, "examples", "ultrasparc-t2", "--copy", str(tmp_path), "--force", "--json")
    assert code == 0 and json.loads(out)["copied"] == [{"file": str(target), "state": "overwritten"}]
    assert target.read_text() == original


def test_examples_copy_all_refuses_before_writing_anything(capsys, tmp_path):
    edited = tmp_path / "t2-constrained.yaml"
    edited.write_text("# mine\n")
    code, _, err = run(capsys, "examples", "--copy", str(tmp_path))
    assert code == 2 and "t2-constrained.yaml" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["t2-constrained.yaml"]


def test_validate_reads_topologies_and_applications(capsys, tmp_path):
    from tasksolve.specs.loader import builtin_path

    names = builtin_names("topologies") + builtin_names("apps")
    code, out, err = run(capsys, "validate", *names)
    assert code == 0, err
    assert out.count("ok ") == len(names)
    topo = tmp_path / "topo.yaml"
    topo.write_text(builtin_path("topologies", "ultrasparc-t2").read_text().replace("level: pipe", "level: pipee"))
    app = tmp_path / "app.yaml"
    app.write_text("tasks:\n  A: {cycles: 10}\n  B: {cycles: 10}\nedges:\n  - {from: A, to: B}\n  - {from: B, to: A}\n")
    other = tmp_path / "other.yaml"
    other.write_text("hello: world\n")
    code, out, err = run(capsys, "validate", str(topo), str(app), str(other), "--json")
    results = json.loads(out)
    assert code == 2 and [r["valid"] for r in results] == [False, False, False]
    assert "did you mean `pipe`?" in results[0]["errors"][0]["message"] and results[0]["errors"][0]["line"]
    assert "cycle" in results[1]["errors"][0]["message"] and results[1]["errors"][0]["line"] == 5
    assert "not a spec, a topology or an application" in results[2]["errors"][0]["message"]
    code, out, _ = run(capsys, "validate", "ultrasparc-t2", "--json")
    assert json.loads(out)[0]["kind"] == "topology" and json.loads(out)[0]["summary"]["contexts"] == 64


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
