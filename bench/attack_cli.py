"""The command line both adversarial benches share (`bench/adversarial.py`,
`bench/adversarial_more.py`): ``--tries N``, ``--only WORDS``, ``--no-write``; the results file is
written only for a whole run, and the exit code is 1 when any attack failed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from bench.results import write_results


def main(
    doc: str,
    attacks: Sequence[str],
    run: Callable[[list[str], int], dict],
    render: Callable[[dict], str],
    name: str,
    modules: Sequence[str],
    width: int = 55,
) -> None:
    """Run the `attacks` (each `--tries` times) with `run`, write ``bench/results/<name>.json``,
    print `render`'s table; exit 1 when an attack failed."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--tries", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated words: run the attacks whose name has one")
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    args = ap.parse_args()
    words = [w for w in args.only.split(",") if w]
    names = [n for n in attacks if not words or any(w.lower() in n.lower() for w in words)]
    print(f"{'attack':{width}s} {'tries':>3s} {'fail':>3s}  median")
    data = run(names, args.tries)
    if not args.no_write and not words:
        print(f"wrote {write_results(name, data, modules=list(modules))}")
    print(render(data))
    sys.exit(1 if any(r["failures"] for r in data["rows"]) else 0)
