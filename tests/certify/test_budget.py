"""The certify phase's time budget (`solver.certify.budget`): sampling stops on it only when the
verdict is not decided, keeps a prefix of the stream, and the certificate says so."""

from __future__ import annotations

import json
import time

from tasksolve.solver.certify.budget import SAMPLING_SHARE, Budget
from tasksolve.solver.certify.run import BUDGET_MIN_SAMPLES, certify
from tasksolve.solver.certify.service import SamplingService
from tasksolve.solver.certify.settings import CertifySettings
from tasksolve.specs import load_spec

SPEC = "t2-ipfwd-intadd-x2"


def run(tmp_path, name, **options):
    spec = load_spec(SPEC)
    out = tmp_path / name
    outcome = certify(spec, out, CertifySettings(oracle_kind="analytic", probes=0, workers=1, seed=3, **options))
    return outcome, out


def test_a_spent_budget_stops_sampling_on_a_prefix_and_says_so(tmp_path):
    """With no bound the closed form's local optima are not decided before 299 draws (the draw
    bound of `best_found`): a budget that ends at once leaves the first `BUDGET_MIN_SAMPLES`
    restarts, and the certificate names the budget in its sentence and its JSON."""
    outcome, out = run(tmp_path, "cut", budget_s=1e-6, compare_samples=None)
    cert = outcome.certificate
    assert cert.samples.stopped == "budget" and cert.samples.budget_s == 1e-6
    assert cert.samples.n == BUDGET_MIN_SAMPLES
    assert sorted(outcome.service.records) == list(range(BUDGET_MIN_SAMPLES))  # the stream's prefix
    assert "time budget" in cert.sentence and "more samples could change it" in cert.sentence
    assert ". Sampling stopped on the time budget" in cert.sentence  # a sentence of its own
    assert outcome.history.stopped == "exhausted"
    assert cert.designs is None  # no time left for the other design's sample
    data = cert.to_dict()
    assert data["samples"]["stopped"] == "budget" and json.dumps(data, allow_nan=False)
    # the same run without a budget decides (a saturated best value) and draws past the cut
    free, _ = run(tmp_path, "free")
    assert free.certificate.samples.stopped in ("decided", "ceiling") and free.certificate.samples.n >= 100
    assert "time budget" not in free.certificate.sentence and free.certificate.samples.budget_s is None
    assert free.certificate.to_dict()["samples"]["nulls"]["budget_s"]
    # the budget's sample is the free run's first restarts, value for value
    assert list(outcome.service.values()) == list(free.service.values(BUDGET_MIN_SAMPLES))


def test_a_budget_does_not_cut_a_decided_verdict_or_a_fixed_sample(tmp_path):
    generous, _ = run(tmp_path, "generous", budget_s=3600)
    assert generous.certificate.samples.stopped in ("decided", "ceiling")
    assert "time budget" not in generous.certificate.sentence
    fixed, _ = run(tmp_path, "fixed", budget_s=1e-6, samples=40)  # the caller's size is measured in full
    assert fixed.certificate.samples.n == 40 and fixed.certificate.samples.stopped == "fixed"
    assert fixed.certificate.samples.budget_s is None  # a fixed sample has no budget at all


def test_the_job_derives_the_budget_from_the_time_limit():
    """The time limit is the whole job's: the solve gets two thirds, the certify phase what the
    solve left less 5% for the report, never under a sixth."""
    from tasksolve.solver.job.settings import CERTIFY_SHARE, JobSettings

    spec = load_spec("t2-ipfwd-x20")  # search.time_limit: 60 s
    settings = JobSettings.resolve(spec)
    assert settings.solve_seconds() == (1 - CERTIFY_SHARE) * 60
    assert settings.certify_settings(elapsed=40).budget_s == 0.95 * 60 - 40
    assert settings.certify_seconds(elapsed=10) == 0.95 * 60 - 10  # a solve done early leaves more
    assert settings.certify_seconds(elapsed=100) == 60 / 6  # an overrun solve still leaves a floor
    assert JobSettings.resolve(spec, certify_budget=7).certify_seconds(elapsed=50) == 7
    assert JobSettings.resolve(spec, certify_budget=7).solve_seconds() == 60  # the caller split it
    assert JobSettings.resolve(spec, deterministic=True).certify_seconds() == 0  # no wall-clock budget
    assert JobSettings.resolve(spec, deterministic=True).solve_seconds() == 60


def test_ensure_keeps_a_prefix_and_starts_nothing_after_its_deadline(tmp_path):
    spec = load_spec(SPEC)
    service = SamplingService(spec, tmp_path / "s.jsonl", oracle_kind="analytic", design="random", max_samples=50)
    service.open()
    assert service.ensure(20, deadline=time.monotonic() - 1) == 0 and not service.records
    assert service.ensure(20, deadline=time.monotonic() + 3600) == 20
    assert service.measured_prefix(50) == 20 and service.ensure(30) == 30
    service.deadline = time.monotonic() - 1  # the service's own deadline when ensure is given none
    assert service.ensure(50) == 30


def test_the_budget_shares_its_time():
    budget = Budget.of(100.0, started=0.0)
    assert budget.deadline == 100.0 and budget.sampling_deadline == SAMPLING_SHARE * 100.0
    assert Budget.of(None).deadline is None and Budget.of(0).sampling_deadline is None
    assert Budget.of(None).affordable(200) == 200
    assert Budget.of(10.0, started=time.monotonic() - 20).affordable(200) == 0  # spent
    left = Budget.of(10.0, started=time.monotonic())
    left.measure_s = 1.0
    assert left.affordable(200) <= 10


def test_the_probe_stops_at_its_deadline_after_one_restart():
    from tasksolve.simulate.oracle import make_oracle
    from tasksolve.solver.certify.designs import probe

    spec = load_spec(SPEC)

    class Counting:
        def __init__(self):
            self.inner, self.calls = make_oracle(spec, "analytic"), 0

        def evaluate(self, plan, seed=None):
            self.calls += 1
            return self.inner.evaluate(plan, seed=seed)

    late, free = Counting(), Counting()
    cut = probe(spec, late, spec.objective, 0, restarts=6, deadline=time.monotonic() - 1)
    full = probe(spec, free, spec.objective, 0, restarts=6, deadline=time.monotonic() + 3600)
    assert late.calls == 1 and free.calls == 6 and cut is not None and full is not None
    assert full[0] >= cut[0]  # the first restart of the same stream, then five more
