"""A table of invalid specs: each must fail with file:line:column, the field and the wording."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tasksolve.solver.cli import main
from tasksolve.specs import SpecError, load_spec

BASE = """\
tasksolve: 1
name: test
topology: ultrasparc-t2
applications:
  ipfwd:
    tasks:
      R: {cycles: 180, demand: {ifu: 0.4}}
      P: {cycles: 600, demand: {ifu: 0.9}, idle_demand: {ifu: 0.3}}
      T: {cycles: 170, demand: {ifu: 0.4}}
    edges:
      - {from: R, to: P, bytes: 64B}
      - {from: P, to: T, bytes: 64B}
workload:
  - {app: ipfwd, instances: 2}
constraints:
  contexts: ["core0", "core1.pipe0"]
  pin: {"ipfwd#0.R": "core0.pipe0.strand0"}
  max_threads: {core: 6}
  latency_max: 3us
objective: total_throughput
"""


def variant(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


# (id, text, expected line, substrings of the message)
CASES = [
    (
        "unknown-resource",
        variant("demand: {ifu: 0.4}}\n      P", "demand: {ifuu: 0.4}}\n      P"),
        7,
        ["applications.ipfwd.tasks.R.demand.ifuu", "unknown resource `ifuu`", "did you mean `ifu`?"],
    ),
    (
        "unknown-field",
        variant("      R: {cycles: 180,", "      R: {cycels: 180, cycles: 180,"),
        7,
        ["unknown field `cycels`", "did you mean `cycles`?"],
    ),
    (
        "missing-cycles",
        variant("R: {cycles: 180, demand: {ifu: 0.4}}", "R: {demand: {ifu: 0.4}}"),
        7,
        ["applications.ipfwd.tasks.R", "missing required field `cycles`"],
    ),
    ("negative-cycles", variant("cycles: 600", "cycles: -600"), 8, ["tasks.P.cycles", "must be positive"]),
    (
        "demand-out-of-range",
        variant("demand: {ifu: 0.9}", "demand: {ifu: 1.5}"),
        8,
        ["tasks.P.demand.ifu", "between 0 and 1"],
    ),
    ("text-cycles", variant("cycles: 170", "cycles: lots"), 9, ["tasks.T.cycles", "valid number", "'lots'"]),
    ("bool-instances", variant("instances: 2", "instances: yes"), 14, ["workload[0].instances", "not true/false"]),
    (
        "zero-instances",
        variant("instances: 2", "instances: 0"),
        14,
        ["workload[0].instances", "greater than or equal to 1"],
    ),
    (
        "unknown-edge-task",
        variant("{from: P, to: T, bytes: 64B}", "{from: P, to: X, bytes: 64B}"),
        12,
        ["edges[1].to", "unknown task `X`"],
    ),
    (
        "cycle",
        variant(
            "      - {from: P, to: T, bytes: 64B}\n", "      - {from: P, to: T, bytes: 64B}\n      - {from: T, to: P}\n"
        ),
        11,
        ["has a cycle: ", "P -> T -> P"],
    ),
    ("two-entries", variant("      - {from: R, to: P, bytes: 64B}\n", ""), 7, ["exactly one entry task", "R, P"]),
    (
        "self-edge",
        variant("{from: P, to: T, bytes: 64B}", "{from: P, to: P, bytes: 64B}"),
        12,
        ["edge from `P` to itself"],
    ),
    (
        "unit-typo",
        variant("bytes: 64B}\n      - {from: P", "bytes: 64Bytes}\n      - {from: P"),
        11,
        ["edges[0].bytes", "unknown unit `Bytes`"],
    ),
    (
        "latency-unit",
        variant("latency_max: 3us", "latency_max: 3uss"),
        19,
        ["constraints.latency_max", "unknown unit `uss`", "did you mean `us`?"],
    ),
    ("wrong-version", variant("tasksolve: 1", "tasksolve: 2"), 1, ["unsupported format version 2"]),
    ("missing-version", variant("tasksolve: 1\n", ""), None, ["missing `tasksolve: 1`"]),
    (
        "unknown-app",
        variant("{app: ipfwd, instances: 2}", "{app: ipfdw, instances: 2}"),
        14,
        ["workload[0].app", "unknown application `ipfdw`", "did you mean `ipfwd`?"],
    ),
    (
        "unknown-topology",
        variant("topology: ultrasparc-t2", "topology: ultrasparc-t3"),
        3,
        ["unknown built-in topology `ultrasparc-t3`", "did you mean `ultrasparc-t2`?"],
    ),
    (
        "missing-topology-file",
        variant("topology: ultrasparc-t2", "topology: boxes/none.yaml"),
        3,
        ["file `boxes/none.yaml` not found"],
    ),
    (
        "unknown-domain",
        variant('contexts: ["core0", "core1.pipe0"]', 'contexts: ["core0", "core1.pipr0"]'),
        16,
        ["constraints.contexts[1]", "unknown level `pipr`", "did you mean `pipe`?"],
    ),
    (
        "domain-out-of-range",
        variant('contexts: ["core0", "core1.pipe0"]', 'contexts: ["core9"]'),
        16,
        ["core index 9 is out of range (core0..core7)"],
    ),
    (
        "pin-nonexistent-context",
        variant('"core0.pipe0.strand0"}', '"core0.pipe0.strand7"}'),
        17,
        ["constraints.pin.ipfwd#0.R", "strand index 7 is out of range"],
    ),
    (
        "pin-outside-contexts",
        variant('"core0.pipe0.strand0"}', '"core5.pipe0.strand0"}'),
        17,
        ["outside constraints.contexts"],
    ),
    ("pin-to-domain", variant('"core0.pipe0.strand0"}', '"core0.pipe0"}'), 17, ["is a domain, not a hardware context"]),
    (
        "two-pins-one-context",
        variant(
            'pin: {"ipfwd#0.R": "core0.pipe0.strand0"}',
            'pin: {"ipfwd#0.R": "core0.pipe0.strand0", "ipfwd#1.R": "core0.pipe0.strand0"}',
        ),
        17,
        ["already the pin of `ipfwd#0.R`"],
    ),
    ("pin-unknown-thread", variant('pin: {"ipfwd#0.R"', 'pin: {"ipfwd#2.R"'), 17, ["ipfwd has 2 instance(s)"]),
    (
        "pin-bad-thread-name",
        variant('pin: {"ipfwd#0.R"', 'pin: {"ipfwd.R"'),
        17,
        ["not a thread name of the form `app#instance.task`"],
    ),
    (
        "forbidden-pin",
        variant("  max_threads", '  forbid: {"ipfwd#0.R": ["core0.pipe0"]}\n  max_threads'),
        17,
        ["which constraints.forbid excludes for it"],
    ),
    (
        "cap-unknown-level",
        variant("max_threads: {core: 6}", "max_threads: {cores: 6}"),
        18,
        ["unknown level `cores`", "did you mean `core`?"],
    ),
    (
        "too-many-threads",
        variant('contexts: ["core0", "core1.pipe0"]', 'contexts: ["core0.pipe0"]'),
        14,
        ["6 threads but only 4 usable hardware contexts"],
    ),
    (
        "bad-objective",
        variant("objective: total_throughput", "objective: throughput"),
        20,
        ["objective", "'total_throughput'", "got 'throughput'"],
    ),
    ("yaml-syntax", variant("  ipfwd:\n", "  ipfwd:\n   - bad\n"), 7, ["YAML syntax error"]),
    (
        "duplicate-key",
        variant("objective: total_throughput", "objective: total_throughput\nobjective: latency"),
        21,
        ["duplicate key `objective` (first given on line 20)"],
    ),
    ("not-a-mapping", "- just\n- a list\n", 1, ["a spec is a mapping"]),
    (
        "tasks-not-mapping",
        variant("    tasks:\n      R:", "    tasks: 5\n    xtasks:\n      R:"),
        6,
        ["applications.ipfwd.tasks", "expected a mapping"],
    ),
    ("empty-file", "", None, ["the file is empty"]),
    ("comments-only", "# nothing\n", None, ["holds no YAML document"]),
]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def test_table_is_large_and_distinct():
    assert len(CASES) >= 25
    assert len({text for _, text, _, _ in CASES}) == len(CASES)


def test_base_spec_is_valid(tmp_path):
    spec = load_spec(_write(tmp_path, BASE))
    assert len(spec.threads) == 6


@pytest.mark.parametrize("case_id,text,line,fragments", CASES, ids=[c[0] for c in CASES])
def test_invalid_spec_message(tmp_path, case_id, text, line, fragments):
    path = _write(tmp_path, text)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    first = info.value.lines()[0]
    assert first.startswith(str(path)), first
    if line is not None:
        assert re.match(rf"^{re.escape(str(path))}:{line}:\d+: ", first), first
    for fragment in fragments:
        assert fragment in first, (fragment, first)


@pytest.mark.parametrize("case_id,text,line,fragments", CASES[:8], ids=[c[0] for c in CASES[:8]])
def test_cli_reports_one_message_and_exit_2(tmp_path, capsys, case_id, text, line, fragments):
    path = _write(tmp_path, text)
    code = main(["validate", str(path)])
    captured = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in captured.err
    assert captured.err.strip().startswith(str(path))
    assert fragments[-1] in " ".join(captured.err.split())


def test_problem_in_referenced_file_names_that_file(tmp_path):
    (tmp_path / "box.yaml").write_text("name: box\nclock: 1GHzz\nlevels:\n  - {name: core, count: 2}\n")
    spec_path = _write(tmp_path, BASE.replace("topology: ultrasparc-t2", "topology: box.yaml"))
    with pytest.raises(SpecError) as info:
        load_spec(spec_path)
    first = info.value.lines()[0]
    assert first.startswith(f"{tmp_path / 'box.yaml'}:2:8: clock:"), first
    assert "unknown unit `GHzz`" in first


def test_recursive_topology_reference(tmp_path):
    (tmp_path / "a.yaml").write_text("base: b.yaml\nname: a\n")
    (tmp_path / "b.yaml").write_text("base: a.yaml\nname: b\n")
    spec_path = _write(tmp_path, BASE.replace("topology: ultrasparc-t2", "topology: a.yaml"))
    with pytest.raises(SpecError) as info:
        load_spec(spec_path)
    assert "recursive topology references: a.yaml -> b.yaml -> a.yaml" in str(info.value)


def test_topology_base_overrides(tmp_path):
    (tmp_path / "small.yaml").write_text(
        "base: ultrasparc-t2\nname: T2 with two cores\nlevels:\n  - {name: core, count: 2}\n"
        "  - {name: pipe, count: 2}\n  - {name: strand, count: 4}\n"
    )
    spec = load_spec(_write(tmp_path, BASE.replace("topology: ultrasparc-t2", "topology: small.yaml")))
    assert spec.topology.n_contexts == 16
    assert spec.topology.clock == 1.4e9
    assert "fgu" in spec.topology.resource_names


def test_alias_bomb_is_refused(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    path = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(SpecError, match="too large once its aliases are expanded"):
        load_spec(path)


def test_gigantic_file_is_refused(tmp_path):
    path = _write(tmp_path, "# " + "x" * (5 * 1024 * 1024) + "\n")
    with pytest.raises(SpecError, match="too large"):
        load_spec(path)


def test_missing_file(tmp_path, capsys):
    code = main(["validate", str(tmp_path / "nope.yaml")])
    assert code == 2
    assert "no such file" in capsys.readouterr().err
