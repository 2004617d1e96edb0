"""`run` and `certify` show both sampling designs: the certificate's and the other on a small
sample of its own (`solver.certify.compare`), in the JSON certificate and in the report."""

from __future__ import annotations

import json
import math

import numpy as np

from tasksolve.solver.certify.compare import design_entry, other_design
from tasksolve.solver.cli import main


def test_run_reports_both_designs(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["run", "t2-ipfwd-intadd-x2", "--out", str(out), "--oracle", "analytic", "--samples", "100"]
    args += ["--compare-samples", "60", "--time-limit", "5", "--workers", "1", "--methods", "cpsat", "--json"]
    # --deterministic: CP-SAT's 5 s are deterministic time, so it proves the optimum on any machine;
    # `proven`, exit 0: the plan is that optimum on the closed form it is measured on
    assert main([*args, "--deterministic"]) == 0
    cert = json.loads((out / "certificate.json").read_text())
    designs = cert["designs"]
    assert [d["design"] for d in designs] == ["local-optima", "random"] and designs[1]["n"] == 60
    assert (out / "samples-random.jsonl").is_file()
    assert designs[0]["estimate"] == cert["optimum"]["estimate"]
    page = (out / "report.html").read_text()
    assert "for comparison: random design, 60 samples" in page and '<figure id="estimates">' in page
    assert cert["bounds"][0]["proven_optimum"] is not None  # the rigorous bound is on the same chart
    assert cert["verdict"] == "proven" and cert["exit_code"] == 0


def test_without_comparison_there_is_one_design(tmp_path, capsys):
    out = tmp_path / "c"
    args = ["certify", "t2-ipfwd-intadd-x2", "--out", str(out), "--oracle", "analytic", "--samples", "50"]
    # exit 1, `not_certified`: the best of 50 random plans is far below the proven optimum
    assert main(args + ["--compare-samples", "0", "--design", "random", "--json"]) == 1
    assert json.loads((out / "certificate.json").read_text())["designs"] is None
    assert other_design("random") == "local-optima" and other_design("local-optima") == "random"


def test_design_entry_says_what_the_sample_supports():
    atom = design_entry(np.array([1.0, 2.0, 3.0, 3.0]), "local-optima", minimize=False, confidence=0.95, seed=0)
    assert atom["estimate"] == 3.0 and atom["upper"] == math.inf and atom["top_atom"]["hits"] == 2
    rng = np.random.default_rng(0)
    smooth = design_entry(1 - rng.random(2000) ** 0.5, "random", minimize=False, confidence=0.95, seed=0)
    assert "top_atom" not in smooth and smooth["lower"] <= 1.0 <= smooth["upper"] + 1e-3  # triangular tail, endpoint 1
