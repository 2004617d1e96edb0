"""The verdict: what a certificate may say about a plan, one plain sentence first, evidence after.

The six verdicts, exit codes and meanings: `VERDICTS` below and docs/design.md, "Verdicts";
``proven``, ``certified``, ``best_found`` are positive (exit 0), the others negative (exit 1).

Rules, in order (the first that holds decides; `decide`):

0. a measured value (the plan's or a known plan's) beats a bound that applies to its oracle, or
   its proven optimum, beyond the measurement's half-width (and, on the simulation, the
   `SIMULATION_RESOLUTION`) -> ``not_certified``: the measurement or the bound is wrong (a forged
   or damaged record, an oracle that is not what the bound models); nothing is drawn from either;
1. a solver step failed -> ``not_certified``;
2. an applicable bound's proven optimum beats the plan by more than the target -> ``not_certified``;
3. a known plan beats the plan by more than the target, beyond both half-widths -> ``not_certified``;
4. an applicable bound is within the target of the plan's pessimistic value -> ``proven``;
5. a GPD interval is used and a known plan beats its far limit -> ``refuted``;
6. the GPD interval is valid and the plan is within the target of its far limit -> ``certified``;
7. the search is saturated -> ``best_found``;
8. the tail has no finite end -> ``no_finite_optimum``;
9. otherwise -> ``not_certified``, with every reason.

On a stochastic oracle (`solver.certify.noisy`) ``noisy`` carries the best sampled plan
*re-measured* (fresh runs interleaved with the plan's; the sampled figure, biased upward by the
selection, is never a value) with the paired interval of the plan's gap to it, and the tail test.
Rule 3 then holds when the interval of that yardstick's advantage lies above the target; other
known plans, measured apart from the plan (a best-of selection is biased upward), are listed, not
compared (the race of `solver.binding.noisy` compared the finalists beside the plan); when the
noise hides the tail no GPD interval is in use (rules 5, 6, 8 do not apply; ``noise_hides_tail``);
rule 7 also needs "no measured plan is distinguishably better" (its interval reaches 0 or below).

Bounds are read through the `solver.certify.bounds.Bound` protocol.  Gaps are signed,
``(plan - reference) / |reference|``: negative when the plan's figure is below the reference.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tasksolve.solver.certify.bounds import Bound
from tasksolve.solver.certify.known import KnownPlan
from tasksolve.specs.oracles import noun

if TYPE_CHECKING:
    from tasksolve.solver.certify.noisy import NoisyEvidence, PairedGap

MIN_SAMPLES = 600  # the threshold rule (`evt.threshold`): <= 5% of the sample beyond it, >= 30 excesses

SATURATION_SHARE = 0.5  # rule 7: the share of the draws an atom at the top needs ("most end there")
RELATIVE_TIE = 1e-9  # two values closer than this (relative) are the same value (`evt.atom.RELATIVE_TIE`)
#: rule 0: a simulated figure may exceed a bound by this (relative) beyond its half-width -- a finite
#: run's bias the batch means miss (t2-ipfwd-mix-x8: 2.3e-5 over 600 packets, half-width 4.6e-6)
SIMULATION_RESOLUTION = 1e-4
#: one sentence per EVT flag that forbids an EVT-based `certified`
BLOCKING_FLAGS = {
    "ties": "many values beyond the threshold are repeated, so the continuous tail model does not hold "
    "(the sample may already contain the optimum, or may be stuck on a plateau below it)",
    "poor_fit": "the goodness-of-fit tests reject the Generalised Pareto tail, so its endpoint is not "
    "a trustworthy estimate of the optimum",
    "boundary": "the fit runs to the uniform-tail boundary (xi = -1), so the estimate is just the best "
    "sampled value and says nothing beyond it",
    "irregular": "the shape xi is at most -0.5, where the likelihood is irregular and the interval's "
    "confidence is not guaranteed",
    "few_exceedances": "fewer than 30 values lie beyond the threshold, too few for the interval",
    "large_fraction": "more than 5% of the sample lies beyond the threshold, so the values fitted are not the tail",
    "heavy_tail": "the fitted tail has no finite endpoint (xi >= 0)",
}

#: verdict -> (meaning, exit code of `certify` and `run`)
VERDICTS: dict[str, tuple[str, int]] = {
    "proven": ("a rigorous bound on the oracle the plan was measured on puts the plan within the target", 0),
    "certified": ("a valid EVT interval puts the plan within the target of the optimum", 0),
    "best_found": (
        "the search is saturated: the plan is the best found and one more draw is unlikely to beat it; "
        "no gap to the optimum is claimed",
        0,
    ),
    "not_certified": ("the evidence says the plan may be materially worse than what exists", 1),
    "refuted": ("a measured plan beats the estimate's far limit: the estimate is wrong", 1),
    "no_finite_optimum": ("the sample's tail has no finite end: there is no optimum to compare with", 1),
}
POSITIVE = frozenset(name for name, (_, code) in VERDICTS.items() if code == 0)


def exit_code(verdict: str) -> int:  # docs/design.md, "Errors and exit codes"
    """0 for a positive verdict, 1 otherwise."""
    return VERDICTS.get(verdict, ("", 1))[1]


@dataclass(frozen=True)
class Saturation:
    """How the sample's best value was hit (`evt.TopAtom`): `hits` of `n` draws, and the draw bound."""

    best: float
    hits: int
    n: int
    beat_bound: float
    confidence: float = 0.95
    draws: str = "local-search restarts"  # what one draw is (the certificate says what the bound covers)

    @property
    def share(self) -> float:
        return self.hits / self.n if self.n else 0.0


@dataclass
class Evidence:
    """What the verdict is drawn from (values in the samples' orientation: packets/s or seconds)."""

    plan_value: float
    minimize: bool
    target_gap: float
    n: int
    estimate: float
    lower: float
    upper: float
    confidence: float = 0.95
    flags: tuple[str, ...] = ()
    known: list[KnownPlan] = field(default_factory=list)
    bounds: list[Bound] = field(default_factory=list)
    failed_steps: list[str] = field(default_factory=list)
    oracle: str = "analytic"  # the oracle the plan and the sample were measured on
    plan_half_width: float = 0.0
    unanalysable: str | None = None  # why EVT could not analyse the sample (then no estimate)
    top_atom: str | None = None  # `evt.TopAtom.sentence()` when the best value is hit twice or more
    saturation: Saturation | None = None
    noisy: NoisyEvidence | None = None  # on a stochastic oracle
    space: str = ""  # the plans the sample and the bounds range over, where not every plan ("plans that ...")

    @property
    def yardstick(self) -> PairedGap | None:
        """The re-measured best sampled plan (`noisy.PairedGap`), or None."""
        return None if self.noisy is None else self.noisy.yardstick

    @property
    def far(self) -> float:
        return self.lower if self.minimize else self.upper

    @property
    def pessimistic(self) -> float:
        """The plan's value at the unfavourable end of its measurement's interval."""
        hw = self.plan_half_width or 0.0
        return self.plan_value - _score(hw, self.minimize)


@dataclass
class Decision:
    verdict: str
    basis: str  # "bound", "proven optimum", "known plan", "EVT estimate", "draw bound", "solver", "contradiction"
    sentence: str  # the verdict in one plain sentence
    reasons: list[dict[str, str]]  # {"code", "sentence"}: the evidence, one sentence each
    gaps: dict[str, float | None]  # signed gaps of the plan to the estimate, far limit, bound, optimum
    words: list[str]  # the signed gaps in words

    @property
    def positive(self) -> bool:
        return self.verdict in POSITIVE

    @property
    def exit_code(self) -> int:
        return exit_code(self.verdict)

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def signed_gap(value: float, reference: float | None) -> float | None:
    """``(value - reference) / |reference|``; None without a finite, non-zero reference."""
    if reference is None or not math.isfinite(reference) or reference == 0 or not math.isfinite(value):
        return None
    return (value - reference) / abs(reference)


def _score(value: float, minimize: bool) -> float:
    """The number to maximise (`specs.objective.Objective.score`) for the verdict's flag, the
    same `minimize` flag `evt` is handed: the one place the verdict turns a direction into a sign."""
    return -value if minimize else value


def loss(value: float, reference: float | None, minimize: bool) -> float:
    """What the plan may lose against `reference` (positive: the reference is better)."""
    gap = signed_gap(value, reference)
    if gap is None:
        return math.inf
    return -_score(gap, minimize)


def in_words(gap: float | None, what: str) -> str:
    if gap is None:
        return f"no finite {what} to compare with"
    if gap == 0:
        return f"the plan equals the {what}"
    return f"the plan is {abs(gap):.2%} {'below' if gap < 0 else 'above'} the {what}"


def _better(a: float, b: float, minimize: bool) -> bool:
    return _score(a, minimize) > _score(b, minimize)


def beats(value: float, half_width: float, plan: float, plan_half_width: float, minimize: bool) -> bool:
    """`value` is better than `plan` beyond both measurements' half-widths (and rounding)."""
    margin = (half_width or 0.0) + (plan_half_width or 0.0) + RELATIVE_TIE * max(abs(plan), 1e-300)
    return _score(value, minimize) - _score(plan, minimize) > margin


def _known(ev: Evidence) -> list[KnownPlan]:
    """The known plans the rules compare: on a stochastic oracle only the re-measured yardstick is
    compared, through its paired interval (`_unpaired` lists the others)."""
    return list(ev.known) if ev.noisy is None else []


def _unpaired(ev: Evidence) -> list[str]:
    """Known plans a stochastic oracle's rules leave out: measured apart from the plan."""
    return [] if ev.noisy is None else [k.plan for k in ev.known[1 if ev.yardstick is not None else 0 :]]


class _Judge:
    """The rules of the module docstring over one `Evidence` (one method per rule group)."""

    def __init__(self, ev: Evidence, show: Callable[[float], str]) -> None:
        self.ev, self.show = ev, show
        self.target = f"{ev.target_gap:.2%}"
        self.applicable = [b for b in ev.bounds if b.oracle == ev.oracle and b.value is not None]
        self.others = [b for b in ev.bounds if b.oracle != ev.oracle and b.value is not None]
        best = self.applicable[0] if self.applicable else None
        self.bound = best
        self.proven = next((b.proven_optimum for b in self.applicable if b.proven_optimum is not None), None)
        hidden = ev.noisy is not None and ev.noisy.hides_tail
        self.gpd = ev.top_atom is None and ev.unanalysable is None and not hidden  # a GPD interval is in use
        hidden = hidden or (ev.noisy is not None and ev.top_atom is not None)  # no gap without an interval
        self.gaps = {
            "estimate": None if hidden else signed_gap(ev.plan_value, ev.estimate),
            "far_limit": None if hidden else signed_gap(ev.plan_value, ev.far),
            "bound": signed_gap(ev.plan_value, best.value if best else None),
            "proven_optimum": signed_gap(ev.plan_value, self.proven),
        }
        self.words = [
            in_words(self.gaps["estimate"], "estimated optimum"),
            in_words(self.gaps["far_limit"], f"far limit of the {ev.confidence:.0%} interval"),
        ]
        if hidden:
            self.words = ["no EVT estimate on this noisy oracle (see the reasons)"]
        yard = ev.yardstick
        if yard is not None:
            self.gaps.update(measured_best=yard.gap, measured_best_lower=yard.lower, measured_best_upper=yard.upper)
            self.words.insert(0, yard.words(show))
        if best is not None:
            self.words.append(in_words(self.gaps["bound"], f"proven bound ({best.source})"))
        if self.proven is not None:
            self.words.append(in_words(self.gaps["proven_optimum"], "proven optimum"))
        self.reasons: list[dict[str, str]] = []

    def say(self, code: str, sentence: str) -> None:
        self.reasons.append({"code": code, "sentence": sentence})

    def done(self, verdict: str, basis: str, sentence: str) -> Decision:
        return Decision(verdict, basis, sentence, self.reasons, self.gaps, self.words)

    def best(self, words: str) -> str:
        """``the best possible`` / ``the optimum``, among the plans judged where not every plan."""
        return f"{words} among {self.ev.space}" if self.ev.space else words

    def plan_text(self) -> str:
        ev = self.ev
        # a half-width under 0.005% of the value is float noise of a deterministic run: not shown
        noise = not ev.plan_half_width or abs(ev.plan_half_width) < 5e-5 * abs(ev.plan_value)
        shown = "" if noise else self.show(ev.plan_half_width)
        hw = f" ± {shown}" if shown and shown != self.show(0.0) else ""
        return f"{self.show(ev.plan_value)}{hw}"

    # ---------------------------------------------------------------- the evidence, in sentences
    def gather(self) -> None:
        ev = self.ev
        for step in ev.failed_steps:
            self.say(
                "failed_step", f"the solver step '{step}' failed, so the plan and the bound may be weaker than shown"
            )
        if not self.applicable:
            what = f"the {noun(ev.oracle)}"
            extra = "".join(
                f"; the {b.source} bound ({self.show(b.value)}) bounds the {noun(b.oracle)}, not {what}"
                for b in self.others
            )
            self.say("no_bound", f"no rigorous bound applies to {what}{extra}")
        if ev.top_atom:
            self.say("top_atom", ev.top_atom)
        self.beyond_bound()
        self.noisy_reasons()
        if ev.unanalysable:
            self.say("unanalysable", f"EVT cannot analyse the sample ({ev.unanalysable}), so there is no GPD interval")
        if self.gpd and ev.n < MIN_SAMPLES:
            self.say(
                "small_sample",
                f"the sample has {ev.n} plans; the threshold rule needs at least {MIN_SAMPLES} "
                "(30 values beyond a threshold that leaves at most 5% of the sample above it)",
            )
        refuters = self.refuters()
        if refuters:
            label, value = max(refuters, key=lambda r: _score(r.value, ev.minimize))[:2]
            self.say(
                "refuted",
                f"the {label} ({self.show(value)}) is better than the EVT interval's far limit "
                f"({self.show(ev.far)}), so the estimate is wrong and no verdict is drawn from it",
            )
        if self.gpd:
            for flag in ev.flags:
                if flag in BLOCKING_FLAGS and flag != "heavy_tail":
                    self.say(flag, f"{flag}: {BLOCKING_FLAGS[flag]}")

    def beyond_bound(self) -> None:
        """One sentence where the EVT estimate or its interval reaches past an applicable bound:
        the bound holds, so the optimum is at most it and the excess is the tail model's."""
        ev, b = self.ev, self.bound
        if b is None or not self.gpd:
            return
        past = [
            (what, v)
            for what, v in (("estimate", ev.estimate), ("far limit", ev.far))
            if _better(v, b.value, ev.minimize)
        ]
        if past and all(math.isfinite(v) for _, v in past):
            shown = ", ".join(f"{what} {self.show(v)}" for what, v in past)
            self.say(
                "estimate_beyond_bound",
                f"the EVT {shown} lies beyond the {b.source} bound ({self.show(b.value)}), which holds: the "
                f"optimum is at most {self.show(b.value)} and the excess is the tail model's error",
            )

    def noisy_reasons(self) -> None:
        """What a stochastic oracle adds (`solver.certify.noisy.reasons`)."""
        if self.ev.noisy is not None:
            from tasksolve.solver.certify.noisy import reasons

            for code, sentence in reasons(self.ev, _unpaired(self.ev), self.show):
                self.say(code, sentence)

    def refuters(self) -> list[KnownPlan]:
        ev, far = self.ev, self.ev.far
        if not self.gpd or not math.isfinite(far):
            return []
        found = [k for k in _known(ev) if _better(k.value, far, ev.minimize)]
        if self.proven is not None and _better(self.proven, far, ev.minimize):
            found.append(KnownPlan("proven optimum", self.proven))
        return found

    def contradiction(self) -> str | None:
        """Rule 0: the sentence naming a measured value beyond an applicable bound, or None."""
        ev = self.ev
        measured = [KnownPlan("plan", ev.plan_value, ev.plan_half_width or 0.0), *ev.known]
        slack = SIMULATION_RESOLUTION if ev.oracle == "des" else 0.0
        for b in self.applicable:
            limits = [(f"{b.source} bound", b.value), (f"{b.source} proven optimum", b.proven_optimum)]
            for label, value, hw, _ in measured:
                for what, limit in limits:
                    if limit is not None and beats(value, hw, limit, slack * abs(limit), ev.minimize):
                        return (
                            f"the {label} measured {self.show(value)} on the {noun(ev.oracle)}, better than "
                            f"the {what} ({self.show(limit)}) that applies to it: the measurement or the bound is "
                            "wrong, so no verdict is drawn from either"
                        )
        return None

    def best_beater(self) -> KnownPlan | None:
        """The best known plan beating the plan beyond noise, if any."""
        ev = self.ev
        beaters = [
            k for k in _known(ev) if beats(k.value, k.half_width, ev.plan_value, ev.plan_half_width, ev.minimize)
        ]
        if not beaters:
            return None
        return max(beaters, key=lambda k: _score(k.value, ev.minimize))


def decide(ev: Evidence, show: Callable[[float], str] = lambda v: f"{v:.6g}") -> Decision:
    """The verdict of the module docstring: rules 0-9, in order."""
    j = _Judge(ev, show)
    j.gather()
    target = j.target
    contradiction = j.contradiction()
    if contradiction is not None:  # rule 0
        j.reasons.insert(0, {"code": "contradiction", "sentence": contradiction})
        return j.done("not_certified", "contradiction", f"not certified: {contradiction}")
    if ev.failed_steps:  # rule 1
        return j.done("not_certified", "solver", "not certified: " + j.reasons[0]["sentence"])
    if j.proven is not None and loss(ev.pessimistic, j.proven, ev.minimize) > ev.target_gap:  # rule 2
        sentence = f"{in_words(j.gaps['proven_optimum'], 'proven optimum')}, more than the {target} target"
        if ev.plan_half_width:  # the rule judged the interval's unfavourable end: say so
            low = loss(ev.pessimistic, j.proven, ev.minimize)
            sentence = sentence.replace(
                ", more than", f" ({low:.2%} at the unfavourable end of its interval), more than"
            )
        j.reasons.insert(0, {"code": "below_optimum", "sentence": sentence})
        return j.done("not_certified", "proven optimum", f"not certified: {sentence}")
    yard = ev.yardstick
    if yard is not None and yard.beyond(ev.target_gap, ev.minimize):  # rule 3, on the re-measured yardstick
        point, low, high = yard.advantage(ev.minimize)
        sentence = (
            f"the {yard.label}, re-measured ({show(yard.yardstick_mean)}), beats the plan by {point:.2%} "
            f"({yard.confidence:.0%} interval [{low:.2%}, {high:.2%}]), more than the {target} target"
        )
        j.reasons.insert(0, {"code": "beaten", "sentence": sentence})
        return j.done("not_certified", "known plan", f"not certified: {sentence}")
    beater = j.best_beater()
    if beater is not None and loss(ev.plan_value, beater.value, ev.minimize) - _noise(beater, ev) > ev.target_gap:
        sentence = (  # rule 3
            f"the {beater.plan} ({show(beater.value)}) beats the plan ({j.plan_text()}) by "
            f"{loss(ev.plan_value, beater.value, ev.minimize):.2%}, more than the {target} target"
        )
        j.reasons.insert(0, {"code": "beaten", "sentence": sentence})
        return j.done("not_certified", "known plan", f"not certified: {sentence}")
    decided = _proven(j) or _evt(j) or _saturated(j, beater)
    if decided is not None:
        return decided
    if "heavy_tail" in ev.flags and j.gpd:  # rule 8
        j.say("heavy_tail", BLOCKING_FLAGS["heavy_tail"])
        return j.done(
            "no_finite_optimum",
            "EVT estimate",
            "no finite optimum: the sample's tail has no finite end (xi >= 0), so there is no optimum "
            "to compare the plan with, and the search is not saturated",
        )
    if beater is not None:
        j.say("beaten", f"the {beater.plan} ({show(beater.value)}) beats the plan ({j.plan_text()}) beyond noise")
    if j.gpd and loss(ev.plan_value, ev.far, ev.minimize) > ev.target_gap:
        j.say("gap", f"{j.words[1]}: it may lose more than the {target} target")
    if ev.saturation is not None and ev.saturation.share < SATURATION_SHARE and ev.top_atom:
        j.say(
            "not_saturated",
            f"only {ev.saturation.hits} of {ev.saturation.n} {ev.saturation.draws} end on the best value "
            f"(saturation needs {SATURATION_SHARE:.0%})",
        )
    ranked = sorted(j.reasons, key=lambda r: {"no_bound": 2, "top_atom": 1, "not_distinguishable": 3}.get(r["code"], 0))
    return j.done("not_certified", "EVT estimate", "not certified: " + ranked[0]["sentence"])  # rule 9


def _noise(beater: KnownPlan, ev: Evidence) -> float:
    """The relative width of the two measurements' half-widths (rule 3 judges beyond them)."""
    scale = abs(ev.plan_value) or 1.0
    return (beater.half_width + (ev.plan_half_width or 0.0)) / scale


def _proven(j: _Judge) -> Decision | None:
    """Rule 4: an applicable bound within the target of the plan's pessimistic value."""
    ev = j.ev
    for b in j.applicable:
        lost = loss(ev.pessimistic, b.value, ev.minimize)
        if lost <= ev.target_gap:
            hw = ", counting its half-width against it" if ev.plan_half_width else ""
            sentence = (
                f"proven: the plan ({j.plan_text()}) is within the {j.target} target of {j.best('the best possible')} "
                f"on the {noun(ev.oracle)}{hw}: the {b.source} bound proves no {'such ' if ev.space else ''}plan exceeds "
                f"{j.show(b.value)} ({max(lost, 0.0) + 0.0:.2%} above the plan)"
            )
            return j.done("proven", "bound", sentence)
    return None


def _evt(j: _Judge) -> Decision | None:
    """Rules 5 and 6: a refuted or a valid GPD interval."""
    ev = j.ev
    refuted = next((r["sentence"] for r in j.reasons if r["code"] == "refuted"), None)
    if refuted is not None:
        return j.done("refuted", "EVT estimate", "refuted: " + refuted)
    valid = (
        j.gpd
        and ev.n >= MIN_SAMPLES
        and math.isfinite(ev.far)
        and not any(f in BLOCKING_FLAGS for f in ev.flags)
        and loss(ev.plan_value, ev.far, ev.minimize) <= ev.target_gap
    )
    if not valid:
        return None
    target = f"the {j.target} target of {j.best('the optimum')} at {ev.confidence:.0%} confidence"
    return j.done(
        "certified", "EVT estimate", f"certified: the plan is within {target} ({j.words[1]}, {j.show(ev.far)})"
    )


def _saturated(j: _Judge, beater) -> Decision | None:
    """Rule 7: no known plan beats the plan beyond noise and most draws end on the best value."""
    ev, sat = j.ev, j.ev.saturation
    if sat is None or beater is not None or sat.share < SATURATION_SHARE or sat.hits < 2:
        return None
    yard = ev.yardstick
    if ev.noisy is not None:  # the sampled best is compared only through its re-measurement
        if yard is None or yard.better(ev.minimize):
            return None
    elif beats(sat.best, 0.0, ev.plan_value, ev.plan_half_width, ev.minimize):
        return None
    measured = "" if yard is None else f"; no measured plan is distinguishably better ({yard.words(j.show)})"
    sentence = (
        f"best found: none of the {sat.n} {sat.draws} beats the plan ({j.plan_text()}) beyond measurement "
        f"noise and {sat.hits} of them ended on the best value{' or within noise of it' if yard else ''}, so one "
        f"more would beat that value with probability at most {sat.beat_bound:.2%} ({sat.confidence:.0%} confidence){measured}; "
        "no gap to the optimum is claimed"
    )
    return j.done("best_found", "draw bound", sentence)
