"""The probe's files and words: matrices as CSV, the findings and the proposed structure as text,
the measured costs (and kinds of core, where there are two or more) in a given topology, the
proposed structure as a topology of its own (with the kinds).

CSV (one repetition per file, the format of ``tests/data/realhost``):
``cpu_i,cpu_j,latency_ns,slowdown_i,slowdown_j,alone_i,alone_j`` -- ``slowdown_*`` being the
loop's rate with the other CPU busy over its rate alone (below 1: slowed down), ``alone_*`` its
rate alone in iterations per second it ran (`simulate.probe.measure`; files saved before it was
kept end at ``slowdown_j``; a latency-only repetition has the first three columns).  Reading (this format and the
public latency matrix) is `simulate.probe.loading`.
"""

from __future__ import annotations

import csv
import io

from tasksolve.simulate.probe.analysis import Analysis, Repetition
from tasksolve.simulate.probe.findings import ns_range, pairs_phrase, population_phrase
from tasksolve.simulate.probe.loading import read_csv as read_csv
from tasksolve.simulate.probe.structure import Proposal, ProposedLevel, level_name, sizes_phrase
from tasksolve.specs.importers.cpusets import cpu_list

COLUMNS = ("cpu_i", "cpu_j", "latency_ns", "slowdown_i", "slowdown_j")
ALONE = ("alone_i", "alone_j")
#: a proposed level of more groups than this shows the first ones, the last and a count
MOST_GROUP_LINES = 4


def write_csv(repetition: Repetition) -> str:
    """One repetition as the probe's CSV (the slowdown columns only where interference was
    measured, the rates alone only where every sample kept them)."""
    measured = all(s.ratio is not None for s in repetition.values())
    alone = all(s.alone_i is not None and s.alone_j is not None for s in repetition.values())
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow((*(COLUMNS if measured else COLUMNS[:3]), *(ALONE if alone else ())))
    for (a, b), s in sorted(repetition.items()):
        ratios = [f"{s.ratio_i:.3f}", f"{s.ratio_j:.3f}"] if measured else []
        rates = [f"{s.alone_i:.7g}", f"{s.alone_j:.7g}"] if alone else []
        writer.writerow([a, b, f"{s.latency_ns:.1f}", *ratios, *rates])
    return out.getvalue()


def with_costs(topology, analysis: Analysis):
    """`topology` with a direct communication section: the measured cycles of each level the
    probe measured; notes (for the file's comments) on what it could not express."""
    from tasksolve.specs.topology import Topology

    cycles = {c.level: c.cycles for c in analysis.costs if c.cycles is not None}
    notes = [
        f"communication: measured by `tasksolve topology probe` ({analysis.repetitions} repetition(s)), "
        "cycles per cache line, one way; " + ", ".join(f"{c.level} {c.latency_ns:g} ns" for c in analysis.costs)
    ]
    unmeasured = [name for name in topology.shared_level_names if name not in cycles]
    if unmeasured:
        notes.append(f"not measured (no probed pair shares them): {', '.join(unmeasured)} -- they cost 0 until added")
    if topology.communication is not None:
        notes.append("the probe replaced the topology's own communication section")
    notes += [f"probe: {text}" for text in analysis.findings if not text.startswith("interference")]
    data = topology.model_dump(mode="json", exclude_none=True)
    data["communication"] = {"model": "direct", "cycles": cycles}
    notes += _kinds_into(data, topology, analysis)
    return Topology.model_validate(data), notes


def _kinds_into(data: dict, topology, analysis: Analysis) -> list[str]:
    """Put the kinds of core the probe told apart into `data` (`topology` dumped), where every
    usable CPU of it was probed; the notes say what was done or why not."""
    from tasksolve.simulate.probe.kinds import topology_kinds

    kinds = analysis.kinds
    if kinds is None or not kinds.several:
        if kinds is not None and topology.kinds:
            return ["the probe told no kinds of core apart; the topology's own kinds are kept"]
        return []
    usable = {topology.os_cpu(c) for c in topology.usable_contexts}
    unprobed = sorted(usable - set(analysis.cpus))
    if unprobed:
        return [f"kinds of core not written: CPUs {cpu_list(unprobed)} were not probed, their kind is unknown"]
    data["kinds"] = topology_kinds(kinds, topology)
    said = [_kinds_note(kinds)]
    if topology.kinds:
        said.append("the probe replaced the topology's own kinds of core")
    return said


def _kinds_note(kinds) -> str:
    names = ", ".join(f"{k.name} (CPUs {cpu_list(k.cpus)}) at {k.speed:.2f}" for k in kinds.kinds)
    return (
        f"kinds of core from the compute loop's rate alone: {names}; speeds relative to the fastest kind, "
        "whose cores run at the clock (the loop's clock x IPC: other code may differ)"
    )


def render_text(analysis: Analysis, data_notes: list[str], seconds: float | None = None) -> list[str]:
    """The lines ``tasksolve topology probe`` prints about the analysis."""
    pairs = len(analysis.level_of)
    lines = [
        f"probed {len(analysis.cpus)} CPUs, {pairs} pairs, {analysis.repetitions} repetition(s)"
        + (f" in {seconds:.1f}s" if seconds is not None else ""),
        *(f"  {note}" for note in data_notes),
        "communication cost per level (median of its main population; range over those pairs):",
    ]
    for c in analysis.costs:
        cyc = f" = {c.cycles:g} cycles" if c.cycles is not None else ""
        lines.append(f"  {c.level:<10} {c.latency_ns:8.1f} ns{cyc}  [{c.low_ns:g}-{c.high_ns:g}] over {c.pairs} pairs")
    if analysis.stable_share is not None:
        spread = (
            ""
            if analysis.latency_spread is None
            else f"; latency spread across repetitions {analysis.latency_spread:.0%}"
        )
        lines.append(f"stability: {analysis.stable_share:.0%} of pairs kept their class{spread}")
    lines.append("findings:")
    lines += [f"  - {text}" for text in analysis.findings]
    return lines


def render_proposal(proposal: Proposal, analysis: Analysis) -> list[str]:
    """The proposed structure, one block per level, groups as CPU ranges (``CPUs 0-7,16-23 share
    one domain at ~18 ns``); many groups as the first ones, the last and their pattern."""
    lines = ["proposed structure, from the latencies alone (complete-linkage clusters cut between populations):"]
    if not proposal.levels:
        lines.append("  none: no set of CPUs is closer among itself than to the others (a flat set of CPUs)")
    for k, level in enumerate(proposal.levels):
        main = " (its main population)" if len(level.populations) > 1 else ""
        lines.append(
            f"  level {k + 1} at ~{level.latency_ns:g} ns{main}: {sizes_phrase(level.groups)}"
            + (f" (named {level_name(k, len(proposal.levels))} in --write-topology)" if proposal.tree else "")
        )
        lines += _level_lines(level, analysis)
    rest = "the other pairs" if proposal.levels else "every pair"
    lines.append(f"  machine: {rest} at ~{proposal.machine.latency_ns:g} ns")
    lines += _level_lines(proposal.machine, analysis, groups=False)
    if proposal.tree:
        names = [level_name(k, len(proposal.levels)) for k in reversed(range(len(proposal.levels)))] + ["cpu"]
        shape = " > ".join(f"{name}: {n}" for name, n in zip(names, _counts(proposal)))
        kinds = proposal.kinds
        with_kinds = f" with its {len(kinds.kinds)} kinds of core" if kinds is not None and kinds.several else ""
        lines.append(f"  a uniform tree: {shape}; --write-topology FILE writes it{with_kinds}")
    else:
        lines.append(f"  not a uniform tree: {proposal.why_not_tree}; nothing to write as a topology")
    return lines


def _level_lines(level: ProposedLevel, analysis: Analysis, groups: bool = True) -> list[str]:
    lines = []
    if len(level.populations) > 1:
        lines.append(f"    {len(level.populations)} populations, not averaged:")
        lines += [f"      {population_phrase(p)}" for p in level.populations]
    if groups:
        lines += _group_lines(level)
    for kind, odd in (("faster", level.faster), ("slower", level.slower)):
        if odd:
            values = [analysis.medians[p] for p in odd]
            lines.append(f"    {pairs_phrase(odd)} {kind} than the level: {ns_range(values)} ns (--json lists them)")
    return lines


def _group_lines(level: ProposedLevel) -> list[str]:
    """A line per group (``CPUs 0-7,16-23 share one domain at ~18 ns``), or for many groups the
    first two, the last and their pattern; CPUs in no group of the level on a line of their own."""
    chosen = [(g, ns) for g, ns in zip(level.groups, level.group_ns) if len(g) > 1]
    alone = sorted(g[0] for g in level.groups if len(g) == 1)
    shown = [cpu_list(g) for g, _ in chosen]
    if len(shown) > MOST_GROUP_LINES:
        step = _shift([g for g, _ in chosen])
        pattern = f"each the one before shifted by {step}" if step else "--json lists them all"
        lines = [f"    CPUs {' | '.join(shown[:2])} | ... | {shown[-1]} ({pattern})"]
    else:
        lines = []
        for (group, ns), text in zip(chosen, shown):
            lines.append(f"    CPUs {text} share one domain" + ("" if ns is None else f" at ~{ns:g} ns"))
            if group == level.inferred:
                lines.append(
                    "      (inferred: they share nothing faster among themselves than with the other CPUs; "
                    "one domain because they are the rest of the machine)"
                )
    if alone:
        lines.append(f"    CPUs {cpu_list(alone)}: in no group of this level")
    return lines


def _shift(groups: list[list[int]]) -> int | None:
    """The step by which each group is the one before shifted, if there is one."""
    step = groups[1][0] - groups[0][0]
    for before, after in zip(groups, groups[1:]):
        if [c + step for c in before] != after:
            return None
    return step


def _counts(proposal: Proposal) -> list[int]:
    """The counts of a uniform proposal's topology levels, outermost first (the last: CPUs per
    innermost domain)."""
    sizes = [level.size for level in proposal.levels]
    outer = [len(proposal.cpus) // sizes[-1]] if sizes else [len(proposal.cpus)]
    return outer + [big // small for big, small in zip(reversed(sizes), reversed(sizes[:-1]))] + sizes[:1]


def proposed_topology(proposal: Proposal, clock_hz: float | None, name: str, source: str):
    """The proposal as a topology (a uniform tree only): levels ``domain_a`` (outermost) ... and
    ``cpu``, each context with its OS CPU, a direct communication section at `clock_hz` (none
    without a clock: the default 1 GHz is a placeholder, said so); notes for the comments."""
    from tasksolve.specs.importers.host import DEFAULT_CLOCK_HZ
    from tasksolve.specs.topology import Topology

    counts, depth = _counts(proposal), len(proposal.levels)
    names = [level_name(k, depth) for k in reversed(range(depth))] + ["cpu"]
    data = {
        "name": name,
        "description": f"proposed by `tasksolve topology probe` from the latencies of {source}",
        "clock": clock_hz or DEFAULT_CLOCK_HZ,
        "levels": [{"name": n, "count": c} for n, c in zip(names, counts)],
    }
    contexts = Topology.model_validate(data).context_names
    data["os_cpus"] = dict(zip(contexts, _context_order(proposal)))
    notes = [
        f"proposed by `tasksolve topology probe` from the latencies alone ({source}): "
        "complete-linkage clusters cut between latency populations; level names say nothing of what is shared"
    ]
    if proposal.kinds is not None and proposal.kinds.several:
        from tasksolve.simulate.probe.kinds import topology_kinds

        data["kinds"] = topology_kinds(proposal.kinds, Topology.model_validate(data))
        notes.append(_kinds_note(proposal.kinds))
    for k, level in enumerate(proposal.levels):
        text = f"{level_name(k, depth)}: {len(level.groups)} domains of {level.size} CPUs at {level.latency_ns:g} ns"
        if len(level.populations) > 1:
            text += " (its main population; all: " + "; ".join(population_phrase(p) for p in level.populations) + ")"
        notes.append(text)
        if level.inferred is not None:
            notes.append(f"  CPUs {cpu_list(level.inferred)}: inferred as one domain (the rest of the machine)")
    notes.append(f"machine: {proposal.machine.latency_ns:g} ns")
    if clock_hz:
        cycles = {level_name(k, depth): level.latency_ns for k, level in enumerate(proposal.levels)}
        cycles["machine"] = proposal.machine.latency_ns
        data["communication"] = {
            "model": "direct",
            "cycles": {n: round(ns * clock_hz / 1e9, 1) for n, ns in cycles.items()},
        }
    else:
        notes.append("clock 1GHz is a placeholder (latencies carry no clock): give --clock; no communication section")
    return Topology.model_validate(data), notes


def _context_order(proposal: Proposal) -> list[int]:
    """The OS CPUs in depth-first order of the proposed tree (groups by their lowest CPU)."""

    def walk(cpus: list[int], k: int) -> list[int]:
        if k < 0:
            return sorted(cpus)
        inside = set(cpus)
        return [c for group in proposal.levels[k].groups if inside.issuperset(group) for c in walk(group, k - 1)]

    return walk(proposal.cpus, len(proposal.levels) - 1)
