"""Spec inputs that used to crash, pass silently or mislead (each case failed before its fix)."""

from __future__ import annotations

import pytest

from tasksolve.specs import load_spec, load_spec_text
from tasksolve.specs.errors import SpecError, SpecsError

BASE = """tasksolve: 1
name: x
topology:
  name: t
  clock: {clock}
  levels: [{{name: core, count: 2}}, {{name: strand, count: 2}}]
  resources: [{{name: ifu, level: core, capacity: 1.0}}]
  communication: {{core: {comm}, machine: 40}}
applications:
  app:
    tasks:
      A: {{cycles: {cycles}, demand: {{ifu: {demand}}}}}
      B: {{cycles: 100, demand: {{ifu: 0.5}}}}
    edges: [{{from: A, to: B, bytes: {size}}}]
workload: [{{app: app, instances: 1}}]
search: {{time_limit: {limit}}}
"""
GOOD = dict(clock="1.4GHz", comm=6, cycles=300, demand=0.4, size="64B", limit="30s")


def spec_text(**changes) -> str:
    return BASE.format(**{**GOOD, **changes})


def error_of(text: str) -> str:
    with pytest.raises(SpecsError) as info:
        load_spec_text(text, "spec.yaml")
    message = str(info.value)
    assert "spec.yaml" in message and len(message) < 2000
    return message


def test_the_base_spec_loads():
    assert load_spec_text(spec_text(), "spec.yaml").applications["app"].tasks["A"].cycles == 300


@pytest.mark.parametrize(
    "change, expected",
    [
        (dict(cycles="1e308"), "cycles"),
        (dict(cycles=".inf"), "finite"),
        (dict(size="1e300GiB"), "out of range"),
        (dict(clock="1e308THz"), "out of range"),
        (dict(limit="1e308h"), "out of range"),
        (dict(comm=".inf"), "finite"),
        (dict(cycles="9" * 5000), "cannot convert"),
    ],
)
def test_values_outside_the_documented_ranges_are_refused(change, expected):
    assert expected in error_of(spec_text(**change))


def test_a_clock_without_unit_gets_a_suggestion():
    message = error_of(spec_text(clock="1.4"))
    assert "did you mean `1.4GHz`?" in message and ":5:" in message


def test_shares_accept_percent():
    spec = load_spec_text(spec_text(demand="40%"), "spec.yaml")
    assert spec.applications["app"].tasks["A"].demand["ifu"] == pytest.approx(0.4)


def test_oracle_settings_that_make_no_sense():
    base = spec_text()
    assert "greater than 0" in error_of(base + "oracle: {precision: 0}\n")
    assert "needs a `rate`" in error_of(base + "oracle: {arrival: {process: poisson}}\n")


@pytest.mark.parametrize(
    "text, line, expected",
    [
        ("tasksolve: 1\nname x\ntopology: t2\n", 2, "could not find expected ':'"),
        ("tasksolve: 1\nname: x\n\tworkload: []\n", 3, "tabs"),
        ("tasksolve: 1\nname: \x00x\n", 2, "U+0000"),
        ("tasksolve: 1\nname: \x1b[31mred\n", 2, "U+001B"),
        ("tasksolve: 1\nname: !!int x\n", 2, "cannot convert"),
        ("tasksolve: 1\nname: !!timestamp x\n", 2, "cannot convert"),
        ("tasksolve: 1\nname: " + "[" * 600 + "]" * 600 + "\n", None, "nested too deeply"),
    ],
)
def test_yaml_failures_are_one_located_message(text, line, expected):
    message = error_of(text)
    assert expected in message, message
    if line is not None:
        assert f"spec.yaml:{line}:" in message, message


def test_an_alias_bomb_message_stays_small_and_quick():
    anchor = "a0: &a0 [" + ", ".join(["x" * 20] * 1000) + "]\n"
    layers = "".join(f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]\n" for i in range(1, 30))
    message = error_of("tasksolve: 1\n" + anchor + layers + "name: *a29\n")
    assert "too large" in message


def test_a_huge_value_in_a_wrong_place_is_not_echoed():
    message = error_of(spec_text() + "objective: " + "x" * 100_000 + "\n")
    assert "x" * 200 not in message


def test_names_with_terminal_escapes_are_refused():
    message = error_of(spec_text().replace("  app:\n", '  "app\\e[2J":\n').replace("{app: app,", '{app: "app\\e[2J",'))
    assert "\x1b" not in message


def test_a_spec_error_is_a_specs_error():
    assert issubclass(SpecError, SpecsError)


def test_unreadable_files(tmp_path):
    with pytest.raises(SpecsError, match="directory"):
        load_spec(tmp_path)
    with pytest.raises(SpecsError):
        load_spec(tmp_path / ("x" * 300 + ".yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(SpecsError, match="UTF-8"):
        load_spec(bad)


def write_spec(folder, topology_ref: str):
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "spec.yaml"
    spec.write_text(
        f"tasksolve: 1\nname: x\ntopology: {topology_ref}\napplications: {{a: ipfwd-l1}}\nworkload: [{{app: a}}]\n"
    )
    return spec


def test_references_stay_inside_the_spec_folder(tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: hunter2\n")
    spec = write_spec(tmp_path / "project", "../secret.yaml")
    with pytest.raises(SpecsError) as info:
        load_spec(spec)
    assert "outside the spec's directory" in str(info.value) and "hunter2" not in str(info.value)
    link = tmp_path / "project" / "topo.yaml"
    link.symlink_to(secret)
    spec = write_spec(tmp_path / "project", "topo.yaml")
    with pytest.raises(SpecsError, match="outside the spec's directory"):
        load_spec(spec)
    # allowed explicitly, the file is read (and is not a topology)
    with pytest.raises(SpecsError) as info:
        load_spec(spec, allow_outside=True)
    assert "outside" not in str(info.value)


def test_references_inside_the_folder_and_builtins_load(tmp_path):
    from tasksolve.specs.loader import builtin_path

    (tmp_path / "hw").mkdir()
    (tmp_path / "hw" / "t2.yaml").write_text(builtin_path("topologies", "ultrasparc-t2").read_text())
    assert load_spec(write_spec(tmp_path, "hw/t2.yaml")).topology.n_contexts == 64
    assert load_spec(write_spec(tmp_path, "ultrasparc-t2")).topology.n_contexts == 64


def test_the_cli_option_allows_outside_references(tmp_path, capsys):
    from tasksolve.solver.cli import main
    from tasksolve.specs.loader import builtin_path

    (tmp_path / "t2.yaml").write_text(builtin_path("topologies", "ultrasparc-t2").read_text())
    spec = write_spec(tmp_path / "sub", "../t2.yaml")
    assert main(["validate", str(spec)]) == 2
    assert main(["--allow-outside-references", "validate", str(spec)]) == 0
    capsys.readouterr()


def test_a_mistyped_example_name_gets_a_suggestion(capsys):
    from tasksolve.solver.cli import main

    assert main(["count", "t2-ipfwd-intad-x2"]) == 2
    err = capsys.readouterr().err
    assert "did you mean `t2-ipfwd-intadd-x2`?" in err
