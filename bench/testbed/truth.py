"""The test bed's truth: a pipeline whose true rate is a known function of the placement, and
noise of known size (standard library only: `program.py` imports it and must start fast).

**The machine**: 4 cores of 2 hardware strands (8 contexts, context ``c`` is core ``c // 2``,
strand ``c % 2``), 1 GHz.  **The program**: ``INSTANCES`` instances of the pipeline R -> P -> T
(6 threads; thread ``3*i + s`` is stage ``s`` of instance ``i``), ``CYCLES`` of work per item
and stage, ``LINES`` cache lines per message, ``PRESSURE`` the stage's use of its core's
execution units.

**The true rate** (items/s summed over instances; each instance runs at its slowest stage):

* threads on one context time-share it: each gets ``1/n`` of it (tasksolve's plans never do
  this; the program accepts it);
* threads on the two strands of one core slow each other down by ``1 + A * (p_other)**1.5``
  (``p_other``: the other strand's summed pressure) -- a convex, not a linear, contention;
* a consumer pays ``HOP[level] * LINES`` cycles per item to read its producer's message,
  ``level`` being what the two contexts share (``context``, ``core``, ``machine``), times ``1.25``
  when its own core is busy on both strands (the line competes with the other strand);
* a stage's rate is ``clock * speed[core] * share / (cycles * slowdown + communication)``, the
  cores' speeds differing by up to 4% (``CORE_SPEED``: turbo bins, a neighbour's heat), which
  the spec does not know.

The spec's closed form (linear shares, per-level message cycles) can only approximate this, so
a procedure that trusts it has something to get wrong.

**The noise** (`Noise`): a measurement is ``truth * drift(t) * e * o`` with ``e`` log-normal of
coefficient of variation ``cv`` and mean 1, ``o`` an outlier factor (probability ``outlier_p``,
uniform in [0.6, 0.85]: a run slowed by the host) normalised so that ``E[o] = 1``, and
``drift(t) = 1 + drift * sin(2 pi t / period + phase)`` over the measurement index ``t``.  The
mean of a measurement is the truth times the drift, whose mean over a period is 1.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass

CLOCK_HZ = 1e9
CORES, STRANDS = 4, 2
CONTEXTS = CORES * STRANDS
INSTANCES = 2
STAGES = ("R", "P", "T")
CYCLES = (900.0, 1300.0, 700.0)
PRESSURE = (0.5, 0.9, 0.4)
LINES = 4
HOP = {"context": 5.0, "core": 20.0, "machine": 90.0}
CORE_SPEED = (1.0, 0.982, 0.96, 0.993)
A = 0.8
BUSY_CORE = 1.25
OUTLIER_LOW, OUTLIER_HIGH = 0.6, 0.85
THREADS = INSTANCES * len(STAGES)
INSENSITIVE_RATE = 1.0e6  # program.py --insensitive: the rate whatever the placement

Plan = tuple[int, ...]


def shared(a: int, b: int) -> str:
    if a == b:
        return "context"
    return "core" if a // STRANDS == b // STRANDS else "machine"


def true_rate(plan: Plan) -> float:
    """Items per second of the placement `plan` (context of each thread; module docstring)."""
    return sum(instance_rates(plan))


def instance_rates(plan: Plan) -> list[float]:
    """Each instance's items per second (its slowest stage's rate)."""
    if len(plan) != THREADS or any(not 0 <= c < CONTEXTS for c in plan):
        raise ValueError(f"a plan places {THREADS} threads on contexts 0..{CONTEXTS - 1}, got {plan!r}")
    on_context = [0] * CONTEXTS
    pressure = [0.0] * CONTEXTS
    for thread, c in enumerate(plan):
        on_context[c] += 1
        pressure[c] += PRESSURE[thread % len(STAGES)]
    found = []
    for i in range(INSTANCES):
        rates = []
        for s in range(len(STAGES)):
            c = plan[len(STAGES) * i + s]
            sibling = c ^ 1
            slowdown = 1.0 + A * pressure[sibling] ** 1.5
            comm = 0.0
            if s > 0:
                comm = HOP[shared(plan[len(STAGES) * i + s - 1], c)] * LINES
                if on_context[sibling] > 0:
                    comm *= BUSY_CORE
            rates.append(CLOCK_HZ * CORE_SPEED[c // STRANDS] / on_context[c] / (CYCLES[s] * slowdown + comm))
        found.append(min(rates))
    return found


def os_plan(rng: random.Random) -> Plan:
    """Where an unpinned run's threads land: the OS scheduler spreads them, one per core first
    (a random strand of each core, cores in random order), then the cores' other strands, and
    the threads go to those contexts in a random order (the order they woke up in)."""
    cores = list(range(CORES))
    rng.shuffle(cores)
    first = [core * STRANDS + rng.randrange(STRANDS) for core in cores]
    second = [c ^ 1 for c in first]
    rng.shuffle(second)
    contexts = (first + second)[:THREADS]
    rng.shuffle(contexts)
    return tuple(contexts)


def os_plans():
    """Every placement `os_plan` draws, each as likely (24 context sets x 720 thread orders)."""
    for full in itertools.combinations(range(CORES), THREADS - CORES):
        singles = [core for core in range(CORES) if core not in full]
        for strands in itertools.product(range(STRANDS), repeat=len(singles)):
            chosen = [core * STRANDS + s for core in full for s in range(STRANDS)]
            chosen += [core * STRANDS + s for core, s in zip(singles, strands)]
            yield from itertools.permutations(chosen)


def unpinned_rate() -> float:
    """The mean true rate of an unpinned run (the mean over `os_plans`)."""
    rates = [true_rate(plan) for plan in os_plans()]
    return sum(rates) / len(rates)


def all_plans():
    """Every placement of the threads on distinct contexts (8!/2! = 20160), as tasksolve's plans are."""
    return itertools.permutations(range(CONTEXTS), THREADS)


def canonical(plan: Plan) -> Plan:
    """One representative per class of the spec's symmetry (cores, strands of a core, instances
    relabelled); the truth is not symmetric in the cores (``CORE_SPEED``)."""
    best = None
    for core_order in itertools.permutations(range(CORES)):
        for flips in itertools.product((0, 1), repeat=CORES):
            mapped = [core_order[c // STRANDS] * STRANDS + ((c % STRANDS) ^ flips[c // STRANDS]) for c in plan]
            blocks = sorted(tuple(mapped[k : k + len(STAGES)]) for k in range(0, THREADS, len(STAGES)))
            key = tuple(x for block in blocks for x in block)
            if best is None or key < best:
                best = key
    return best


@dataclass
class Noise:
    """Multiplicative noise of known size (module docstring); `rng` draws, `t` counts measurements."""

    cv: float = 0.05
    outlier_p: float = 0.02
    drift: float = 0.01
    period: float = 200.0
    seed: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.phase = self.rng.uniform(0, 2 * math.pi)
        self.t = 0
        self.sigma = math.sqrt(math.log1p(self.cv**2))
        mean_outlier = 1.0 - self.outlier_p * (1.0 - (OUTLIER_LOW + OUTLIER_HIGH) / 2)
        self.scale = 1.0 / mean_outlier

    def factor(self, t: float | None = None) -> float:
        """One draw of ``drift(t) * e * o`` (its mean is the drift)."""
        if t is None:
            t, self.t = self.t, self.t + 1
        e = self.rng.lognormvariate(-(self.sigma**2) / 2, self.sigma)
        o = self.rng.uniform(OUTLIER_LOW, OUTLIER_HIGH) if self.rng.random() < self.outlier_p else 1.0
        return (1.0 + self.drift * math.sin(2 * math.pi * t / self.period + self.phase)) * e * o * self.scale

    def total_cv(self) -> float:
        """The coefficient of variation of ``e * o`` (drift aside): sqrt(E[(eo)^2] - 1)."""
        second_o = (1 - self.outlier_p) + self.outlier_p * (
            OUTLIER_LOW**2 + OUTLIER_LOW * OUTLIER_HIGH + OUTLIER_HIGH**2
        ) / 3
        return math.sqrt((1 + self.cv**2) * second_o * self.scale**2 - 1)


class TestBed:
    """The truth driven in process: `measure(plan)` is one noisy run, `truth(plan)` its mean."""

    def __init__(self, seed: int = 0, cv: float = 0.05, outlier_p: float = 0.02, drift: float = 0.01) -> None:
        self.noise = Noise(cv=cv, outlier_p=outlier_p, drift=drift, seed=seed)
        self.measurements = 0

    @staticmethod
    def truth(plan: Plan) -> float:
        return true_rate(tuple(plan))

    def measure(self, plan: Plan, repeat_index: int = 0) -> float:
        self.measurements += 1
        return true_rate(tuple(plan)) * self.noise.factor()
