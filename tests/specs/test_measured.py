"""Units people measure: capacities in GB/s, Gb/s, MiB and Mpps, demands in bytes and packets
(`specs.measured`), and sizes that must carry their unit in a spec file."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from tasksolve.simulate import evaluate
from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.solver.cli import main
from tasksolve.specs import Plan, SpecError, dump_spec, load_spec_text
from tasksolve.specs import strategies as spec_st
from tasksolve.specs.application import Application, Edge
from tasksolve.specs.measured import Measured, explain
from tasksolve.specs.schema import spec_json_schema
from tasksolve.specs.units import UnitError, parse_measured_capacity, parse_measured_demand

# membw: 25000 B per packet of a 1000-cycle task at 2 GHz = 50 GB/s = 0.25 of 200 GB/s (exact in
# binary floating point, so the twin below writes the same numbers); l2: 20 MiB of 32 MiB = 0.625.
MEASURED = """
tasksolve: 1
name: measured
topology:
  name: box
  clock: 2GHz
  levels: [{name: core, count: 4}, {name: strand, count: 4}]
  resources:
    - {name: membw, level: machine, capacity: 200GB/s}
    - {name: l2, level: core, capacity: 32MiB}
    - {name: nic, level: machine, capacity: 16Mpps}
  communication: {core: 2, machine: 120}
applications:
  fwd:
    tasks:
      R: {cycles: 500, demand: {nic: 1packet, membw: 12500B}}
      P: {cycles: 1000, demand: {membw: 25000B, l2: 20MiB}, idle_demand: {l2: 4MiB}}
      T: {cycles: 250, frequency: 2, demand: {nic: 2packets, l2: 8MiB}}
    edges: [{from: R, to: P, bytes: 64B}, {from: P, to: T, bytes: 1KiB}]
workload: [{app: fwd, instances: 3}]
oracle: {kind: analytic}
"""

# the same spec converted by hand: shares of unitless capacities
TWIN = (
    MEASURED.replace("capacity: 200GB/s", "capacity: 1")
    .replace("capacity: 32MiB", "capacity: 1")
    .replace("capacity: 16Mpps", "capacity: 1")
    .replace("{nic: 1packet, membw: 12500B}", "{nic: 0.25, membw: 0.25}")  # 4 Mpps of 16; 50 GB/s of 200
    .replace("{membw: 25000B, l2: 20MiB}", "{membw: 0.25, l2: 0.625}")
    .replace("{l2: 4MiB}", "{l2: 0.125}")
    .replace("{nic: 2packets, l2: 8MiB}", "{nic: 0.5, l2: 0.25}")  # 2 x 2 GHz / 500 cycles = 8 Mpps of 16
)


def _spec(text: str):
    return load_spec_text(text, "measured.yaml")


# ------------------------------------------------------------------------------ units
def test_measured_capacities_and_demands_parse_to_their_base_units():
    assert parse_measured_capacity("200GB/s").value == 200e9
    assert parse_measured_capacity("100Gb/s").value == 12.5e9  # bits: a NIC's line rate
    assert parse_measured_capacity("10Gbps").value == 1.25e9
    assert parse_measured_capacity("32MiB").value == 32 * 1024**2
    assert parse_measured_capacity("20Mpps").value == 20e6
    assert parse_measured_capacity(2.0) is None  # a unitless capacity: the caller's number
    assert parse_measured_demand("256B").value == 256 and parse_measured_demand("2MiB").kind == "size"
    assert parse_measured_demand("1packet").kind == "packets" and parse_measured_demand("3pkts").value == 3
    assert parse_measured_demand("40%") is None and parse_measured_demand(0.4) is None
    with pytest.raises(UnitError, match="did you mean `GB/s` or `Gb/s`"):
        parse_measured_capacity("200gb/s")
    with pytest.raises(UnitError, match="capacity must be positive"):
        parse_measured_capacity("0GB/s")


def test_the_spec_converts_measured_demands_into_the_shares_written_by_hand():
    measured, twin = _spec(MEASURED), _spec(TWIN)
    for name, task in twin.applications["fwd"].tasks.items():
        got = measured.applications["fwd"].tasks[name]
        assert got.demand == task.demand and got.idle_demand == task.idle_demand, name
    assert [r.capacity for r in measured.topology.resources] == [1.0, 1.0, 1.0]
    assert measured == twin  # the model is the same: a measured value is its share
    demand = measured.applications["fwd"].tasks["P"].demand["membw"]
    assert isinstance(demand, Measured) and str(demand.written) == "25000B"


def test_closed_form_figures_of_a_measured_spec_are_those_of_its_twin():
    measured, twin = _spec(MEASURED), _spec(TWIN)
    for contexts in uniform_plans(measured, 20, seed=1):
        a = evaluate(measured, Plan.from_contexts(measured, contexts))
        b = evaluate(twin, Plan.from_contexts(twin, contexts))
        assert a.throughput == b.throughput and a.latency_mean == b.latency_mean
        assert a.per_instance == b.per_instance and a.threads == b.threads


def _solve(capsys, tmp_path, text: str, name: str) -> dict:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    args = ["solve", str(path), "--method", "cpsat", "--oracle", "analytic", "--workers", "1", "--seed", "0"]
    code = main(args + ["--time-limit", "20", "--json", "--out", str(tmp_path / name)])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_cpsat_plans_a_measured_spec_as_its_twin(capsys, tmp_path):
    measured = _solve(capsys, tmp_path, MEASURED, "measured")
    twin = _solve(capsys, tmp_path, TWIN, "twin")
    assert measured["status"] == twin["status"] == "OPTIMAL"
    assert measured["objective"] == twin["objective"]
    assert measured["plan"]["bindings"] == twin["plan"]["bindings"]
    assert measured["simulated"]["throughput"] == twin["simulated"]["throughput"]
    # the resources bind: without them (every demand 0) the plan would do better
    free = _solve(capsys, tmp_path, TWIN.replace("capacity: 1", "capacity: 1000000"), "free")
    assert free["objective"] > measured["objective"] * 1.01


def test_a_dumped_spec_keeps_the_units_and_loads_back_equal():
    spec = _spec(MEASURED)
    text = dump_spec(spec)
    assert "capacity: 200GB/s" in text and "membw: 25000B" in text and "l2: 20MiB" in text
    assert "nic: 2packets" in text and "bytes: 1KiB" in text
    again = load_spec_text(text)
    assert again == spec and dump_spec(again) == text
    # a plain model dump is the model: shares of unit capacities (what the solvers see)
    data = spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert data["topology"]["resources"][0]["capacity"] == 1.0
    assert data["applications"]["fwd"]["tasks"]["P"]["demand"] == {"membw": 0.25, "l2": 0.625}


def test_the_work_of_the_fastest_kind_of_core_converts_a_bandwidth():
    text = MEASURED.replace(
        "communication:",
        "kinds: {P: {clock: 2.5GHz, domains: [core0, core1]}, E: {speed: 0.5, ipc: 0.8}}\n  communication:",
    ).replace("P: {cycles: 1000,", "P: {cycles: {P: 1250, E: 900},")
    spec = _spec(text)
    # P cores: 1250 cycles at 2.5 GHz = 1000 cycles of the 2 GHz clock; E: 900 / 0.5 = 1800
    assert spec.applications["fwd"].tasks["P"].demand["membw"] == 0.25
    line = next(t for t in explain(spec) if "fwd.P" in t and "membw" in t)
    assert "1000 cycles on P cores at 2GHz" in line and "= 0.25 of 200GB/s" in line, line


def test_a_working_set_does_not_depend_on_the_cycles():
    spec = _spec(MEASURED.replace("P: {cycles: 1000,", "P: {cycles: 7000,").replace("25000B", "175000B"))
    assert spec.applications["fwd"].tasks["P"].demand == {"membw": 0.25, "l2": 0.625}


# ------------------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "old, new, field, words",
    [
        ("bytes: 64B", "bytes: 64", "edges[0].bytes", "a size needs a unit: 64 would be 64 bytes; did you mean `64B`?"),
        ("capacity: 16Mpps", "capacity: 16", "tasks.R.demand.nic", "`nic` has a unitless capacity (16): give a share"),
        ("{nic: 1packet, membw", "{nic: 1packet, l2: 1packet, membw", "tasks.R.demand.l2", "a working set (`2MiB`)"),
        ("{nic: 2packets, l2", "{nic: 2packets, membw: 1packet, l2", "tasks.T.demand.membw", "bytes moved per packet"),
        (
            "{nic: 1packet,",
            "{nic: 512B,",
            "tasks.R.demand.nic",
            "packets per packet (`1packet`) or a share, not `512B`",
        ),
        ("membw: 25000B", "membw: 2MiB", "tasks.P.demand.membw", "if `2MiB` is a working set, it belongs on a size"),
        ("l2: 20MiB", "l2: 64MiB", "tasks.P.demand.l2", "the working set `64MiB` is larger than `l2` (32MiB)"),
        (
            "idle_demand: {l2: 4MiB}",
            "idle_demand: {membw: 64B}",
            "P.idle_demand.membw",
            "a waiting task moves no packets",
        ),
        ("capacity: 200GB/s", "capacity: 200GB/sec", "resources[0].capacity", "unknown unit `GB/sec`"),
        ("membw: 25000B", "membw: 25000b", "tasks.P.demand.membw", "did you mean `B`?"),
    ],
)
def test_unit_errors_are_located_and_say_what_fits(capsys, tmp_path, old, new, field, words):
    assert old in MEASURED
    text = MEASURED.replace(old, new, 1)
    at = "{nic: 1packet" if field == "tasks.R.demand.nic" and "16Mpps" in old else new  # where the demand is
    line = next(n for n, row in enumerate(text.splitlines(), 1) if at in row)
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert re.search(rf"bad\.yaml:{line}:\d+: \S*{re.escape(field)}: ", first), first
    assert words in first, first


def test_a_share_is_at_most_one_whatever_the_units():
    with pytest.raises(SpecError, match=r"is 2\.5 times `membw`'s 200GB/s.*cannot move more than"):
        _spec(MEASURED.replace("membw: 25000B", "membw: 250000B"))


def test_a_share_stays_a_share_on_a_measured_capacity():
    spec = _spec(MEASURED.replace("membw: 25000B", "membw: 25%"))
    assert spec.applications["fwd"].tasks["P"].demand["membw"] == 0.25


def test_python_callers_may_give_a_number_of_bytes():
    """Only a spec file must write the unit: code building models passes bytes."""
    assert Edge.model_validate({"from": "a", "to": "b", "bytes": 64}).bytes == 64
    app = Application.model_validate({"tasks": {"a": {"cycles": 1, "demand": {"m": "2MiB"}}}})
    unconverted = app.tasks["a"].demand["m"]
    assert isinstance(unconverted, Measured) and not unconverted.converted and unconverted == 0
    assert app.model_dump(mode="json")["tasks"]["a"]["demand"] == {"m": "2MiB"}  # nothing lost


# ------------------------------------------------------------------------------ CLI, schema, strategies
def test_validate_explain_prints_each_conversion(capsys, tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(MEASURED)
    assert main(["validate", "--explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "membw: 25000B per packet of fwd.P (1000 cycles at 2GHz: 50 GB/s at full speed) = 0.25 of 200GB/s" in out
    assert "l2: working set 20MiB of fwd.P = 0.625 of 32MiB" in out
    assert "l2: working set 4MiB of fwd.P (idle) = 0.125 of 32MiB" in out
    assert "nic: 2packets per packet of fwd.T (500 cycles at 2GHz: 8 Mpps at full speed) = 0.5 of 16Mpps" in out
    assert main(["validate", "--explain", "--json", str(path)]) == 0
    (result,) = json.loads(capsys.readouterr().out)
    assert len(result["conversions"]) == 7


def test_validate_explain_says_when_there_is_nothing_to_convert(capsys):
    assert main(["validate", "--explain", "t2-constrained", "ultrasparc-t2"]) == 0
    out = capsys.readouterr().out
    assert "no measured demand to convert: every share is as the spec gives it" in out
    assert "nothing to convert in topology alone" in out


def test_the_schema_asks_sizes_for_a_unit_and_offers_measured_capacities():
    defs = spec_json_schema()["$defs"]
    size = defs["Edge"]["properties"]["bytes"]
    assert {"const": 0} in size["anyOf"] and all(o.get("type") != "integer" for o in size["anyOf"])
    capacity = defs["Resource"]["properties"]["capacity"]
    assert any(o.get("type") == "string" for o in capacity["anyOf"]) and "200GB/s" in capacity["description"]
    assert "256B" in defs["Task"]["properties"]["demand"]["additionalProperties"]["description"]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(spec_st.spec_data(measured=True, every_field=True))
def test_drawn_measured_specs_round_trip_and_equal_their_twins(data):
    spec = spec_st.load(data)
    assert load_spec_text(dump_spec(spec), feasibility=False) == spec
    twin = yaml.safe_dump(spec.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=False)
    assert load_spec_text(twin, feasibility=False) == spec
