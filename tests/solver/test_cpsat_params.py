"""solver.cpsat: one parameters helper; Python's signal handlers survive a CP-SAT solve."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import os, signal, sys, time
from ortools.sat.python import cp_model
from tasksolve.solver import cpsat
m = cp_model.CpModel(); x = m.new_int_var(0, 10, "x"); m.maximize(x)
solver = cpsat.make_solver(time_limit=1, workers=1)
{solve}
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted")
"""


def run(solve: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(solve=solve)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    return done.stdout.strip()


def test_ctrl_c_after_a_solve_raises_keyboard_interrupt():
    assert run("cpsat.solve(solver, m)") == "interrupted"


def test_ortools_alone_swallows_ctrl_c_after_a_solve():
    """The reason for `cpsat.solve`: without it, SIGINT after a solve does not reach Python."""
    assert run("solver.solve(m)") != "interrupted"


def test_deterministic_parameters_do_not_depend_on_the_worker_count():
    from tasksolve.solver.cpsat import make_solver

    params = [make_solver(time_limit=5, workers=w, seed=3, deterministic_time=2).parameters for w in (1, 2, 8)]
    for p in params:
        assert p.max_deterministic_time == 2 and p.interleave_search and p.random_seed == 3
        assert p.max_time_in_seconds >= 5
    assert len({str(p) for p in params}) == 1 and {p.num_workers for p in params} == {2}


def test_deterministic_solve_gives_the_same_plans_for_one_and_two_workers():
    """The three best plans of a deterministic binding solve (ties among them are broken by the
    search path) are the same with 1 and 2 workers, and on a second run."""
    from tasksolve.solver.binding.cpsat import solve_binding
    from tasksolve.solver.binding.problem import BindingProblem
    from tasksolve.specs import load_spec

    problem = BindingProblem(load_spec("t2-ipfwd-intadd-x2"))
    runs = [
        solve_binding(problem, time_limit=10, workers=w, seed=5, deterministic_time=1.0, top_k=3) for w in (1, 2, 1)
    ]
    answers = {tuple(tuple(s.contexts) for s in r.solutions) for r in runs}
    assert len(answers) == 1 and len(next(iter(answers))) == 3
