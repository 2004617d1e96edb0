"""What the paper-reproduction scripts share: the results contract (``bench/results.py``) on the
path, spec variants built in memory, and the "papers" table row every script renders.

Each script states, before it runs, what counts as reproduced for each result (``CRITERIA``):
the project's machine model differs from the papers' hardware, so a reproduction is judged on
an order of methods, a ratio within a band or a trend's sign, never on the paper's exact figure.
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from results import markdown_table, write_results  # noqa: E402

__all__ = ["markdown_table", "papers_table", "spec_text", "write_results"]

PAPER_COLUMNS = ["result", "paper's figure", "ours", "criterion (stated beforehand)", "holds?", "why not"]


def spec_text(name: str, app: str, instances: int, topology: str = "ultrasparc-t2") -> str:
    """A one-application spec (``instances`` copies of the example application ``app``)."""
    return (
        f"tasksolve: 1\nname: {name}\ntopology: {topology}\napplications:\n  a: {app}\n"
        f"workload:\n  - {{app: a, instances: {instances}}}\n"
    )


def papers_table(verdicts: list[dict]) -> str:
    """The papers section's table: one row per result (keys: result, paper, ours, criterion, holds, why)."""
    rows = [
        [v["result"], v["paper"], v["ours"], v["criterion"], "yes" if v["holds"] else "**no**", v.get("why") or ""]
        for v in verdicts
    ]
    return markdown_table(PAPER_COLUMNS, rows)
