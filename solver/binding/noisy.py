"""Selection under noise: the finalists of `tasksolve solve` raced on a stochastic oracle, the OS
scheduler's unpinned run among them, and the verdict whether pinning helps at all.

On an oracle whose every run is a noisy draw (the command oracle: it has ``run_once`` and
``unpinned``), the best *measured* plan of a comparison is not the best plan: with a few
repeats of ten finalists at 5% noise, the winner's curse picks a plan by luck.  So the
finalists -- CP-SAT's K best, the predictors' best of their top N and their top 1, the best
sampled plan, and the program *unpinned* (``TASKSOLVE_PINNING=none``, `simulate.pinning`) --
are raced with `solver.selection.racing.race` (Kim & Nelson 2001 with Hsu's stop, an indifference
zone ``zone`` relative to the best mean, default 2%).  The answer is the race's best *pinned*
plan with the interval of its confirmation runs; plans the race could not tell from it (within
the zone, or still racing when the budget ran out) are reported as ties.

The verdict (the first line `tasksolve solve` prints) is decided on *fresh* paired runs of the
race's best pinned plan and the unpinned run (`_duel`: the race's own means of its winner are
biased upward by the selection, which made "helps" come out on 15% of programs placement does not
affect, `bench/pinning_verdict.py`): pinning **helps** when the paired 95% interval of their
difference lies above 0 and its mean is at least the zone; it **does not measurably help** when
the interval lies below the zone (the OS scheduler within 2% of the best pinned plan, or better);
else it is **undecided** within the budget; always with both means, their intervals and the
host's noise floor (`simulate.noise.noise_floor`).

Departures: a race is only run on an oracle with ``run_once`` (the command oracle); a simulation
with a nonzero half-width would race replications of whole simulations, which this does not do
yet (its finalists are compared by their intervals as before).  The race's budget is the
oracle's ``budget`` (runs per plan) times the finalists, when set.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from tasksolve.specs.files import finite_or_none

UNPINNED = "unpinned (OS scheduler)"


@dataclass
class Finalist:
    """One plan in the race: its label, its contexts (None unpinned) and its placement."""

    label: str
    contexts: list[int] | None
    placement: Any


@dataclass
class NoiseVerdict:
    """The race's answer, the unpinned baseline's figure and the verdict on pinning."""

    zone: float
    noise_floor: float | None
    best: str
    best_contexts: list[int] | None
    mean: float  # natural orientation
    half_width: float
    baseline_mean: float | None
    baseline_half_width: float | None
    pinning_helps: bool | None  # None: not decided (no baseline, or the budget ran out first)
    ties: list[str] = field(default_factory=list)
    race: dict[str, Any] = field(default_factory=dict)
    baseline_note: str = ""  # why the unpinned run is missing

    def headline(self, objective) -> str:
        """Whether pinning helps at all, with the figures behind it."""
        floor = "unknown" if self.noise_floor is None else f"{self.noise_floor:.1%}"
        best = objective.format(self.mean, self.half_width)
        if self.baseline_mean is None:
            return (
                f"whether pinning helps is unknown: {self.baseline_note or 'the unpinned run was not measured'}; "
                f"best pinned plan {best}, host noise floor {floor}"
            )
        base = objective.format(self.baseline_mean, self.baseline_half_width)
        change = objective.loss(self.baseline_mean, self.mean)
        gain = "" if change is None else f" (the OS scheduler {abs(change):.1%} {'worse' if change > 0 else 'better'})"
        if self.pinning_helps is None:
            return (
                f"whether pinning helps is undecided: {UNPINNED} {base} vs best pinned plan {best}{gain} "
                f"not told apart within oracle.budget paired runs; raise it; host noise floor {floor}"
            )
        if self.pinning_helps:
            return (
                f"pinning helps: best pinned plan {best} vs {UNPINNED} {base}{gain}; "
                f"zone {self.zone:.0%}, host noise floor {floor} (CV of repeated runs)"
            )
        return (
            f"pinning does not measurably help: {UNPINNED} {base} vs best pinned plan {best}{gain}, "
            f"within the {self.zone:.0%} zone; host noise floor {floor} (CV of repeated runs)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "zone": self.zone,
            "noise_floor": self.noise_floor,
            "best": self.best,
            "best_contexts": self.best_contexts,
            "mean": self.mean,
            "half_width": finite_or_none(self.half_width),
            "baseline": None
            if self.baseline_mean is None
            else {"mean": self.baseline_mean, "half_width": finite_or_none(self.baseline_half_width)},
            "pinning_helps": self.pinning_helps,
            "ties": self.ties,
            "race": self.race,
        }


def stochastic(oracle) -> bool:
    """Whether finalists are raced on `oracle` (module docstring)."""
    return callable(getattr(oracle, "run_once", None)) and callable(getattr(oracle, "unpinned", None))


def race_finalists(
    oracle, finalists: list[Finalist], objective: str, *, zone: float, seed: int, say=lambda _: None
) -> NoiseVerdict:
    """Race `finalists` plus the unpinned baseline on `oracle` (module docstring)."""
    from tasksolve.simulate.errors import OracleError
    from tasksolve.solver.selection.racing import race
    from tasksolve.specs.objective import Objective

    kind = Objective.of(objective)
    plans = _distinct(finalists)
    baseline_note = ""
    try:  # a program that cannot run unpinned still gets its finalists raced
        oracle.run_once(oracle.unpinned(), seed)
        plans.append(Finalist(UNPINNED, None, oracle.unpinned()))
    except OracleError as exc:
        baseline_note = f"the program failed when told TASKSOLVE_PINNING=none ({str(exc)[:300]})"
        say(f"no unpinned baseline: {baseline_note}")
    policy = oracle.policy
    if len(plans) < 2:  # nothing to race: the one finalist measured as any plan is
        return _alone(oracle, plans[0], objective, zone, seed, baseline_note)

    def measure(i: int, repeat: int) -> float:
        figure, instances = oracle.run_once(plans[i].placement, seed)
        if objective == "min_throughput" and instances:
            figure = min(instances.values())
        return float(kind.score(figure))

    say(f"racing {len(plans)} finalists with a {zone:.0%} indifference zone")
    result = race(
        list(range(len(plans))),
        measure,
        zone=zone,
        n0=max(5, policy.repeats),
        warmup=policy.warmup,
        budget=None if policy.budget is None else policy.budget * len(plans),
        seed=seed,
    )
    stats = {s.plan: s for s in result.stats}
    base = len(plans) - 1 if not baseline_note else None
    pinned = [i for i in range(len(plans)) if i != base and stats[i].values]
    if result.best != base:
        best, mean, half = result.best, result.mean, result.half_width
    else:  # the OS scheduler won: the best pinned plan by its race mean
        best = max(pinned, key=lambda i: stats[i].mean)
        mean, half = stats[best].mean, stats[best].half_width()
    tied = {i for i in pinned if i != best and _within(stats[best], stats[i], zone * abs(mean), result.stopped)}
    duel = None
    if base is not None:
        say(f"measuring {plans[best].label} against the unpinned run, interleaved, for the verdict")
        duel = _duel(lambda i: measure(i, 0), best, base, zone, policy)
        mean, half = duel.best_mean, duel.best_half
    data = _race_data(result, plans, kind, tied)
    return NoiseVerdict(
        zone=zone,
        noise_floor=oracle.noise_floor(),
        best=plans[best].label,
        best_contexts=plans[best].contexts,
        mean=float(kind.score(mean)),
        half_width=half,
        baseline_mean=None if duel is None else float(kind.score(duel.base_mean)),
        baseline_half_width=None if duel is None else duel.base_half,
        pinning_helps=None if duel is None else duel.helps,
        ties=[plans[i].label for i in sorted(tied)],
        race={**data, "duel": None if duel is None else duel.to_dict()},
        baseline_note=baseline_note,
    )


def _race_data(result, plans: list[Finalist], kind, tied: set[int]) -> dict[str, Any]:
    """The race's JSON with the plans' labels and contexts, means in natural orientation."""
    data = result.to_dict()
    data["best"] = plans[result.best].label
    data["ties"] = [plans[i].label for i in sorted(tied)]
    for entry in data["plans"]:
        entry["contexts"] = plans[entry["plan"]].contexts
        entry["plan"] = plans[entry["plan"]].label
        entry["mean"] = float(kind.score(entry["mean"]))
        entry["half_width"] = finite_or_none(entry["half_width"])
    return data


@dataclass
class Duel:
    """Fresh paired runs of the best pinned plan and the unpinned run (race orientation)."""

    best_mean: float
    best_half: float
    base_mean: float
    base_half: float
    difference: float
    difference_half: float
    rounds: int
    helps: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {k: finite_or_none(v) if isinstance(v, float) else v for k, v in self.__dict__.items()}


DUEL_LOOKS = (10, 20, 40, 80, 160)  # rounds at which the duel may decide (Bonferroni over them)


def _duel(measure, best: int, base: int, zone: float, policy) -> Duel:
    """The verdict on fresh runs, free of the race's winner's curse: rounds of (best, unpinned),
    never one back to back, up to ``max(10, budget)`` rounds; at each look the paired interval
    of ``best - unpinned`` (level ``1 - 0.05 / looks``) decides: pinning **helps** when it lies
    above 0 and its mean is at least the zone (``zone`` times the best's mean); it does **not**
    help when it lies below the zone; else the next look, and **undecided** at the end."""
    from tasksolve.simulate.noise import t_interval

    most = max(DUEL_LOOKS[0], policy.most)
    looks = [n for n in DUEL_LOOKS if n < most] + [most]
    level = 1 - 0.05 / len(looks)
    ours: list[float] = []
    theirs: list[float] = []
    helps = None
    for rounds in range(1, most + 1):
        ours.append(measure(best))
        theirs.append(measure(base))
        if rounds not in looks:
            continue
        diff, half = t_interval([a - b for a, b in zip(ours, theirs)], level)
        delta = zone * abs(sum(ours) / len(ours))
        if diff - half > 0 and diff >= delta:
            helps = True
        elif diff + half < delta:
            helps = False
        if helps is not None:
            break
    best_mean, best_half = t_interval(ours)
    base_mean, base_half = t_interval(theirs)
    diff, half = t_interval([a - b for a, b in zip(ours, theirs)], level)
    return Duel(best_mean, best_half, base_mean, base_half, diff, half, len(ours), helps)


def _alone(oracle, finalist: Finalist, objective: str, zone: float, seed: int, note: str) -> NoiseVerdict:
    """The verdict with one finalist and no baseline: its measurement, pinning undecided."""
    from tasksolve.solver.binding.report import half_width
    from tasksolve.specs.objective import Objective

    kind = Objective.of(objective)
    measured = oracle.measure([finalist.placement], [seed])[0]
    return NoiseVerdict(
        zone=zone,
        noise_floor=oracle.noise_floor(),
        best=finalist.label,
        best_contexts=finalist.contexts,
        mean=float(measured.natural(objective)),
        half_width=half_width(measured, kind),
        baseline_mean=None,
        baseline_half_width=None,
        pinning_helps=None,
        baseline_note=note,
    )


def _paired(a, b) -> tuple[float, float]:
    """Mean and 95% half-width of ``a - b`` over their common rounds (paired: the race measures
    the plans of a round back to back, so drift cancels)."""
    from tasksolve.solver.selection.racing import t_half_width

    n = min(a.n, b.n)
    diffs = [x - y for x, y in zip(a.values[:n], b.values[:n])]
    return (sum(diffs) / n if n else 0.0), t_half_width(diffs)


def _within(best, other, delta: float, stopped: str) -> bool:
    """A tie with the best: its mean within the zone, or still racing when the budget ran out."""
    if best.mean - other.mean < delta:
        return True
    return stopped == "budget spent" and other.eliminated_at is None


def _distinct(finalists: list[Finalist]) -> list[Finalist]:
    """The finalists, one per plan (the first label kept)."""
    seen, out = set(), []
    for f in finalists:
        key = tuple(f.contexts or ())
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def with_figure(measurement, objective: str, mean: float, half_width: float):
    """`measurement` with its objective's figure replaced by the race's (natural orientation)."""
    import math

    half = half_width if math.isfinite(half_width) else math.inf
    if objective == "latency":
        return replace(measurement, latency_mean=mean, latency_p50=mean, latency_half_width=half)
    if objective == "min_throughput":
        return replace(measurement, min_throughput=mean)
    return replace(measurement, throughput=mean, half_width=half)
