"""The certify budget when a bound decides the verdict before any sample (`solver.certify.budget`):
the probe and the samples get no minimum, a climb running at the deadline is dropped (the
sample stays a prefix), the certificate lists the steps that ran short, and a second
certification in the job has no floor of its own."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.solver.certify.bounds import GivenBound, SimulationBound, add_plan_bound, simulation_bound
from tasksolve.solver.certify.budget import BudgetCut
from tasksolve.solver.certify.designs import Climber, probe
from tasksolve.solver.certify.run import BUDGET_MIN_SAMPLES, certify
from tasksolve.solver.certify.service import SamplingService
from tasksolve.solver.certify.settings import CertifySettings
from tasksolve.specs import Plan, load_spec

SPEC = "t2-ipfwd-intadd-x2"


def _plan_and_value(spec, seed: int = 4, climbed: bool = False):
    """A uniform random plan (or the local optimum it climbs to) and its closed-form value."""
    contexts = [int(c) for c in uniform_plans(spec, 1, np.random.default_rng(seed))[0]]
    if climbed:
        contexts = [int(c) for c in Climber(spec, spec.objective, screen=False).climb(contexts, seed)[0]]
    plan = Plan.from_contexts(spec, contexts)
    return plan, make_oracle(spec, "analytic").evaluate(plan).natural(spec.objective)


def _certify(tmp_path, name, budget_s, bound_above):
    """A local optimum certified with a bound `bound_above` times its value (a true bound: the
    flagship's local optima reach its optimum, and a known plan above it would say so)."""
    spec = load_spec(SPEC)
    plan, value = _plan_and_value(spec, climbed=True)
    settings = CertifySettings(oracle_kind="analytic", probes=3, workers=1, seed=3, budget_s=budget_s)
    bound = GivenBound("analytic", value * bound_above, source="a given bound")
    return certify(spec, tmp_path / name, settings, plan=plan, bounds=[bound])


def test_a_bound_that_decides_leaves_the_samples_to_the_budget(tmp_path):
    """A bound 1% above the plan proves it (5% target) before any sample: a spent budget then
    draws no sample and no probe restart, says which steps ran short, and the verdict is the
    one a generous budget gives."""
    spent = _certify(tmp_path, "spent", 1e-6, 1.01).certificate
    assert spent.verdict == "proven" and spent.samples.n == 0 and spent.samples.best is None
    assert spent.samples.stopped == "decided"  # the verdict could not change: no budget sentence
    assert "time budget" not in spent.sentence
    short = spent.budget["short"]
    assert any(s.startswith("probe:") for s in short) and any(s.startswith("samples:") for s in short)
    assert spent.baselines == [] and not any(k.plan == "best sampled plan" for k in spent.known_plans)
    assert spent.to_dict()["samples"]["nulls"]["best"]
    assert "ran short of the certify budget (0 s): probe:" in spent.summary()  # the terminal says so too
    free = _certify(tmp_path, "free", 3600, 1.01).certificate
    assert free.verdict == "proven" and free.samples.n >= 1 and free.budget["short"] == []
    assert any(k.plan.startswith("best of 3") for k in free.known_plans)  # the probe ran


def test_an_undecided_verdict_still_draws_its_minimum_sample(tmp_path):
    """A bound 50% above the plan proves nothing: the first `BUDGET_MIN_SAMPLES` restarts and one
    probe restart are drawn whatever the budget, and the certificate says they ran past it."""
    cut = _certify(tmp_path, "cut", 1e-6, 1.5).certificate
    assert cut.samples.n == BUDGET_MIN_SAMPLES and cut.samples.stopped == "budget"
    assert any(k.plan.startswith("best of 3") for k in cut.known_plans)
    assert any("ran past it" in s for s in cut.budget["short"])


def test_without_a_floor_an_undecided_verdict_forces_no_sample(tmp_path):
    """A certification without a floor (the main job's second one, after an adoption) draws no
    sample once its budget is spent, even undecided, says why, and stays undecided."""
    spec = load_spec(SPEC)
    plan, value = _plan_and_value(spec, climbed=True)
    settings = CertifySettings(oracle_kind="analytic", probes=0, workers=1, seed=3, budget_s=1e-6, floor=False)
    bound = GivenBound("analytic", value * 1.5, source="a given bound")
    cert = certify(spec, tmp_path / "nofloor", settings, plan=plan, bounds=[bound]).certificate
    assert cert.samples.n == 0 and cert.verdict not in ("proven", "best_found")
    assert any("earlier certification" in s for s in cert.budget["short"])
    assert not any("ran past it" in s for s in cert.budget["short"])


def test_a_climb_past_its_cut_is_dropped_not_measured(tmp_path):
    spec = load_spec(SPEC)
    start = [int(c) for c in uniform_plans(spec, 1, np.random.default_rng(0))[0]]
    with pytest.raises(BudgetCut):
        Climber(spec, spec.objective, screen=True, cut=time.monotonic() - 1).sample(
            make_oracle(spec, "analytic"), start, 1
        )
    _, _, free = Climber(spec, spec.objective, screen=True, cut=time.monotonic() + 3600).sample(
        make_oracle(spec, "analytic"), start, 1
    )
    assert free.throughput > 0
    # the service drops a cut restart: nothing is recorded, the prefix is empty, not failed
    service = SamplingService(spec, tmp_path / "s.jsonl", oracle_kind="analytic", design="local-optima")
    service.open()
    service.cut = time.monotonic() - 1
    assert service.ensure(4) == 0 and not service.records and not service.failures()
    service.cut = None
    assert service.ensure(4) == 4 and not service.failures()


def test_a_probe_with_a_cut_forces_no_restart():
    spec = load_spec(SPEC)

    class Counting:
        def __init__(self):
            self.inner, self.calls = make_oracle(spec, "analytic"), 0

        def evaluate(self, plan, seed=None):
            self.calls += 1
            return self.inner.evaluate(plan, seed=seed)

    unforced, forced = Counting(), Counting()
    past = time.monotonic() - 1
    assert probe(spec, unforced, spec.objective, 0, restarts=4, deadline=past, cut=past) is None
    assert probe(spec, forced, spec.objective, 0, restarts=4, deadline=past) is not None
    assert unforced.calls == 0 and forced.calls == 1


def test_the_second_certification_has_no_floor():
    from tasksolve.solver.job.settings import CERTIFY_FLOOR_SHARE, JobSettings

    settings = JobSettings.resolve(load_spec("t2-ipfwd-x20"))  # 60 s
    assert settings.certify_seconds(elapsed=58) == CERTIFY_FLOOR_SHARE * 60  # the first: a floor
    assert settings.recertify_seconds(elapsed=58) == 1e-3  # the second: what is left, if anything
    assert settings.recertify_seconds(elapsed=30) == pytest.approx(0.95 * 60 - 30)
    assert JobSettings.resolve(load_spec(SPEC), certify_budget=7).recertify_seconds(elapsed=50) == 7


def test_the_plans_own_fluid_bound_waits_for_the_budget():
    """The per-plan fluid bound is at most the bound over every plan (a property of the
    maximum); with too little budget left it is not computed and the bound says why."""
    spec = load_spec(SPEC)
    bound = simulation_bound(spec)
    assert isinstance(bound, SimulationBound) and bound.plan_value is None
    plan, _ = _plan_and_value(spec, seed=9)
    short = add_plan_bound(SimulationBound(**{**bound.__dict__, "seconds": 10.0}), spec, plan, left=1.0)
    assert short.plan_value is None and "not computed" in short.plan_note
    found = add_plan_bound(bound, spec, plan, left=None)
    assert found.plan_value is not None and found.plan_value <= bound.value * (1 + 1e-9)
    assert found.to_dict()["plan_value"] == found.plan_value


def test_a_plan_the_job_will_replace_draws_no_sample(tmp_path):
    """Where the caller adopts (the main job), a known binding plan beating the plan beyond noise
    (by less than the target: no verdict yet) settles the run before sampling: no forced sample,
    and the plan is among the outcome's better plans for the caller to certify instead."""
    from tasksolve.solver.certify.known import KnownPlan

    spec = load_spec(SPEC)
    plan, value = _plan_and_value(spec, climbed=True)
    other, _ = _plan_and_value(spec, seed=11)
    beater = KnownPlan("a better plan", value * 1.02, 0.0, tuple(other.contexts(spec)))
    loose = GivenBound("analytic", value * 1.5, source="a loose bound")

    def run(name, adopts):
        settings = CertifySettings(oracle_kind="analytic", probes=0, workers=1, seed=3, budget_s=1e-6, adopts=adopts)
        return certify(spec, tmp_path / name, settings, plan=plan, bounds=[loose], known=[beater])

    adopting, keeping = run("adopts", True), run("keeps", False)
    assert adopting.certificate.samples.n == 0 and [k.plan for k in adopting.better] == ["a better plan"]
    assert keeping.certificate.samples.n == BUDGET_MIN_SAMPLES


def test_the_replaced_plans_short_steps_stay_in_the_certificate():
    from types import SimpleNamespace

    from tasksolve.solver.job.job import _carry_short

    def outcome(short):
        return SimpleNamespace(certificate=SimpleNamespace(budget={"seconds": 1.0, "short": short}))

    first, final = outcome(["probe: its first restart, run whatever the budget, ran past it"]), outcome(["x"])
    _carry_short(first, final)
    assert final.certificate.budget["short"][0].startswith("first certification, of the replaced plan: probe:")
    assert final.certificate.budget["short"][1:] == ["x"]
