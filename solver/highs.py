"""HiGHS's MIP solve (SciPy's `milp`) in one place for every model of `solver`, its stray output
kept off standard output.

The HiGHS inside SciPy (1.17.1 here) prints a debug line, ``HighsMipSolverData::
transformNewIntegerFeasibleSolution tmpSolver.run();``, from C++ to the process's standard output
whenever it repairs an integer solution found for its presolved model (reported upstream as HiGHS
issue 2783; ``disp`` does not stop it): it landed in the middle of `tasksolve run --json`'s output
on a 24-context SMT tree and broke the JSON.  So `milp` runs inside
`solver.stdout_guard.stdout_to_stderr`: what the solver prints goes to stderr, beside the progress
lines, whatever command or library call ran it.
"""

from __future__ import annotations

from tasksolve.solver.stdout_guard import stdout_to_stderr


def milp(*args, **kwargs):
    """`scipy.optimize.milp` with anything the solver writes to stdout sent to stderr."""
    from scipy.optimize import milp as scipy_milp

    with stdout_to_stderr():
        return scipy_milp(*args, **kwargs)
