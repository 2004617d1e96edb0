"""Sampling designs for the certificate: what one iid sample of the SamplingService is.

* ``random`` -- ASPLOS'12 section 3.2: plan ``i`` of the uniform stream, measured on the oracle.
  Its upper endpoint is the optimum, but an optimum of probability 1e-15 is out of reach of any
  sample: the tail seen is far below it and the endpoint estimate is biased low.
* ``local-optima`` -- the distribution of local optima of iid random restarts has the same upper
  endpoint (the global optimum is a local optimum) and puts far more mass near it (Golden & Alt
  1979, "Interval estimation of a global optimum for large combinatorial problems"; Derigs 1985;
  Wilson, King & Wilson, EJOR 2004).  Sample ``i`` starts from plan ``i`` of the same uniform
  stream and climbs by the ascent of `solver.binding.local_search` (steepest wherever the
  move/swap neighbourhood fits one batch of `STEP_BATCH`, best of the first improving batch
  beyond) on the closed form (`simulate.analytic.BatchModel`) until no
  move improves; its random choices (neighbourhood sampling beyond `MAX_NEIGHBOURS`) use the
  sample's own seed ``plan_seed(seed, i)``, so samples are iid and reproducible whatever the
  executor.  With the closed form as oracle the local optimum's value is the sample.  With the
  simulation, the closed form screens: the local optimum and its `SCREEN` - 1 best neighbours
  (by the closed form) are simulated and the best measured is the sample (one iid value per
  restart; the closed form's local optimum need not be the simulation's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from tasksolve.solver.binding.local_search import STEP_BATCH, LocalSearch
from tasksolve.specs import Plan

if TYPE_CHECKING:
    from tasksolve.simulate.measurement import Measurement

#: the default of `certify`, `run` and the CLI's --design (see BENCHMARKS.md, "Certificates against the truth")
DEFAULT_DESIGN = "local-optima"

#: the fixed sample size when neither the spec (certify.samples) nor --samples gives one: a local
#: optimum costs a local search, and 200 of them reached a 1% interval where 20,000 random plans did
#: not (BENCHMARKS.md); 1000 stays above the threshold rule's minimum of 600 (`solver.certify.verdict`)
DEFAULT_SAMPLES = {"local-optima": 1000, "random": 5000}

#: plans simulated per restart on the simulation (the closed form's local optimum + best neighbours)
SCREEN = 3


class PlanOracle(Protocol):
    """What the samplers ask of an oracle: one plan measured with a seed.  Every
    `simulate.oracle.Oracle` offers it, and so do the certifier's class-keyed oracles
    (`solver.certify.measure.ClassOracle`, `solver.certify.truth.ClassTable`), which measure one
    plan at a time only."""

    def evaluate(self, plan: Plan, seed: int | None = None) -> Measurement: ...


def identity(screen: bool) -> dict[str, object]:
    """What the samples header records of the design (a change refuses --resume)."""
    return {
        "start": "uniform stream",
        "climb": "steepest ascent, move/swap neighbourhood, closed form",
        "batch": STEP_BATCH,
        "screened": SCREEN if screen else 1,
    }


class Climber:
    """One local-optima sample from a start plan (see the module docstring)."""

    def __init__(self, spec, objective: str, screen: bool, cut: float | None = None) -> None:
        self.spec = spec
        self.search = LocalSearch(spec, objective)
        self.screen = screen
        self.cut = cut  # a `time.monotonic()` reading: past it the climb stops (`BudgetCut`)

    def _check_cut(self) -> None:
        import time

        from tasksolve.solver.certify.budget import BudgetCut

        if self.cut is not None and time.monotonic() >= self.cut:
            raise BudgetCut("the certify budget ended during a local-search restart")

    def climb(self, start: list[int], seed: int) -> tuple[np.ndarray, float, int]:
        """(local optimum, its closed-form value, improving moves) from `start`."""
        search = self.search
        search.rng = np.random.default_rng(seed)
        plan = np.asarray(start, dtype=np.intp)
        value = float(search.values(plan[None, :])[0])
        if not np.isfinite(value):
            raise ValueError("the start plan breaks a cap or the latency bound")
        steps = 0
        while (found := search.step(plan, value)) is not None:
            (plan, value), steps = found, steps + 1
            self._check_cut()
        return plan, value, steps

    def sample(self, oracle: PlanOracle, start: list[int], seed: int) -> tuple[list[int], int, Measurement]:
        """(the plan measured, improving moves, its measurement on `oracle` with `seed`); raises
        `BudgetCut` past the climber's `cut` (while climbing or before a screened plan's measurement)."""
        plan, _, steps = self.climb(start, seed)
        candidates = [plan]
        if self.screen and SCREEN > 1:
            candidates += self.search.best_neighbours(plan, SCREEN - 1)
        best = None
        for contexts in candidates:
            self._check_cut()
            chosen = [int(c) for c in contexts]
            measured = oracle.evaluate(Plan.from_contexts(self.spec, chosen), seed=seed)
            score = measured.value(self.search.objective)
            if best is None or score > best[0]:
                best = (score, chosen, measured)
        return best[1], steps, best[2]


#: local-search restarts every certificate measures as known plans (`probe`)
PROBES = 10


def probe(
    spec,
    oracle,
    objective: str,
    seed: int,
    restarts: int = PROBES,
    screen: bool = False,
    deadline: float | None = None,
    cut: float | None = None,
) -> tuple[float, list[int]] | None:
    """The best of `restarts` seeded local-search restarts measured on `oracle`: a known plan that
    refutes an estimate it beats.  Uniform random plans alone can be *wrongly* certified (their
    tail says nothing of an optimum of probability 1e-15: BENCHMARKS.md, "Certificates against
    the truth"); a few climbs from random starts reach far better plans.  Returns (value in the
    samples' orientation, plan), or None when no start is valid.  With a `deadline`
    (`time.monotonic()` seconds: the certify phase's budget, `solver.certify.budget`) no restart
    starts after it once one has finished; the restarts done are the first of the same stream.
    With `cut` (the budget's hard deadline, given when the verdict does not need the probe) no
    restart is forced: none starts past `deadline`, and one still climbing at `cut` is dropped
    (`BudgetCut`)."""
    import time

    from tasksolve.simulate.oracle import plan_seed
    from tasksolve.solver.binding.samplers import uniform_plans
    from tasksolve.solver.certify.budget import BudgetCut

    climber = Climber(spec, objective, screen=screen, cut=cut)
    starts = uniform_plans(spec, restarts, np.random.default_rng([seed, 0x70726F6265]))
    best = None
    for i, start in enumerate(starts):
        if (best is not None or cut is not None) and deadline is not None and time.monotonic() >= deadline:
            break
        try:
            plan, _, measured = climber.sample(oracle, [int(c) for c in start], plan_seed(seed + 1, i))
        except BudgetCut:
            break
        except Exception:  # an invalid start or a failed measurement: the probe is evidence, not a must
            continue
        score = measured.value(objective)
        if best is None or score > best[0]:
            best = (score, plan, measured.natural(objective))
    return None if best is None else (best[2], best[1])
