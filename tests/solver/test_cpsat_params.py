"""solver.cpsat: one parameters helper; Python's signal handlers survive a CP-SAT solve."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import os, signal, sys, time
from ortools.sat.python import cp_model
from solver import cpsat
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
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(solve=solve)], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    return done.stdout.strip()


def test_ctrl_c_after_a_solve_raises_keyboard_interrupt():
    assert run("cpsat.solve(solver, m)") == "interrupted"


def test_ortools_alone_swallows_ctrl_c_after_a_solve():
    """The reason for `cpsat.solve`: without it, SIGINT after a solve does not reach Python."""
    assert run("solver.solve(m)") != "interrupted"


def test_deterministic_parameters():
    solver = __import__("solver.cpsat", fromlist=["make_solver"]).make_solver(
        time_limit=5, workers=2, seed=3, deterministic_time=2)
    p = solver.parameters
    assert p.max_deterministic_time == 2 and p.interleave_search and p.random_seed == 3 and p.num_workers == 2
    assert p.max_time_in_seconds >= 5
