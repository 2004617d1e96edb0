"""The oracle registry: one list of names that make_oracle, the CLI and the spec all read."""

from __future__ import annotations

import json

import pytest

from tasksolve.simulate import registry
from tasksolve.simulate.errors import SimulateError
from tasksolve.simulate.oracle import make_oracle
from tasksolve.simulate.registry import OracleKind, OracleUnavailableError, UnknownOracleError
from tasksolve.solver.cli import main
from tasksolve.specs import load_spec
from tasksolve.specs.errors import SpecError
from tasksolve.specs.loader import load_spec_text
from tasksolve.specs.schema import spec_json_schema

SPEC = load_spec("t2-ipfwd-intmul-x2")
TEXT = """tasksolve: 1
name: tiny
topology: ultrasparc-t2
applications:
  a: {tasks: {R: {cycles: 100}}}
workload: [{app: a}]
oracle: {kind: %s}
"""


def test_every_kind_has_a_description_and_a_factory_that_makes_its_oracle():
    assert set(registry.KINDS) >= {"des", "analytic", "command"}
    for kind in ("des", "analytic"):
        oracle = make_oracle(SPEC, kind)
        assert oracle.name == kind and registry.ORACLES[kind].description


def test_an_unknown_name_is_a_bad_input_with_a_suggestion():
    with pytest.raises(UnknownOracleError, match="did you mean `analytic`") as caught:
        make_oracle(SPEC, "analytc")
    assert isinstance(caught.value, SimulateError) and isinstance(caught.value, ValueError)
    with pytest.raises(UnknownOracleError, match="one of des, analytic, command"):
        make_oracle(SPEC, "zzz")


def test_a_registered_oracle_whose_module_is_missing_is_unavailable(monkeypatch):
    monkeypatch.setitem(
        registry.ORACLES, "ghost", OracleKind("ghost", "nothing", "tasksolve.simulate.no_such_module:Ghost")
    )
    monkeypatch.setattr(registry, "KINDS", (*registry.KINDS, "ghost"))
    with pytest.raises(OracleUnavailableError, match="ghost oracle is not available"):
        make_oracle(SPEC, "ghost")


def test_a_new_registry_line_is_accepted_by_the_spec_and_the_cli(monkeypatch):
    monkeypatch.setitem(
        registry.ORACLES, "fake", OracleKind("fake", "a test oracle", "tasksolve.simulate.oracle:AnalyticOracle")
    )
    monkeypatch.setattr(registry, "KINDS", (*registry.KINDS, "fake"))
    spec = load_spec_text(TEXT % "fake", "tiny.yaml")
    assert spec.oracle.kind == "fake"
    assert spec_json_schema()["$defs"]["OracleSettings"]["properties"]["kind"]["enum"][-1] == "fake"
    assert make_oracle(spec).evaluate([0]).throughput > 0


def test_the_spec_rejects_an_unknown_kind_located_with_a_suggestion():
    with pytest.raises(SpecError) as caught:
        load_spec_text(TEXT % "dse", "tiny.yaml")
    text = str(caught.value)
    assert "tiny.yaml:7" in text and "oracle.kind" in text and "did you mean `des`" in text


def test_the_cli_reads_the_kinds_from_the_registry(capsys):
    assert main(["simulate", "t2-ipfwd-intmul-x2", "--oracle", "analytc", "--json"]) == 2
    assert "did you mean `analytic`" in json.loads(capsys.readouterr().out)["error"]["message"]
    assert main(["simulate", "--help"]) == 0
    help_text = capsys.readouterr().out
    for kind in registry.KINDS:
        assert kind in help_text
