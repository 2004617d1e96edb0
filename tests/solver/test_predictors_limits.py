"""Where the papers' predictions, as written, cannot follow the closed form: two worked cases
computed by hand from the example specs (cycles; clock 1.4 GHz; T2 communication 6 cycles
inside a core, 90 across cores).  The slowdown experiments isolate the target's own threads on
remote cores (TPDS §3.1.1), so the target pays remote communication there and the target
instance's pace is set by threads that pay it too; a plan with the producer in the same core
does not.  TSBSched adds a busy-time difference measured at the experiment's work (PPoPP'10
§3.3 Step 3); BlackBox divides by an instance-performance ratio measured at the experiment's
bottleneck (TPDS §3.1.2 Step 3)."""

from __future__ import annotations

import numpy as np
import pytest

from tasksolve.simulate.analytic import BatchModel
from tasksolve.simulate.oracle import make_oracle
from tasksolve.solver.predictors.models import predict_blackbox, predict_tsbsched
from tasksolve.solver.predictors.tables import ProfileTables
from tasksolve.specs import load_spec

CLOCK = 1.4e9


def _tables(spec):
    return ProfileTables(spec, lambda s: make_oracle(s, "analytic"), oracle_kind="analytic")


def test_tsbsched_adds_the_slowdown_at_the_experiments_work():
    """t2-ipfwd-l2-x2, R1 P1 R2 P2 on pipe 0 of core 0, T1 on pipe 1, T2 on core 1.  P (800
    cycles, ifu 0.35) shares pipe 0 with three threads: ifu load 1.4, rate 1/1.4; its producer R is
    on the same pipe, so its work is 800 + 6 = 806 and the closed form's time 806 * 1.4.  TSBSched:
    base time 806 (the instance alone: pipe load 0.7), exe_time2 = 890 * 1.4 and exe_time1 = 890
    (the experiments' P receives from a remote R: 800 + 90); so 806 + 0.4 * 890, 33.6 cycles more
    than the closed form, for both instances."""
    spec = load_spec("t2-ipfwd-l2-x2")
    plan = [0, 1, 4, 2, 3, 8]  # R1 P1 T1 R2 P2 T2
    truth = BatchModel(spec).evaluate(np.array([plan])).per_instance[0]
    np.testing.assert_allclose(truth, [CLOCK / (806 * 1.4)] * 2, rtol=1e-12)
    predicted = predict_tsbsched(_tables(spec), plan).per_instance
    np.testing.assert_allclose(predicted, [CLOCK / (806 + 890 * 1.4 - 890)] * 2, rtol=1e-12)


def test_blackbox_orders_two_plans_wrongly_through_the_experiments_bottleneck():
    """t2-ipfwd-intadd-x2 (P: 250 cycles, ifu 0.7; R, T: ifu 0.35).  In both plans the first
    instance's T shares a pipe with R2, P2 and T2 (ifu load 1.75, rate 1/1.75).

    A = [0, 1, 4, 5, 6, 7]: R1 P1 on pipe 0 of core 0, T1 R2 P2 T2 on pipe 1.  Closed form:
    instance 1 is set by T1, (170 + 6) * 1.75 = 308; instance 2 by P2, (250 + 6) * 1.75 = 448.
    B = [0, 4, 8, 9, 10, 11]: R1 on pipe 0 and P1 on pipe 1 of core 0, T1 R2 P2 T2 on pipe 0 of
    core 1.  Closed form: T1 receives from another core, (170 + 90) * 1.75 = 455; P2 448 again.
    So A is faster.

    BlackBox: T1's slowdown experiment (T with R, P, T on its pipe) runs the target's P remote
    (250 + 90 = 340 cycles), which sets the isolated instance's pace whenever T is faster:
    performance 1 is clock / 340 (A: T with its siblings R, P on the other pipe; B: alone), and
    performance 2 clock / 455, so slowdown(T1) = 455 / 340 in both plans, while in the plans T1
    slows from its base 176 (A) or 260 (B) to 308 or 455.  Instance 1's base performance is
    clock / 268.8 in A (R and P share a pipe: ifu 1.05, P at 256 * 1.05) and clock / 260 in B (T
    receives from another core), so BlackBox ranks B above A."""
    spec = load_spec("t2-ipfwd-intadd-x2")
    a, b = [0, 1, 4, 5, 6, 7], [0, 4, 8, 9, 10, 11]
    truth = BatchModel(spec).evaluate(np.array([a, b])).per_instance
    np.testing.assert_allclose(truth[0], [CLOCK / 308, CLOCK / 448], rtol=1e-12)
    np.testing.assert_allclose(truth[1], [CLOCK / 455, CLOCK / 448], rtol=1e-12)
    tables = _tables(spec)
    slowdown_t1 = 455 / 340
    assert predict_blackbox(tables, a).per_instance[0] == pytest.approx(CLOCK / (256 * 1.05) / slowdown_t1)
    assert predict_blackbox(tables, b).per_instance[0] == pytest.approx(CLOCK / 260 / slowdown_t1)
    assert truth[0].sum() > truth[1].sum()
    assert predict_blackbox(tables, a).total < predict_blackbox(tables, b).total
