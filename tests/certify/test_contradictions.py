"""Contradictions are caught where the evidence is assembled, never printed side by side:

* a record's `value` that disagrees with its own `throughput` or `latency` is refused with its
  file and line (`solver.certify.records.self_contradiction`);
* a measured value beyond a bound that applies to its oracle (or beyond its proven optimum),
  further than the measurement's half-width, makes the verdict ``not_certified`` with the
  contradiction named (`solver.certify.verdict`, rule 0) -- a resumed file with one forged value
  included.
"""

from __future__ import annotations

import json

import pytest

from tasksolve.solver.certify.known import KnownPlan
from tasksolve.solver.certify.records import RecordError, checked_record
from tasksolve.solver.certify.verdict import SIMULATION_RESOLUTION, decide
from tasksolve.solver.cli import main
from tests.certify.test_verdict import bound, evidence
from tests.solver.test_outdir import FAST, SPEC_TEXT


def _line(**fields) -> str:
    record = {"index": 3, "contexts": [0, 1], "status": "ok", "value": 2.0e6, "throughput": 2.0e6, "latency": 1e-6}
    record.update(fields)
    return json.dumps(record)


@pytest.mark.parametrize(
    "objective, fields, words",
    [
        ("total_throughput", {"value": 138e6}, "not the record's own `throughput`"),
        ("min_throughput", {"value": 2.1e6}, "above the record's total `throughput`"),
        ("latency", {"value": 0.5e-6}, "below the record's mean `latency`"),
    ],
)
def test_a_record_that_contradicts_itself_is_refused_with_its_line(objective, fields, words):
    with pytest.raises(RecordError) as caught:
        checked_record(_line(**fields), "out/samples.jsonl", 5, objective)
    assert str(caught.value).startswith("out/samples.jsonl:5: ") and words in str(caught.value)


@pytest.mark.parametrize(
    "objective, fields",
    [
        ("total_throughput", {}),
        ("min_throughput", {"value": 1.0e6}),  # the slowest instance: at most the total
        ("latency", {"value": 3e-6}),  # the slowest instance's mean: at least the mean
        ("total_throughput", {"throughput": None}),  # nothing to compare with
    ],
)
def test_a_record_that_agrees_with_itself_passes(objective, fields):
    assert (
        checked_record(_line(**fields), "samples.jsonl", 2, objective)["value"] == json.loads(_line(**fields))["value"]
    )


def test_a_plan_above_an_applicable_bound_is_a_contradiction_not_a_proof():
    """Plan 300 (half-width 0) beside a closed-form bound of 4.62 on the closed form: before, rule 4
    read 'proven' (the bound within the target of the plan); now rule 0 says the two disagree."""
    decision = decide(evidence(plan_value=300.0, oracle="analytic", bounds=[bound(4.62, "analytic", proven=4.62)]))
    assert decision.verdict == "not_certified" and decision.basis == "contradiction"
    assert decision.reasons[0]["code"] == "contradiction" and "300" in decision.sentence and "4.62" in decision.sentence


def test_a_known_plan_beyond_an_applicable_proven_optimum_is_a_contradiction():
    """The proven optimum 100 below the bound 101: a known plan at 100.5 is beyond the optimum
    (by 0.5) though under the bound."""
    ev = evidence(
        plan_value=99.0, known=[KnownPlan("best sampled plan", 100.5, 0.0)], bounds=[bound(101.0, "des", proven=100.0)]
    )
    assert decide(ev).basis == "contradiction"


@pytest.mark.parametrize("minimize", [False, True])
def test_within_the_half_width_a_value_past_a_bound_is_noise_not_a_contradiction(minimize):
    """Plan 100.4 +- 0.5 against a bound of 100 (throughput: 100.4 - 0.5 < 100), or 99.6 +- 0.5
    against a lower bound of 100 (latency: 99.6 + 0.5 > 100): within noise.  With a half-width of
    0.3 both are beyond it."""
    value = 99.6 if minimize else 100.4
    near = evidence(plan_value=value, plan_half_width=0.5, minimize=minimize, known=[], bounds=[bound(100.0, "des")])
    assert decide(near).basis != "contradiction"
    far = evidence(plan_value=value, plan_half_width=0.3, minimize=minimize, known=[], bounds=[bound(100.0, "des")])
    assert decide(far).basis == "contradiction"


def test_a_simulated_figure_within_the_simulations_resolution_of_a_bound_is_no_contradiction():
    """t2-ipfwd-mix-x8: a plan simulated at 19,985,943 +- 93 pps (600 packets) against the fluid
    bound 19,985,479 that its own long-run rate meets: 2.3e-5 above, a finite run's bias, not a
    false bound.  Twice the resolution above it is a contradiction; so is any excess on the
    closed form, which has no finite run."""
    tight = bound(19_985_479.0, "des")
    near = evidence(plan_value=19_985_943.0, plan_half_width=93.0, oracle="des", known=[], bounds=[tight])
    assert decide(near).basis != "contradiction"
    beyond = 19_985_479.0 * (1 + 2 * SIMULATION_RESOLUTION) + 93.0
    far = evidence(plan_value=beyond, plan_half_width=93.0, oracle="des", known=[], bounds=[tight])
    assert decide(far).basis == "contradiction"
    exact = evidence(plan_value=19_985_943.0, oracle="analytic", known=[], bounds=[bound(19_985_479.0, "analytic")])
    assert decide(exact).basis == "contradiction"


def test_a_bound_of_another_oracle_is_no_contradiction():
    """The closed form's optimum is no bound on the simulation (pessimistic there)."""
    ev = evidence(plan_value=300.0, oracle="des", bounds=[bound(4.62, "analytic", proven=4.62)])
    assert decide(ev).basis != "contradiction"


def test_a_resumed_file_with_one_forged_value_is_never_positive(tmp_path, capsys):
    """A finished closed-form certificate, then one sample's value and throughput multiplied by 69
    (consistent with each other, under the 1000x spread check) and --resume: the verdict names the
    contradiction with the CP-SAT bound and exits 1."""
    spec = tmp_path / "small.yaml"
    spec.write_text(SPEC_TEXT)
    out = tmp_path / "out"
    assert main(["certify", str(spec), "--out", str(out), *FAST]) in (0, 1)
    capsys.readouterr()
    samples = out / "samples.jsonl"
    lines = samples.read_text().splitlines()
    record = json.loads(lines[5])
    record["value"] *= 69
    record["throughput"] *= 69
    lines[5] = json.dumps(record)
    samples.write_text("\n".join(lines) + "\n")
    code = main(["certify", str(spec), "--out", str(out), *FAST, "--resume"])
    result = json.loads(capsys.readouterr().out)
    assert code == 1, result
    assert result["verdict"] == "not_certified" and result["basis"] == "contradiction", result


def test_an_estimate_beyond_an_applicable_bound_is_said_in_one_sentence():
    """Estimate 44.60 and far limit 46 beside a fluid bound of 30.27 on the same oracle (the
    random design's estimate once printed beside the bound as if both held): one reason names
    both figures and says which holds; the plan, within the target of the bound, is proven."""
    ev = evidence(plan_value=30.0, estimate=44.60, lower=40.0, upper=46.0, known=[], bounds=[bound(30.27, "des")])
    decision = decide(ev)
    assert decision.verdict == "proven"
    reason = next(r for r in decision.reasons if r["code"] == "estimate_beyond_bound")
    assert "44.6" in reason["sentence"] and "46" in reason["sentence"] and "30.27" in reason["sentence"]


def test_an_estimate_under_the_bound_says_nothing_of_it():
    ev = evidence(plan_value=99.0, estimate=100.0, upper=101.0, bounds=[bound(101.5, "des")])
    assert "estimate_beyond_bound" not in {r["code"] for r in decide(ev).reasons}


def test_a_model_bound_and_its_proven_optimum_are_labelled_as_two_figures():
    """On the simulation the closed form's bound (2.190) and its proven optimum (2.178) were
    printed as 'proven optimum 2.190, proven optimum 2.178'."""
    from tasksolve.solver.certify.assemble import bound_summaries

    (summary,) = bound_summaries([bound(2.190, "analytic", proven=2.178)], "des")
    assert summary.label == "the closed form's bound and proven optimum (neither bounds the simulation)"
    assert (summary.value, summary.proven_optimum) == (2.190, 2.178)


def test_certify_deterministic_gives_the_same_certificate_twice(tmp_path, capsys):
    """`certify --deterministic` on the closed form: CP-SAT in deterministic time, no certify
    budget; two runs give the same verdict, bound and figures."""
    spec = tmp_path / "small.yaml"
    spec.write_text(SPEC_TEXT)
    found = []
    for out in ("a", "b"):
        code = main(["certify", str(spec), "--out", str(tmp_path / out), *FAST, "--deterministic"])
        result = json.loads(capsys.readouterr().out)
        assert code in (0, 1), result
        found.append((result["verdict"], json.dumps(result["bounds"], sort_keys=True), result["gap"]))
    assert found[0] == found[1]
