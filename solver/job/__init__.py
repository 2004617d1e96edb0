"""The main job as one object: solve, certify, report (docs/design.md, "The main job").

`Job` runs the steps every problem kind shares; one `Strategy` per problem kind
(`solver.job.binding`, `solver.job.pipeline`; `solver.job.given` for a plan certified without
solving) supplies what differs; `JobSettings` holds every setting, resolved once from the spec
and the options; `JobResult` is what a job produced. This package sits above `binding`,
`pipeline`, `certify` and `report`, and none of them imports it.
"""

from tasksolve.solver.job.job import Job, run, strategy_for
from tasksolve.solver.job.result import JobResult
from tasksolve.solver.job.settings import JobSettings
from tasksolve.solver.job.strategy import Strategy

__all__ = ["Job", "JobResult", "JobSettings", "Strategy", "run", "strategy_for"]
