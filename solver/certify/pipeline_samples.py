"""Pipeline samples for the sampling service (`solver.certify.service`): what one sample of a
pipeline problem is, in each design (`solver.certify.designs` for bindings).

* ``random`` -- sample ``i`` is the random valid pipeline plan of `solver.pipeline.sampling`
  drawn with ``numpy.random.default_rng([seed, i])`` (one generator per sample: the first n
  samples do not depend on how many are wanted), measured on the oracle.
* ``local-optima`` -- sample ``i`` starts from that same plan and climbs by steepest descent on
  the pipeline closed form (`solver.pipeline.local_search.climb`: merge, split, move a task,
  add or remove a replica, move a replica's context) to a local optimum, which is measured on
  the oracle.  The climb is deterministic, so the sample depends on its start only.  Unlike the
  binding design, no neighbour is screened on the oracle: one plan is measured per sample.

A sample's plan is stored in its record as `solver.pipeline.sampling.encode`'s JSON (``groups``:
task indices per group, ``contexts``: contexts per group), its start (local optima) likewise; the
record's ``contexts`` is the flat list of the plan's contexts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tasksolve.solver.pipeline.local_search import climb
from tasksolve.solver.pipeline.plans import to_plan
from tasksolve.solver.pipeline.problem import PipelineProblem
from tasksolve.solver.pipeline.sampling import decode, encode, random_candidate

if TYPE_CHECKING:
    from tasksolve.simulate.measurement import Measurement
    from tasksolve.solver.certify.designs import PlanOracle

#: a pipeline plan as JSON (`solver.pipeline.sampling.encode`): ``groups`` (task indices per group)
#: and ``contexts`` (contexts per group)
PlanJSON = dict[str, list[list[int]]]


def identity(design: str) -> dict[str, object]:
    """The samples header's ``plans`` entry (a change refuses --resume)."""
    plans: dict[str, object] = {
        "sampler": "random pipeline plan (random topological order, uniform cuts and context sets, rejection)",
        "stream": "default_rng([seed, index]) per sample",
    }
    if design == "local-optima":
        plans["local_search"] = {
            "start": "random pipeline stream",
            "climb": "steepest descent, merge/split/move/replica/context moves, pipeline closed form",
            "screened": 1,
        }
    return plans


class PipelineSampler:
    """Draws and measures the samples of one pipeline problem (module docstring)."""

    def __init__(self, problem: PipelineProblem, design: str) -> None:
        self.problem = problem
        self.design = design

    def draw(self, seed: int, index: int) -> PlanJSON:
        """Plan `index` of the stream, as JSON."""
        return encode(random_candidate(self.problem, np.random.default_rng([seed, index])))

    def sample(self, oracle: PlanOracle, drawn: PlanJSON, seed: int) -> tuple[PlanJSON, int | None, Measurement]:
        """(the plan measured, improving moves or None, its measurement on `oracle` with `seed`)."""
        cand, steps = decode(drawn), None
        if self.design == "local-optima":
            cand, _, steps = climb(self.problem, cand)
        return encode(cand), steps, oracle.evaluate(to_plan(self.problem, cand, "sample"), seed=seed)


def flat_contexts(drawn: PlanJSON) -> list[int]:
    return [int(c) for group in drawn["contexts"] for c in group]
