"""Certificates on a stochastic oracle: the yardstick re-measured, every gap with its interval, EVT
only where the measurement noise is small beside the tail's spread.

On an oracle whose every run is a noisy draw (the command oracle: it has ``run_once``), three of
the certificate's figures would otherwise be noise presented as findings:

* **The yardstick.**  The best sampled plan is the largest of many noisy figures, so its figure is
  biased upward by the selection (the winner's curse; `solver.selection.racing` re-measures its
  winner for the same reason).  So it is *re-measured* (`paired_gap`): fresh runs of the plan
  being certified and of the yardstick, made in rounds (plan, yardstick, plan, yardstick, ...:
  never one plan back to back, so a slow drift of the host falls on both alike), ``warmup``
  rounds discarded, then ``LOOKS`` rounds: 10, then 20, then 40, stopping at the first look whose
  interval is within ``precision`` (a quarter of the target gap) -- a rule on the interval's
  width only, never on its centre.  The sampled figure is shown beside the fresh one and never
  used.  When the plan *is* the best sampled plan (one placement class) the yardstick is the best
  sampled plan of another class.
* **The gap.**  ``gap = (plan - yardstick) / |yardstick|`` with the paired Student-t interval of
  the round differences ``d_j = x_plan,j - x_yard,j`` divided by the yardstick's fresh mean
  (Law, *Simulation Modeling and Analysis*, 5th ed., §10.2.1, the paired-t confidence interval
  for comparing two systems; the ratio's own error, the yardstick mean's relative half-width times
  the gap, is second order and left out).  The verdict reads it
  (`solver.certify.verdict`, rules 3 and 7): the yardstick is *distinguishably better* when the
  interval of its advantage lies above 0, better *by more than the target* when it lies above
  the target.
* **The tail.**  EVT fits the top of the sample (ASPLOS'12 §3.3.2, step 3: the excesses over the
  threshold).  A noisy figure is ``truth + e``: the excesses' spread is the tail's and the
  noise's together, and the endpoint of ``truth + e`` is the truth's endpoint *plus* the largest
  error among the excesses -- about ``sigma_e * sqrt(2 ln m)`` for ``m`` normal errors (the
  expected maximum of ``m`` normal variables, Cramér 1946, §28.6) -- an upward bias no interval
  of the GPD accounts for.  `tail_noise` is the test: the noise's share of the excesses'
  variance, ``sigma_e**2 / s**2`` (``s``: the excesses' standard deviation; ``sigma_e``: the
  median standard deviation of one sampled figure, its 95% half-width / 1.96), is one minus
  the *reliability ratio* of the excesses (Fuller, *Measurement Error Models*, 1987, §1.1);
  EVT is fitted only when it is at most `MAX_NOISE_SHARE` (reliability at least 0.9), else the
  certificate says that the host's noise hides the tail and by how much (reason
  ``noise_hides_tail``: the share, ``sigma_e`` against ``s``, and the lift ``sigma_e *
  sqrt(2 ln m)``).  Dividing the half-width by 1.96 instead of the t quantile of the figure's
  unrecorded run count over-states ``sigma_e`` for figures of few runs: it errs towards refusing
  EVT.

Departures: the re-measurement runs only on an oracle with ``run_once`` (the command oracle);
a simulation with a nonzero half-width keeps its recorded half-widths (its replications would be
whole simulations, not yet made here), and the tail test is not applied to it.  Pipeline plans
are not re-measured either.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tasksolve.evt.atom import TopAtom
    from tasksolve.evt.result import EVTResult
    from tasksolve.simulate.command import CommandOracle
    from tasksolve.solver.certify.certification import Certification
    from tasksolve.solver.certify.service import Record
    from tasksolve.solver.certify.verdict import Evidence

#: rounds at which the paired interval may stop (its width only decides)
LOOKS = (10, 20, 40)
#: the paired interval is precise enough when its half-width is this share of the target gap
PRECISION_SHARE = 0.25
#: EVT is fitted only when the noise's share of the excesses' variance is at most this (module docstring)
MAX_NOISE_SHARE = 0.1
Z95 = 1.959964


@dataclass
class PairedGap:
    """The plan against a re-measured yardstick (module docstring); figures in natural orientation."""

    label: str  # what the yardstick is
    sampled: float  # its figure in the sample (biased upward by the selection: shown, never used)
    plan_mean: float
    plan_half_width: float
    yardstick_mean: float
    yardstick_half_width: float
    gap: float  # (plan - yardstick) / |yardstick|, from the fresh rounds
    lower: float
    upper: float
    rounds: int
    confidence: float
    noise_floor: float | None = None  # pooled CV of the fresh runs (`simulate.noise.noise_floor`)
    method: str = "paired Student-t over interleaved rounds (Law 2015, 10.2.1)"

    def advantage(self, minimize: bool) -> tuple[float, float, float]:
        """What the yardstick may win over the plan, as a share of the yardstick: (point, low, high)."""
        if minimize:
            return self.gap, self.lower, self.upper
        return -self.gap, -self.upper, -self.lower

    def better(self, minimize: bool) -> bool:
        """The yardstick is distinguishably better: its advantage's interval lies above 0."""
        return self.advantage(minimize)[1] > 0

    def beyond(self, target: float, minimize: bool) -> bool:
        """The yardstick is better by more than `target`: its advantage's interval lies above it."""
        return self.advantage(minimize)[1] > target

    def words(self, show: Callable[[float], str]) -> str:
        where = "below" if self.gap < 0 else "above"
        return (
            f"the plan is {abs(self.gap):.2%} {where} the {self.label} re-measured "
            f"({show(self.yardstick_mean)}, {self.rounds} fresh runs interleaved with the plan's; "
            f"{show(self.sampled)} when sampled), {self.confidence:.0%} interval of the gap "
            f"[{self.lower:+.2%}, {self.upper:+.2%}]"
        )


@dataclass
class TailNoise:
    """How the measurement noise compares with the spread of the excesses EVT would fit."""

    noise_sd: float  # standard deviation of one sampled figure (median over the excesses)
    tail_sd: float  # standard deviation of the excesses
    excesses: int
    share: float  # noise_sd**2 / tail_sd**2
    lift: float  # noise_sd * sqrt(2 ln m): how far the noise alone lifts the sample's top

    @property
    def admitted(self) -> bool:
        return self.share <= MAX_NOISE_SHARE

    def sentence(self, show: Callable[[float], str]) -> str:
        return (
            f"the host's noise hides the tail: the variance of one sampled figure's noise (sd {show(self.noise_sd)}) "
            f"is {self.share:.0%} of the variance of the {self.excesses} values EVT would fit "
            f"(sd {show(self.tail_sd)}; at most {MAX_NOISE_SHARE:.0%} lets EVT be fitted), and it alone lifts "
            f"the sample's top by about {show(self.lift)}, so no GPD interval is used"
        )


@dataclass
class NoisyEvidence:
    """What the verdict reads on a stochastic oracle (module docstring)."""

    yardstick: PairedGap | None
    tail: TailNoise | None
    note: str = ""
    yardstick_contexts: list[int] | None = None  # the re-measured plan's contexts
    atom: TopAtom | None = None  # of the sample with the figures within noise of the best tied to it

    def best_sampled(self) -> tuple[float, float] | None:
        """The best sampled plan's fresh mean and half-width (the yardstick's, or the plan's when the
        plan is the best sampled), or None."""
        yard = self.yardstick
        if yard is None:
            return None
        if yard.label == "best sampled plan":
            return yard.yardstick_mean, yard.yardstick_half_width
        return yard.plan_mean, yard.plan_half_width

    @property
    def hides_tail(self) -> bool:
        return self.tail is not None and not self.tail.admitted

    def to_dict(self) -> dict[str, object]:
        from tasksolve.specs.files import plain

        floor = None if self.yardstick is None else self.yardstick.noise_floor
        out: dict[str, object] = {
            "noise_floor": floor,
            "note": self.note,
            "yardstick_contexts": self.yardstick_contexts,
        }
        out["yardstick"] = None if self.yardstick is None else plain(asdict(self.yardstick))
        tail = None
        if self.tail is not None:
            tail = {**plain(asdict(self.tail)), "admitted": self.tail.admitted, "max_share": MAX_NOISE_SHARE}
        out["tail"] = tail
        out["tied_with_best"] = None if self.atom is None else self.atom.hits
        return out


def paired_runs(
    measure: Callable[[int], float], *, rounds: Sequence[int] = LOOKS, warmup: int = 0, precise=None
) -> tuple[list[float], list[float]]:
    """Fresh runs of plan 0 and plan 1 in alternating order (``measure(i)`` runs plan ``i`` once):
    `warmup` rounds discarded, then up to ``max(rounds)`` rounds, stopping at a look (a count in
    `rounds`) where ``precise(ours, theirs)`` holds."""
    for _ in range(warmup):
        measure(0)
        measure(1)
    ours: list[float] = []
    theirs: list[float] = []
    for r in range(1, max(rounds) + 1):
        ours.append(float(measure(0)))
        theirs.append(float(measure(1)))
        if r in rounds and precise is not None and precise(ours, theirs):
            break
    return ours, theirs


def gap_of(
    ours: Sequence[float], theirs: Sequence[float], *, label: str, sampled: float, confidence: float = 0.95
) -> PairedGap:
    """The paired gap of the plan's runs `ours` to the yardstick's `theirs` (module docstring)."""
    from tasksolve.simulate.noise import noise_floor, t_interval

    diff, half = t_interval([a - b for a, b in zip(ours, theirs)], confidence)
    plan_mean, plan_half = t_interval(list(ours), confidence)
    yard_mean, yard_half = t_interval(list(theirs), confidence)
    scale = abs(yard_mean) or 1.0
    gap = diff / scale
    return PairedGap(
        label,
        sampled,
        plan_mean,
        plan_half,
        yard_mean,
        yard_half,
        gap,
        gap - half / scale,
        gap + half / scale,
        len(ours),
        confidence,
        noise_floor([list(ours), list(theirs)]),
    )


def paired_gap(
    measure: Callable[[int], float],
    *,
    label: str,
    sampled: float,
    target_gap: float,
    confidence: float = 0.95,
    warmup: int = 0,
    rounds: Sequence[int] = LOOKS,
) -> PairedGap:
    """Re-measure (`paired_runs`) and state the gap (`gap_of`); a look stops the runs once the
    gap's half-width is at most `PRECISION_SHARE` of the target gap."""

    def precise(ours: list[float], theirs: list[float]) -> bool:
        found = gap_of(ours, theirs, label=label, sampled=sampled, confidence=confidence)
        return (found.upper - found.lower) / 2 <= PRECISION_SHARE * target_gap

    ours, theirs = paired_runs(measure, rounds=rounds, warmup=warmup, precise=precise)
    return gap_of(ours, theirs, label=label, sampled=sampled, confidence=confidence)


def tail_noise(analysis, half_widths: Sequence[float]) -> TailNoise | None:
    """The tail test (module docstring) for an EVT analysis and the half-widths of the sampled
    figures beyond its threshold; None without an analysis or known half-widths."""
    if analysis is None or analysis.exceedances < 2:
        return None
    known = [h for h in half_widths if h is not None and math.isfinite(h)]
    if not known:
        return None
    noise_sd = statistics.median(known) / Z95
    excesses = [float(x) for x in analysis.excesses]
    tail_sd = statistics.stdev(excesses) if len(excesses) > 1 else 0.0
    if tail_sd == 0:  # the excesses are one value: an atom, no tail to hide
        return None
    share = (noise_sd / tail_sd) ** 2
    m = len(excesses)
    return TailNoise(noise_sd, tail_sd, m, share, noise_sd * math.sqrt(2 * math.log(max(m, 2))))


def excess_half_widths(records: Sequence[Record], analysis: EVTResult | None, minimize: bool) -> list[float]:
    """The half-widths of the sampled figures beyond the analysis's threshold."""
    if analysis is None:
        return []
    beyond = [
        r
        for r in records
        if r.value is not None and (r.value < analysis.threshold if minimize else r.value > analysis.threshold)
    ]
    return [float(r.half_width) if r.half_width is not None else math.inf for r in beyond]


def stochastic(oracle: object) -> bool:
    """Whether certificates on `oracle` (or the oracle it wraps) are re-measured: it has ``run_once``."""
    inner = getattr(oracle, "oracle", oracle)
    return callable(getattr(inner, "run_once", None))


def runner(oracle: CommandOracle, objective: str, seed: int) -> Callable[[Sequence[int]], float]:
    """One fresh run of the plan with these contexts on `oracle` (a `stochastic` one), its
    objective's figure (natural orientation)."""

    def once(contexts: Sequence[int]) -> float:
        figure, instances = oracle.run_once(oracle.placement([int(c) for c in contexts]), seed)
        if objective == "min_throughput" and instances:
            return float(min(instances.values()))
        return float(figure)

    return once


def for_certification(cert: Certification, n_used: int, analysis: EVTResult | None) -> NoisyEvidence | None:
    """The noisy evidence of a certification (`solver.certify.certification`) on its first
    `n_used` draws: None on an oracle without ``run_once`` or for pipeline plans (module
    docstring, departures)."""
    if cert.classes is None or not stochastic(cert.oracle):
        return None
    spec, minimize = cert.spec, cert.minimize
    records = [r for r in cert.service.ok_records(n_used) if r.value is not None]
    tail = tail_noise(analysis, excess_half_widths(records, analysis, minimize))
    if not records:
        return NoisyEvidence(None, tail, "no sampled plan to re-measure")
    key = cert.classes.key
    ranked = sorted(records, key=lambda r: r.value, reverse=not minimize)
    plan = ranked[0].contexts if cert.plan is None else cert.plan.contexts(spec)
    mine = key(plan)
    other = next((r for r in ranked if key(r.contexts) != mine), None)
    if other is None:
        return NoisyEvidence(None, tail, "every sampled plan is the plan's placement class: nothing to re-measure")
    label = (
        "best sampled plan"
        if other is ranked[0]
        else "best sampled plan of another class (the plan is the best sampled)"
    )
    once = runner(cert.oracle, spec.objective, cert.service.seed)
    policy = getattr(cert.oracle, "policy", None)  # the command oracle's noise policy (`oracle.warmup`)
    found = paired_gap(
        lambda i: once(plan if i == 0 else other.contexts),
        label=label,
        sampled=float(other.value),
        target_gap=cert.target_gap,
        confidence=cert.confidence,
        warmup=policy.warmup if policy is not None else 0,
    )
    atom = tied_atom(records, minimize, cert.confidence)
    return NoisyEvidence(found, tail, yardstick_contexts=[int(c) for c in other.contexts], atom=atom)


def tied_atom(records: Sequence[Record], minimize: bool, confidence: float) -> TopAtom | None:
    """`evt.top_atom` of the sampled figures, each figure not distinguishably below the best (their
    difference within both 95% half-widths, both finite) counted as a hit of the best: on a noisy
    oracle the draws that end on plans the measurements cannot tell apart end on one value."""
    from tasksolve import evt

    sign = -1.0 if minimize else 1.0
    best = max(records, key=lambda r: sign * r.value)
    best_hw = best.half_width if best.half_width is not None else math.inf
    values = []
    for r in records:
        hw = r.half_width if r.half_width is not None else math.inf
        tied = sign * (best.value - r.value) <= hw + best_hw
        values.append(best.value if r.value == best.value or (math.isfinite(hw + best_hw) and tied) else r.value)
    return evt.top_atom(values, minimize=minimize, confidence=confidence)


def atom_sentence(atom: TopAtom, show: Callable[[float], str]) -> str:
    """`evt.TopAtom.sentence` for figures tied within noise (`tied_atom`)."""
    return (
        f"{atom.hits} of {atom.n} samples end on the best sampled figure {show(atom.best)} or within measurement "
        f"noise of it (both 95% half-widths); the sample supports only this: plans distinguishably better than "
        f"these together attract at most {atom.beat_bound:.2%} of the draws ({atom.confidence:.0%} confidence, "
        "distribution-free), and it bounds no value above them"
    )


def reasons(ev: Evidence, unpaired: Sequence[str], show: Callable[[float], str]) -> list[tuple[str, str]]:
    """The verdict's reasons on a stochastic oracle (`solver.certify.verdict`, module docstring):
    the tail hidden, the known plans left out, the re-measured yardstick."""
    noisy, out = ev.noisy, []
    if noisy.hides_tail and ev.unanalysable is None:  # said with an atom at the top too: it is the noise's
        out.append(("noise_hides_tail", noisy.tail.sentence(show)))
    if unpaired:
        listed = ", ".join(unpaired[:4]) + (" ..." if len(unpaired) > 4 else "")
        out.append(
            (
                "unpaired",
                f"{listed}: measured apart from the plan, not beside it, so not compared on this noisy oracle "
                "(a best-of figure is biased upward; the best sampled plan is compared through its re-measurement)",
            )
        )
    yard = noisy.yardstick
    if yard is None:
        out.append(("no_yardstick", f"no sampled plan was re-measured ({noisy.note or 'none to compare'})"))
    elif yard.better(ev.minimize):
        out.append(
            ("measured_best_better", f"the {yard.label}, re-measured, is distinguishably better: {yard.words(show)}")
        )
    else:
        out.append(("not_distinguishable", f"no measured plan is distinguishably better: {yard.words(show)}"))
    return out
