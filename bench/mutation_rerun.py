"""Mutation testing again, on the survivors only: `bench/mutation.py`'s run carried forward.

A results file of `bench/mutation.py` lists every mutant's status.  When tests are only added to
the suite, a killed mutant stays killed, so only the survivors need to run again:

    python bench/mutation_rerun.py --survivors-of bench/results/mutation-level_lp.json --since COMMIT

`COMMIT` is the commit whose tests the file's run used; the script checks what makes the carry
sound (`rerun_survivors`) and rewrites the results file with the merged statuses, the command and
``carried`` (the commit, how many were carried, how many re-run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.mutants import key  # noqa: E402
from bench.mutation import MAX_WORKERS, mutate, render_markdown, score_line, summarise  # noqa: E402, F401
from bench.results import write_results  # noqa: E402


def _key(row: dict) -> str:
    return key(row["line"], row["col"], row["description"])


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def rerun_survivors(old_path: Path, since: str | None, workers: int) -> dict:
    """Re-run only the survivors of the results file `old_path` and carry its killed mutants over.

    `since` is the commit whose module and tests that run used (default: the file's
    ``ran_on_commit``, recorded when the run started; a run started on uncommitted changes cannot
    be carried).  Sound only when every killed mutant stays killed: the module must be the same
    now as at `since` (working tree included) and the tests may only have gained lines since
    (``git diff --numstat``: no deletion in any of them)."""
    old = json.loads(old_path.read_text())
    data = old["data"]
    since = since or data.get("ran_on_commit")
    if not since or since.endswith("+dirty"):
        raise SystemExit(f"mutation: {old_path.name} names no clean commit its run used: give --since")
    module, tests = data["module"], data["tests"]
    if _git("diff", since, "--", module).strip():
        raise SystemExit(f"mutation: {module} changed since {since}: run every mutant again")
    for line in _git("diff", "--numstat", since, "--", *tests).splitlines():
        _, deleted, path = line.split("\t")
        if deleted != "0":
            raise SystemExit(f"mutation: {path} lost {deleted} line(s) since {since}: run every mutant again")
    survivors = {_key(r) for r in data["results"] if r["status"] == "survived"}
    fresh = mutate(module, tests, workers, only=survivors)
    again = {_key(r): r for r in fresh["results"]}
    rows = [again.get(_key(r), r) for r in data["results"]]
    for row in rows:  # `summarise` judges equivalence anew, from the notes of today
        row["status"] = "survived" if row["status"] == "equivalent" else row["status"]
    out = summarise(
        module, tests, rows, workers, fresh["timeout_s"], fresh["baseline_s"], fresh["seconds"], fresh["load_at_start"]
    )
    out["command"] = f"python bench/mutation_rerun.py --survivors-of {old_path.relative_to(ROOT)} --since {since[:12]}"
    out["ran_on_commit"] = fresh["ran_on_commit"]
    out["carried"] = {"from_commit": since, "killed": len(rows) - len(survivors), "rerun": len(survivors)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--survivors-of", type=Path, required=True, help="the results file of bench/mutation.py")
    ap.add_argument("--since", help="the commit whose tests that file's run used (default: the one it records)")
    ap.add_argument("--out", type=Path, help="results file (default: the one read)")
    ap.add_argument("--workers", type=int, default=MAX_WORKERS, help=f"parallel test runs (at most {MAX_WORKERS})")
    args = ap.parse_args(argv)
    data = rerun_survivors(args.survivors_of.resolve(), args.since, args.workers)
    print(score_line(data))
    out = (args.out or args.survivors_of).resolve()
    os.environ["TASKSOLVE_BENCH_RESULTS"] = str(out.parent)
    path = write_results(out.stem, data, modules=[data["module"], *data["tests"]], command=data["command"])
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
