"""`tasksolve solve` from the command line: JSON keys, the comparison, errors."""

from __future__ import annotations

import json

from tasksolve.solver.cli import main
from tasksolve.specs import load_plan, load_spec


def test_solve_json(tmp_path, capsys):
    out = tmp_path / "plan.yaml"
    code = main(
        [
            "solve",
            "t2-ipfwd-intadd-x2",
            "--method",
            "cpsat,random,balanced",
            "--time-limit",
            "10",
            "--random-plans",
            "500",
            "--workers",
            "1",
            "--deterministic",  # OPTIMAL and the label asserted below must not depend on the load
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    for key in ("method", "status", "objective", "bound", "gap", "plan", "predicted", "simulated", "comparison"):
        assert key in result
    assert result["status"] == "OPTIMAL" and result["method"] == "cpsat"
    assert result["objective"] <= result["bound"] * (1 + 1e-6)
    assert set(result["plan"]["bindings"]) == set(load_spec("t2-ipfwd-intadd-x2").thread_names)
    rows = {row["method"].split(" ")[0] for row in result["comparison"]}
    assert {"cpsat", "random", "naive", "balanced"} <= rows
    for row in result["comparison"]:
        assert {"method", "predicted", "simulated"} <= set(row)
    best = max(row["simulated"] for row in result["comparison"])
    cpsat = next(row for row in result["comparison"] if row["method"].startswith("cpsat"))
    # the exact model's plan, measured, is within the simulation's noise of the best measured row
    assert cpsat["simulated"] >= best * 0.99
    plan = load_plan(out, load_spec("t2-ipfwd-intadd-x2"))
    assert plan.bindings == result["plan"]["bindings"]


def test_solve_infeasible_names_constraints(tmp_path, capsys):
    spec = tmp_path / "tight.yaml"
    spec.write_text("""
tasksolve: 1
name: tight
topology: ultrasparc-t2
applications: {ipfwd: ipfwd-l1}
workload: [{app: ipfwd, instances: 2}]
constraints:
  contexts: [core0.pipe0, core1.pipe0.strand0, core1.pipe0.strand1]
  max_threads: {pipe: 2}
""")
    code = main(["solve", str(spec), "--time-limit", "5", "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert "constraints.contexts" in err and "constraints.max_threads" in err
    assert "Traceback" not in err


def test_solve_rejects_unknown_method(capsys):
    assert main(["solve", "t2-ipfwd-intadd-x2", "--method", "magic"]) == 2
    assert "unknown method `magic`" in capsys.readouterr().err


def test_a_failed_solver_step_is_visible_and_exits_3(capsys, monkeypatch):
    """A configuration LP that fails must not pass as success: the step is named in the text and
    the JSON, and the exit code is 3 (it was 0 with a silently weaker bound)."""
    from tasksolve.solver.binding import steps
    from tasksolve.solver.binding.configuration_lp import ConfigurationLPFailed

    def failing(*args, **kwargs):
        raise ConfigurationLPFailed("the configuration LP failed: (HiGHS Status 4: Solve error)")

    monkeypatch.setattr(steps, "configuration_bound", failing)
    code = main(
        [
            "solve",
            "t2-ipfwd-l1-x8",
            "--method",
            "cpsat",
            "--time-limit",
            "2",
            "--oracle",
            "analytic",
            "--workers",
            "1",
            "--random-plans",
            "200",
            "--json",
        ]
    )
    assert code == 3
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert result["failed_steps"] == ["configuration bound"]
    steps = {s["step"]: s for s in result["details"]["cpsat"]["steps"]}
    assert steps["configuration bound"]["outcome"] == "failed"
    assert "HiGHS" in steps["configuration bound"]["detail"]
    assert "configuration bound" in err


def test_a_large_plan_is_summarised_not_drawn(capsys, monkeypatch):
    from tasksolve.solver.cli import solve_command

    monkeypatch.setattr(solve_command, "PLAN_TREE_MAX", 3)
    code = main(["solve", "t2-ipfwd-intadd-x2", "--method", "cpsat", "--time-limit", "5", "--workers", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "6 threads, not listed above 3" in " ".join(out.split()) and "strand" not in out


def test_the_comparison_table_shows_only_half_widths_that_are_noise():
    """A deterministic run's float noise (5e-9 pps on 4.4 Mpps) prints as no half-width, a
    simulated one in two significant digits and its unit, none as nothing."""
    from types import SimpleNamespace

    from tasksolve.solver.cli.solve_command import half_width_cell
    from tasksolve.specs.objective import Objective

    objective = Objective.of("total_throughput")
    row = SimpleNamespace(simulated=4.4e6, half_width=5.457e-9)
    assert half_width_cell(row, objective) == ""
    assert (
        half_width_cell(SimpleNamespace(simulated=4.4e6, half_width=19342.2), objective) == "19 kpps"
    )  # two significant digits
    assert half_width_cell(SimpleNamespace(simulated=None, half_width=None), objective) == ""
