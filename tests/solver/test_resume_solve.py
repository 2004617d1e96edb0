"""``--resume`` reuses the finished solve recorded in the output directory (`solver.job.solve_record`)
when the spec and the solve's settings are unchanged, and solves again -- saying why -- when they
changed or the record cannot be read; a record is unpickled with tasksolve's own types only."""

from __future__ import annotations

import os
import pickle

import pytest

import tasksolve
from tasksolve.solver.job.binding import BindingStrategy
from tasksolve.solver.job.pipeline import PipelineStrategy
from tasksolve.solver.job.solve_record import RECORD_NAME
from tasksolve.specs import load_spec_text
from tests.certify.test_pipeline_run import TINY

SPEC = "t2-ipfwd-intadd-x2"
OPTIONS = {"oracle_kind": "analytic", "samples": 30, "design": "random", "compare_samples": 0, "time_limit": 2}


def _run(out, strategy=BindingStrategy, spec=SPEC, **options):
    """`tasksolve.run`, counting the strategy's solves; (result, phase lines, solves)."""
    said, solves = [], []
    original = strategy.solve

    def counted(self, say):
        solves.append(1)
        return original(self, say)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(strategy, "solve", counted)
        result = tasksolve.run(spec, out, say=said.append, **{**OPTIONS, **options})
    return result, said, len(solves)


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    result, _, solves = _run(out)
    assert solves == 1 and (out / RECORD_NAME).is_file()
    return out, result


def test_resume_reuses_the_recorded_solve(first):
    out, result = first
    plan = (out / "plan.yaml").read_text()
    again, said, solves = _run(out, resume=True)
    assert solves == 0  # the solver was not called
    assert any(line.startswith(f"reusing the solve recorded in {out / RECORD_NAME}") for line in said)
    assert again.solve.to_dict() == result.solve.to_dict() and again.verdict == result.verdict
    assert (out / "plan.yaml").read_text() == plan


def test_a_changed_setting_solves_again_and_says_which(first, tmp_path):
    out, _ = first
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("samples.jsonl", RECORD_NAME):
        (copy / name).write_bytes((out / name).read_bytes())
    _, said, solves = _run(copy, resume=True, time_limit=3, top_k=3)
    assert solves == 1
    line = next(line for line in said if line.startswith("solving again"))
    assert "time_limit: 2.0 -> 3.0" in line and "top_k: " in line and "-> 3" in line


def test_a_changed_spec_solves_again(first):
    from tasksolve.solver.job.settings import JobSettings
    from tasksolve.solver.job.solve_record import recorded, solve_key
    from tasksolve.specs import load_spec

    out, _ = first
    spec = load_spec(SPEC)
    settings = JobSettings.resolve(spec, **OPTIONS)
    found, why = recorded(out, solve_key("binding", spec, settings))
    assert found is not None and why.startswith("reusing")
    data = spec.model_dump(mode="json", by_alias=True)
    data["oracle"]["packets"] = 1234
    changed = type(spec).model_validate(data)
    found, why = recorded(out, solve_key("binding", changed, settings))
    assert found is None and why.endswith("is another one (the spec changed)")


class _Runs:
    """A pickle that would run a program if unpickled as Python does by default."""

    def __reduce__(self):
        return (os.system, ("touch should-not-exist",))


def test_a_foreign_record_is_refused_and_solved_again(first, tmp_path, monkeypatch):
    out, _ = first
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "samples.jsonl").write_bytes((out / "samples.jsonl").read_bytes())
    (copy / RECORD_NAME).write_bytes(pickle.dumps({"key": _Runs(), "seconds": 1.0, "state": {}}))
    monkeypatch.chdir(tmp_path)
    _, said, solves = _run(copy, resume=True)
    assert solves == 1 and not (tmp_path / "should-not-exist").exists()
    assert any(
        "cannot be read (UnpicklingError: " in line and "system is not one of tasksolve's types" in line
        for line in said
    )


def test_a_pipeline_solve_is_reused_whole(tmp_path):
    """The pipeline strategy's solve sets the instances' spec beside its report: both come back."""
    spec = load_spec_text(TINY)
    options = {"samples": 20, "time_limit": 3, "design": "random", "compare_samples": 0}
    result, _, solves = _run(tmp_path, PipelineStrategy, spec, **options)
    again, said, solves_again = _run(tmp_path, PipelineStrategy, spec, resume=True, **options)
    assert (solves, solves_again) == (1, 0) and any(line.startswith("reusing the solve") for line in said)
    assert again.solve.to_dict() == result.solve.to_dict()
    assert again.certificate.to_dict()["plan"] == result.certificate.to_dict()["plan"]
