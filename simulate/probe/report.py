"""The probe's files and words: matrices as CSV, the findings as text, the costs in a topology.

CSV (one repetition per file, the format of ``tests/data/realhost``):
``cpu_i,cpu_j,latency_ns,slowdown_i,slowdown_j`` -- ``slowdown_*`` being the loop's rate with
the other CPU busy over its rate alone (below 1: slowed down).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from tasksolve.simulate.probe.analysis import Analysis, PairSample, Repetition

COLUMNS = ("cpu_i", "cpu_j", "latency_ns", "slowdown_i", "slowdown_j")


def read_csv(path: str | Path) -> Repetition:
    """One repetition from a CSV file; ValueError names the file and line of a bad row."""
    found: Repetition = {}
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)} (expected {', '.join(COLUMNS)})")
        for line, row in enumerate(reader, start=2):
            try:
                a, b = int(row["cpu_i"]), int(row["cpu_j"])
                sample = PairSample(float(row["latency_ns"]), float(row["slowdown_i"]), float(row["slowdown_j"]))
            except (TypeError, ValueError):
                raise ValueError(f"{path}:{line}: not a row of numbers: {row}") from None
            if a == b or sample.latency_ns <= 0:
                raise ValueError(f"{path}:{line}: a pair needs two CPUs and a positive latency")
            found[(min(a, b), max(a, b))] = sample
    return found


def write_csv(repetition: Repetition) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for (a, b), s in sorted(repetition.items()):
        writer.writerow([a, b, f"{s.latency_ns:.1f}", f"{s.ratio_i:.3f}", f"{s.ratio_j:.3f}"])
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
    return Topology.model_validate(data), notes


def render_text(analysis: Analysis, data_notes: list[str], seconds: float | None = None) -> list[str]:
    """The lines ``tasksolve topology probe`` prints."""
    pairs = len(analysis.level_of)
    lines = [
        f"probed {len(analysis.cpus)} CPUs, {pairs} pairs, {analysis.repetitions} repetition(s)"
        + (f" in {seconds:.1f}s" if seconds is not None else ""),
        *(f"  {note}" for note in data_notes),
        "communication cost per level (median over its regular pairs; range over the pairs):",
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
