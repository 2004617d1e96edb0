"""Kinds of core told apart by the compute loop's rate alone (a hybrid's P and E cores), and
their ``kinds`` section of a topology (`specs.cpu_kinds`).

The probe runs the compute loop alone on each CPU of a pair right before running it on both
(`simulate.probe.measure`), so every CPU runs it alone once per pair it is in, in every
repetition: (CPUs - 1) x repetitions *runs*, each a rate in iterations per second the loop ran
(its CPU time, not the wall time: another process time-sharing the CPU does not slow it).

The rule (a pure function of the runs):

* a CPU's **rate** is the median of its runs (a run slowed by another process is an outlier);
* the **repetition noise** is how much one run differs from the next on the same CPU: each CPU's
  interquartile range of its runs over their median, the largest over CPUs (the noisiest CPU's:
  on a 2-CPU guest at load 9, rates per wall second made one CPU's median 0.52 of the other's,
  spreads 42% and 13%: the median spread would have made up a kind);
* the CPUs' rates, sorted, are cut wherever one is more than ``1 + step`` times the one below it
  (`classes.class_boundaries`, the latency classes' gap logic, with ``gap = 1 + step``), where
  ``step = max(FLOOR, NOISE_TIMES x noise)``: CPUs of one kind lie within the noise of each
  other (their rates are medians of many runs, far closer than ``NOISE_TIMES`` single runs),
  while kinds differ by a step (an E-core runs this loop at ~0.5-0.7 of a P-core).  The
  ``FLOOR`` of 10% keeps the turbo bins of one kind together: Intel's favoured cores (Turbo
  Boost Max 3.0) and AMD's preferred cores boost a few percent above the rest of their kind;
* each group is a **kind**, fastest first, named ``kind_a``, ``kind_b`` ... (the rate does not
  say which is a P core); its rate is the median of its CPUs' rates, its **speed** that rate
  over the fastest kind's;
* fewer than ``MIN_RUNS`` runs on a CPU (two CPUs, one repetition) tell nothing: no kinds, and
  the reason is kept (`Kinds.why_not`), as it is when the rates differ by more than the floor
  but the noise hides any step.

Still, a CPU whose SMT sibling another process keeps busy runs slower per second it runs, as a
kind would: the finding says to measure an idle host (the probe notes a busy one).

One kind is the common case and is not a finding.  The speed is the loop's: clock times this
loop's instructions per cycle (a dependent chain of shifts and xors), written as the kind's
``speed`` relative to the fastest kind, whose cores run at the topology's clock; other code's
ratio between the kinds may differ (give the kinds' ``ipc`` or per-kind task cycles).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tasksolve.simulate.probe.classes import class_boundaries, class_of
from tasksolve.specs.importers.cpusets import cpu_list

if TYPE_CHECKING:
    from tasksolve.simulate.probe.analysis import Repetition

FLOOR = 0.1
NOISE_TIMES = 3.0
MIN_RUNS = 3
_COUNTS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


@dataclass
class Kind:
    """One kind of core: its CPUs, their median rate alone (iterations/s) and its speed."""

    name: str
    cpus: list[int]
    rate: float
    speed: float

    def to_dict(self) -> dict:
        return {"name": self.name, "cpus": cpu_list(self.cpus), "rate": self.rate, "speed": round(self.speed, 4)}


@dataclass
class Kinds:
    """The kinds the rates alone show (fastest first; none when they tell nothing, said why)."""

    rates: dict[int, float]
    runs: int
    noise: float | None = None
    step: float | None = None
    kinds: list[Kind] = field(default_factory=list)
    why_not: str | None = None

    @property
    def several(self) -> bool:
        return len(self.kinds) > 1

    def to_dict(self) -> dict:
        return {
            "rule": f"CPUs' median rates alone cut at steps above max({FLOOR:.0%}, {NOISE_TIMES:g}x the noisiest CPU's)",
            "kinds": [k.to_dict() for k in self.kinds],
            "noise": None if self.noise is None else round(self.noise, 4),
            "step": None if self.step is None else round(self.step, 4),
            "runs_per_cpu": self.runs,
            "why_not": self.why_not,
            "cpu_rates": {str(cpu): rate for cpu, rate in sorted(self.rates.items())},
        }

    def finding(self) -> str | None:
        """``two kinds of core: CPUs 0-15 at 1.00, CPUs 16-23 at 0.58 of the fastest (...)``."""
        if not self.several:
            return None
        count = _COUNTS[len(self.kinds)] if len(self.kinds) < len(_COUNTS) else str(len(self.kinds))
        parts = ", ".join(f"CPUs {cpu_list(k.cpus)} at {k.speed:.2f}" for k in self.kinds)
        return (
            f"{count} kinds of core: {parts} of the fastest (the compute loop's rate alone, median of {self.runs} "
            f"runs per CPU; kinds are steps of more than {self.step:.0%} between CPUs' rates, the larger of "
            f"{FLOOR:.0%} and {NOISE_TIMES:g}x the repetition noise of {self.noise:.1%}); a CPU another process "
            "shares a core with runs slower too: measure an idle host"
        )


def tell_kinds(repetitions: list[Repetition]) -> Kinds | None:
    """The kinds of core the runs of the loop alone show (module docstring); None where the
    samples carry no rate alone (a latency matrix, a file saved without them)."""
    runs: dict[int, list[float]] = {}
    for rep in repetitions:
        for (a, b), sample in rep.items():
            if sample.alone_i is None or sample.alone_j is None:
                return None
            runs.setdefault(a, []).append(sample.alone_i)
            runs.setdefault(b, []).append(sample.alone_j)
    rates = {cpu: statistics.median(values) for cpu, values in runs.items()}
    fewest = min(len(values) for values in runs.values())
    if fewest < MIN_RUNS:
        why = f"{fewest} run(s) of the loop alone per CPU: at least {MIN_RUNS} tell kinds of core apart"
        return Kinds(rates, fewest, why_not=why)
    noise = max(_spread(values) for values in runs.values())
    step = max(FLOOR, NOISE_TIMES * noise)
    boundaries = class_boundaries(list(rates.values()), gap=1 + step)
    groups: dict[int, list[int]] = {}
    for cpu, rate in sorted(rates.items()):
        groups.setdefault(class_of(rate, boundaries), []).append(cpu)
    ordered = [groups[k] for k in sorted(groups, reverse=True)]  # the fastest class first
    medians = [statistics.median(rates[c] for c in cpus) for cpus in ordered]
    kinds = [
        Kind(f"kind_{chr(ord('a') + k)}", cpus, round(rate, 1), rate / medians[0])
        for k, (cpus, rate) in enumerate(zip(ordered, medians))
    ]
    why = None
    if len(kinds) == 1 and max(rates.values()) > (1 + FLOOR) * min(rates.values()):
        low = min(rates.values()) / max(rates.values())
        why = f"rates alone from {low:.2f} to 1.00 of the fastest CPU's, within the noise (no step above {step:.0%})"
    return Kinds(rates, fewest, noise, step, kinds, why)


def _spread(values: list[float]) -> float:
    """The interquartile range of one CPU's runs over their median."""
    low, middle, high = statistics.quantiles(values, n=4, method="inclusive")
    return (high - low) / middle if middle > 0 else 0.0


def topology_kinds(kinds: Kinds, topology) -> dict:
    """The ``kinds`` section of `topology` (whose ``os_cpus`` name the probed CPUs): the fastest
    kind takes the rest (no ``domains``; its cores run at the topology's clock), every other kind
    names the fewest domains that hold exactly its CPUs, with its speed relative to the fastest."""
    context_of = {cpu: c for c, cpu in enumerate(topology.os_cpu_list)}
    first = kinds.kinds[0]
    section = {first.name: {"description": f"CPUs {cpu_list(first.cpus)} (probe: the fastest kind)"}}
    for kind in kinds.kinds[1:]:
        section[kind.name] = {
            "speed": round(kind.speed, 3),
            "domains": _domains(topology, {context_of[c] for c in kind.cpus}),
            "description": f"CPUs {cpu_list(kind.cpus)} (probe: the compute loop at {kind.speed:.2f} of the fastest)",
        }
    return section


def _domains(topology, chosen: set[int]) -> list[str]:
    """The outermost domains all of whose existing contexts are in `chosen`, covering it."""
    present = set(topology.present_contexts)
    last = len(topology.levels) - 1
    found: list[str] = []

    def walk(level: int, domain: int) -> None:
        inside = [c for c in topology.contexts_of(level, domain) if c in present]
        held = [c in chosen for c in inside]
        if not any(held):
            return
        if all(held) or level == last:
            found.append(topology.domain_name(level, domain))
            return
        width = topology.counts[level + 1]
        for child in range(domain * width, (domain + 1) * width):
            walk(level + 1, child)

    for domain in range(topology.counts[0]):
        walk(0, domain)
    return found
