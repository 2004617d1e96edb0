"""The spec fields of NPIRE's transformations (`critical`, `signal`): values, round trips, the
JSON Schema and one located message per mistake (NPIRE §2.4, §2.6, §2.7)."""

from __future__ import annotations

import pytest

from tasksolve.solver.cli import main
from tasksolve.specs import SpecError, dump_spec, load_spec, load_spec_text
from tasksolve.specs.schema import spec_json_schema

SPEC = """tasksolve: 1
name: t
topology: ultrasparc-t2
problem: binding
applications:
  a:
    tasks:
      x: {cycles: 200, %s}
      y: {cycles: 100, %s}
    edges: [{from: x, to: y}]
workload: [{app: a}]
"""


def test_critical_cycles_as_a_number_a_share_or_the_whole_task():
    spec = load_spec_text(SPEC % ("critical: {lock: t, cycles: 25%}", "critical: {lock: t}"))
    tasks = spec.applications["a"].tasks
    assert tasks["x"].critical_cycles == 50 and tasks["y"].critical_cycles == 100
    assert tasks["x"].critical.rollback == 40  # NPIRE Table 3
    again = load_spec_text(dump_spec(spec))
    assert again.applications["a"].tasks == spec.applications["a"].tasks


def test_no_fields_no_change():
    spec = load_spec("t2-npire-router")
    assert all(t.critical is None and t.signal is None for t in spec.applications["router"].tasks.values())
    assert spec.applications["router"].tasks["eth_rx"].critical_cycles == 0.0


@pytest.mark.parametrize(
    "x, y, line, fragments",
    [
        ("signal: 50%", "critical: {lock: t, cycles: 130}", 9, ["tasks.y.critical.cycles", "longer than the task"]),
        (
            "signal: 90%, critical: {lock: t, cycles: 30%}",
            "description: d",
            8,
            ["tasks.x.signal", "inside the critical"],
        ),
        ("description: d", "signal: 20%", 9, ["tasks.y.signal", "exit task"]),
        ("critical: {lock: t, speculate: 100%}", "description: d", 8, ["critical.speculate", "always fails"]),
        ("critical: {lock: t, cycles: 3x}", "description: d", 8, ["critical.cycles", "`25%`"]),
        ("critical: {lok: t}", "description: d", 8, ["critical.lok", "did you mean `lock`"]),
        ("critical: {lock: t, rollback: -1}", "description: d", 8, ["critical.rollback"]),
    ],
)
def test_one_located_message_per_mistake(x, y, line, fragments):
    with pytest.raises(SpecError) as info:
        load_spec_text(SPEC % (x, y))
    text = str(info.value)
    assert f":{line}:" in text
    for fragment in fragments:
        assert fragment in text


def test_a_mistake_exits_2_without_a_traceback(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(SPEC % ("description: d", "signal: 20%"))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "exit task" in err and "Traceback" not in err


def test_the_schema_describes_the_fields():
    schema = spec_json_schema()
    text = str(schema)
    assert "Critical" in text and "speculate" in text and "signal" in text
