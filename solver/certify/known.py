"""A known plan: a plan measured on the certified plan's oracle, beside it.

The verdict's rules 0, 3, 5 and 7 (`solver.certify.verdict`) compare the plan with every known
plan -- the best sampled plan, CP-SAT's plan, the best of the local-search restarts, the
finalists' climbs, the plans the main job compared -- each with its 95% half-width (0 on a
deterministic oracle).  One type for all of them, built where the plan is measured; the
certificate lists them as `solver.certify.certificate.KnownPlanRow`.
"""

from __future__ import annotations

from typing import NamedTuple


class KnownPlan(NamedTuple):
    """Which plan (in words), its value in the samples' orientation, its 95% half-width, and the
    binding plan itself where it is one (each thread's context: the main job adopts a known plan
    that beats its answer beyond noise, `solver.job.job.Job.run`)."""

    plan: str
    value: float
    half_width: float = 0.0
    contexts: tuple[int, ...] | None = None
