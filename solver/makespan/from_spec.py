"""A spec's application as a `TaskGraph` for latency scheduling (`tasksolve makespan`).

Durations are the tasks' cycles rounded to whole cycles; each edge carries the communication
delay a consumer pays when its producer ran on another processor: the machine-level message
cost of the spec's topology (`Topology.message_cycles(-1, bytes)`), rounded up.  Processors in the
makespan problem are anonymous, so the machine level is the one cost that holds for any pair.
"""

from __future__ import annotations

import math
from pathlib import Path

from tasksolve.solver.makespan.taskgraph import Edge, TaskGraph
from tasksolve.specs import SpecError, load_spec
from tasksolve.specs.errors import did_you_mean


def graph_from_spec(path: str | Path, app_name: str | None = None) -> TaskGraph:
    """The task graph of application `app_name` (default: the only, or the first, application)."""
    try:
        spec = load_spec(path)
    except SpecError as exc:
        raise ValueError("\n".join(exc.lines())) from None
    apps = list(spec.applications)
    if app_name is None:
        app_name = apps[0]
    elif app_name not in spec.applications:
        raise ValueError(
            f"{path}: no application `{app_name}` (applications: {', '.join(apps)}){did_you_mean(app_name, apps)}"
        )
    app = spec.applications[app_name]
    durations = {name: max(1, round(task.work)) for name, task in app.tasks.items()}
    edges = [Edge(e.source, e.target, math.ceil(spec.topology.message_cycles(-1, e.bytes))) for e in app.edges]
    return TaskGraph(durations, edges)
