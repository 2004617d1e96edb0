"""The certificate's terminal text (`solver.certify.summary`)."""

from __future__ import annotations

from tasksolve.solver.certify.bounds import GivenBound, Rigorous
from tasksolve.solver.certify.run import certify
from tasksolve.solver.certify.settings import CertifySettings
from tasksolve.specs import load_spec


def test_a_bound_line_names_its_source_and_a_solver_status_only_where_one_ran(tmp_path):
    """A bound no solver produced (the fluid LP, a measured walk, a given one) has no status: its
    line says "(source)", never "(source, )"; CP-SAT's says "(source, status)"."""
    spec = load_spec("t2-ipfwd-intadd-x2")
    settings = CertifySettings(samples=40, oracle_kind="analytic", design="random", balanced=0, probes=0)
    given = GivenBound("analytic", 2e7, source="a given bound")
    solver = Rigorous("FEASIBLE", 2.1e7, "configuration LP", None, None)
    text = certify(spec, tmp_path, settings, bounds=[given, solver]).certificate.summary()
    lines = [line for line in text.splitlines() if "bound" in line and "Mpps" in line]
    assert any("(a given bound): 20.00 Mpps" in line for line in lines), lines
    assert any("(configuration LP, FEASIBLE): 21.00 Mpps" in line for line in lines), lines
    assert ", )" not in text
