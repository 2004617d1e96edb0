"""The local-optima design: iid samples, each from its own seed, reproducible whatever the executor."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tasksolve.simulate.analytic import BatchModel
from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.certify.designs import Climber
from tasksolve.solver.certify.service import SamplingError, SamplingService
from tasksolve.specs import load_spec

SPEC = "t2-ipfwd-mix-x8"


@pytest.fixture(scope="module")
def spec():
    return load_spec(SPEC)


def service(spec, path, **options) -> SamplingService:
    base = dict(seed=3, oracle_kind="analytic", design="local-optima", max_samples=40)
    base.update(options)
    out = SamplingService(spec, path, **base)
    out.start_fresh()
    return out


def test_each_sample_is_a_local_optimum_of_its_own_start(spec, tmp_path):
    run = service(spec, tmp_path / "s.jsonl")
    run.ensure(12)
    model = BatchModel(spec)
    climber = Climber(spec, spec.objective, screen=False)
    for index in range(12):
        record = run.records[index]
        assert record.start == run.contexts(index) and record.seed is not None
        plan = np.array([record.contexts])
        value = model.evaluate(plan).values(spec.objective)[0]
        assert record.value == pytest.approx(value, rel=1e-12)
        assert value >= model.evaluate(np.array([record.start])).values(spec.objective)[0]
        neighbours = climber.search.neighbours(plan[0])
        assert climber.search.values(neighbours).max() <= value * (1 + 1e-12)  # no improving move left


def test_same_seed_same_values_and_workers_do_not_matter(spec, tmp_path):
    one = service(spec, tmp_path / "one.jsonl", workers=1)
    one.ensure(16)
    two = service(spec, tmp_path / "two.jsonl", workers=2)
    two.ensure(16)
    lines = [sorted(p.read_text().splitlines()[1:]) for p in (one.path, two.path)]
    assert lines[0] == lines[1] and len(lines[0]) == 16
    other = service(spec, tmp_path / "other.jsonl", seed=4)
    other.ensure(16)
    assert [r.seed for r in other.ok_records()] != [r.seed for r in one.ok_records()]


def test_resume_equals_uninterrupted(spec, tmp_path):
    full = service(spec, tmp_path / "full.jsonl")
    full.ensure(20)
    part = service(spec, tmp_path / "part.jsonl")
    part.ensure(8)
    again = SamplingService(spec, part.path, seed=3, oracle_kind="analytic", design="local-optima", max_samples=40)
    assert again.load() == 8
    again.ensure(20)
    assert np.array_equal(again.values(20), full.values(20))
    assert [json.loads(x) for x in part.path.read_text().splitlines()[0:1]][0]["design"] == "local-optima"


def test_resume_refuses_a_design_change(spec, tmp_path):
    run = service(spec, tmp_path / "s.jsonl")
    run.ensure(4)
    with pytest.raises(SamplingError, match="design changed"):
        SamplingService(spec, run.path, seed=3, oracle_kind="analytic", design="random").load()


def test_local_optima_are_no_worse_than_random_plans(spec, tmp_path):
    local = service(spec, tmp_path / "l.jsonl")
    local.ensure(20)
    plain = service(spec, tmp_path / "r.jsonl", design="random")
    plain.ensure(20)
    assert np.all(local.values(20) >= plain.values(20) * (1 - 1e-12))  # same starts, climbed


def test_on_the_simulation_the_closed_form_screens_a_few_plans(spec):
    climber = Climber(spec, spec.objective, screen=True)
    start = SamplingService(spec, "unused.jsonl", seed=3, design="local-optima").contexts(0)
    oracle = make_oracle(spec, "analytic")
    plan, steps, measured = climber.sample(oracle, start, 11)
    again = climber.sample(oracle, start, 11)
    assert plan == again[0] and measured.throughput == again[2].throughput and steps >= 0
