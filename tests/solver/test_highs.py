"""`solver.highs`: what HiGHS prints never reaches standard output (where `--json` results go)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter whose stdout is a pipe, buffered as a user's would be (no
    PYTHONUNBUFFERED)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )


def test_c_and_python_output_in_the_block_goes_to_stderr_and_the_rest_stays_on_stdout():
    # stdout is a pipe here, so both Python's and C's stdout are block-buffered: without the
    # flushes, "before" would follow the switch to stderr and "noise from C" would be written
    # to the real stdout at exit
    done = _python(
        """
        import ctypes, sys
        from tasksolve.solver.highs import stdout_to_stderr
        libc = ctypes.CDLL(None)
        print("before", end="")
        with stdout_to_stderr():
            libc.printf(b"noise from C\\n")
            print("noise from Python")
        print(" after")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "before after\n"
    assert "noise from C" in done.stderr and "noise from Python" in done.stderr


def test_the_block_runs_where_stdout_is_closed():
    done = _python(
        """
        import os, sys
        from tasksolve.solver.highs import stdout_to_stderr
        sys.stdout.flush()
        os.close(1)
        with stdout_to_stderr():
            sys.stderr.write("ran\\n")
        """
    )
    assert done.returncode == 0, done.stderr
    assert "ran" in done.stderr


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
    done = _python(
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
