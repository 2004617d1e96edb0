"""CP-SAT's parameters and the solve call, in one place for every model of `solver`.

* `make_solver` sets the time limit, workers and seed. With ``deterministic_time`` the run is
  repeatable: CP-SAT stops on its deterministic work count (a wall-clock guard of
  ``DETERMINISTIC_WALL_GUARD`` times that still applies) and a fixed portfolio of
  ``DETERMINISTIC_WORKERS`` subsolvers is interleaved in one deterministic schedule
  (``interleave_search``), whatever worker count was asked for: a seed gives the same answer on
  every run and with every ``--workers`` (which then sets only how many processes measure plans).
* `solve` runs the search and puts Python's SIGINT and SIGTERM handlers back afterwards: OR-Tools
  installs its own SIGINT handler (Ctrl-C stops the search and keeps the best plan found), which
  otherwise stays in place and makes a later Ctrl-C kill the process without the message that
  says what was kept.
"""

from __future__ import annotations

import signal
import threading

from ortools.sat.python import cp_model

DETERMINISTIC_WALL_GUARD = 20.0  # wall-clock guard, in multiples of a deterministic limit
DETERMINISTIC_WORKERS = 2  # the interleaved portfolio of a repeatable run, whatever --workers says


def make_solver(
    *,
    time_limit: float | None,
    workers: int = 1,
    seed: int = 0,
    deterministic_time: float | None = None,
    log: bool = False,
) -> cp_model.CpSolver:
    """A `CpSolver` with the project's parameters (module docstring)."""
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.num_workers = max(1, int(workers))
    params.random_seed = int(seed)
    params.log_search_progress = bool(log)
    if deterministic_time is not None:
        params.max_deterministic_time = float(deterministic_time)
        guard = DETERMINISTIC_WALL_GUARD * float(deterministic_time)
        params.max_time_in_seconds = max(guard, float(time_limit)) if time_limit is not None else guard
        params.num_workers = DETERMINISTIC_WORKERS
        params.interleave_search = True
    elif time_limit is not None:
        params.max_time_in_seconds = max(0.01, float(time_limit))
    return solver


def solve(solver: cp_model.CpSolver, model: cp_model.CpModel, callback=None) -> int:
    """``solver.solve(model)`` with Python's signal handlers restored afterwards (OR-Tools installs
    its own); the status code.  Handlers belong to the main thread: a solve called from another
    thread leaves them to its caller (Python refuses `signal.signal` there)."""
    if threading.current_thread() is not threading.main_thread():
        return solver.solve(model, callback) if callback is not None else solver.solve(model)
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return solver.solve(model, callback) if callback is not None else solver.solve(model)
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)
