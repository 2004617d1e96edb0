"""The sentences ``tasksolve topology probe`` says about an `Analysis`: one per thing a user should
know (odd pairs, populations of a level, instability, the order of the costs, interference, kinds
of core where there are two or more), each with counts and CPU ranges -- never one line per pair:
the full lists are in ``--json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasksolve.specs.importers.cpusets import cpu_list

if TYPE_CHECKING:
    from tasksolve.simulate.probe.analysis import Analysis, LevelCost, PairReport, Population

#: a finding names the pairs themselves up to this many, else their number and CPUs
MOST_PAIRS_NAMED = 6


def pairs_phrase(pairs: list[tuple[int, int]]) -> str:
    """``0-16, 1-17`` for a few pairs; ``40 pairs among CPUs 0-31`` for more."""
    if len(pairs) <= MOST_PAIRS_NAMED:
        return f"pair{'s' if len(pairs) > 1 else ''} {', '.join(f'{a}-{b}' for a, b in pairs)}"
    return f"{len(pairs)} pairs among CPUs {cpu_list({c for p in pairs for c in p})}"


def population_phrase(found: Population) -> str:
    """``~113 ns over 7680 pairs [97-158] (CPUs 64-127,192-255)``."""
    return (
        f"~{found.latency_ns:g} ns over {found.pairs} pair(s) [{found.low_ns:g}-{found.high_ns:g}] "
        f"(CPUs {cpu_list(found.cpus)})"
    )


def findings(analysis: Analysis, topology, smt_ratio: float) -> list[str]:
    """One sentence per thing a user should know (module docstring); `smt_ratio` is the loop's
    rate ratio at or below which a pair shares execution units (`analysis.SMT_RATIO`)."""
    by_level = {c.level: c for c in analysis.costs}
    if topology is None:
        said = _flat(analysis)
    else:
        said = [*_odd(analysis, by_level)]
        said += [_populations(cost) for cost in analysis.costs if len(cost.populations) > 1]
    if analysis.unstable:
        named = [r.pair for r in analysis.unstable]
        detail = (
            ", ".join(f"{a}-{b} ({_ns(r.latencies)} ns)" for r in analysis.unstable for a, b in [r.pair])
            if len(named) <= MOST_PAIRS_NAMED
            else pairs_phrase(named)
        )
        said.append(
            f"unstable placement: {len(named)} pair(s) changed class between repetitions ({detail}): on a "
            "virtual machine the vCPUs move between host cores; a plan tuned to one moment may not hold at the next"
        )
    if analysis.repetitions < 2:
        said.append("one repetition: stability not tested (measure with --repeats 2 or more, or --load several runs)")
    if topology is not None:
        said += [_left_out(cost) for cost in analysis.costs if cost.left_out]
    said += _order(analysis.costs)
    if analysis.worst_ratio is not None:
        said.append(
            f"interference: the worst pair ran the compute loop at {analysis.worst_ratio:.2f} of its rate alone"
            + ("" if analysis.worst_ratio > smt_ratio else " (SMT-like sharing of execution units)")
        )
    kinds = None if analysis.kinds is None else analysis.kinds.finding()
    if kinds is not None:
        said.append(kinds)
    return said


def _flat(analysis: Analysis) -> list[str]:
    """Without a topology every pair is of one level: one sentence instead of its odd pairs."""
    (cost,) = analysis.costs
    others = cost.left_out - cost.unstable
    if not others:
        return []
    return [
        f"a flat set of CPUs (no --topology): {others} of {len(analysis.level_of)} pairs do not cost the "
        f"{cost.latency_ns:g} ns most pairs cost ({_parts(cost, with_unstable=False)}): the proposed structure "
        "says which CPUs share what"
    ]


def _odd(analysis: Analysis, by_level: dict[str, LevelCost]) -> list[str]:
    """Hidden sharing and slower pairs, one sentence per level and kind."""
    said = []
    for kind, reports in (("faster", analysis.hidden), ("slower", analysis.slower)):
        for level in by_level:
            mine = [r for r in reports if r.level == level]
            if not mine:
                continue
            typical = by_level[level].latency_ns
            text = (
                f"{pairs_phrase([r.pair for r in mine])} of level {level} {'are' if len(mine) > 1 else 'is'} "
                f"{kind} than it: {_range(mine)} ns against {typical:g} ns"
            )
            if kind == "slower":
                said.append(f"slower than their level: {text}")
                continue
            smt = sum(r.smt_like for r in mine)
            if smt:
                text += f"; {smt} of them behave as SMT siblings (the compute loop loses >= 25%)"
            said.append(f"hidden sharing: {text} (sharing the topology does not show)")
    return said


def _populations(cost: LevelCost) -> str:
    return (
        f"level {cost.level}: its pairs form {len(cost.populations)} populations, "
        + "; ".join(population_phrase(p) for p in cost.populations)
        + f" -- the tree says they cost alike; its cost is the largest population's ({cost.latency_ns:g} ns; "
        "a tie goes to the slower), not an average no pair has"
    )


def _left_out(cost: LevelCost) -> str:
    return (
        f"{cost.left_out} pair(s) of level {cost.level} left out of its cost ({_parts(cost)}): "
        "the uniform tree cannot express them"
    )


def _parts(cost: LevelCost, with_unstable: bool = True) -> str:
    """``16 faster, 224 in other populations``: why a level's pairs were left out of its cost."""
    others = cost.left_out - cost.faster - cost.slower - cost.unstable
    counts = [(cost.faster, "faster"), (cost.slower, "slower"), (others, "in other populations")]
    if with_unstable:
        counts.insert(2, (cost.unstable, "unstable"))
    return ", ".join(f"{n} {what}" for n, what in counts if n > 0)


def _order(costs: list[LevelCost]) -> list[str]:
    said = []
    for inner, outer in zip(costs, costs[1:]):
        if outer.low_ns <= inner.latency_ns <= outer.high_ns and inner.low_ns <= outer.latency_ns <= inner.high_ns:
            said.append(
                f"levels {inner.level} and {outer.level} cost the same within their ranges "
                f"({inner.latency_ns:g} and {outer.latency_ns:g} ns): the tree distinguishes what this host does not"
            )
        if inner.low_ns > outer.high_ns:
            said.append(
                f"level {inner.level} costs more than the level {outer.level} around it "
                f"({inner.latency_ns:g} ns against {outer.latency_ns:g} ns): the topology may be wrong"
            )
    return said


def _range(reports: list[PairReport]) -> str:
    return ns_range([v for r in reports for v in r.latencies])


def ns_range(values: list[float]) -> str:
    """``7-13`` (whole ns), or one figure where the range rounds to one."""
    low, high = min(values), max(values)
    return f"{low:.0f}" if round(low) == round(high) else f"{low:.0f}-{high:.0f}"


def _ns(values: list[float]) -> str:
    return "/".join(f"{v:.0f}" for v in values)
