"""`solver.highs`: what HiGHS prints never reaches standard output (where `--json` results go)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.solver.test_stdout_guard import python

ROOT = Path(__file__).resolve().parents[2]


def test_every_milp_call_goes_through_the_guard():
    pattern = re.compile(r"from scipy\.optimize import[^\n]*\bmilp\b|scipy\.optimize\.milp|optimize\.milp\(")
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("solver", "simulate", "evt", "specs")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != "highs.py" and pattern.search(path.read_text())
    ]
    assert offenders == []


def test_a_binding_solve_whose_highs_repairs_a_solution_leaves_stdout_clean():
    # the 1x12x2 tree of the hybrid's family: at this deterministic limit the configuration plan's
    # MIP repairs a presolved solution, and SciPy's HiGHS prints its debug line (when it still
    # does, the line is on stderr)
    done = python(
        """
        import sys
        sys.path.insert(0, "bench")
        import kinds_speed
        from tasksolve.specs import load_spec_text
        from tasksolve.solver.binding.cpsat import solve_binding
        from tasksolve.solver.binding.problem import BindingProblem

        spec = load_spec_text(kinds_speed.twin_text("alderlake-ids@1x12x2"), "<twin>")
        result = solve_binding(
            BindingProblem(spec), top_k=5, time_limit=0.5, workers=1, seed=0, deterministic_time=0.5
        )
        print("status", result.status)
        """
    )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"status [A-Z_]+\n", done.stdout), done.stdout
