"""Benchmark `solver.makespan` on the Standard Task Graph set (Tobita & Kasahara 2002).

Runs every ``rand*.stg`` graph of the 50-task set on 2, 4, 8 and 16 processors (720 cases)
with a per-case CP-SAT time limit, one worker and a fixed seed, compares each answer with the
set's ``optimal.csv`` (best lower bound and best known makespan), and prints a Markdown summary.

Each finished case is appended to a JSON-lines results file (flushed at once) and a rerun skips
the cases already there, so an interrupted run loses nothing::

    python bench/stg_makespan.py --results bench/stg_makespan.jsonl --time-limit 10
    python bench/stg_makespan.py --results bench/stg_makespan.jsonl --summary-only

Each stored schedule is checked again against the graph when the summary is written.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

from results import write_results

from tasksolve.solver.makespan import Schedule, ScheduledTask, schedule_violations, solve_makespan
from tasksolve.solver.makespan.stg import read_optimal_csv, read_stg

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "stg" / "rand50"  # shared/ beside the checkout


def load_results(path: Path) -> dict[tuple[str, int], dict]:
    """The cases already in the results file (a truncated last line is ignored)."""
    done: dict[tuple[str, int], dict] = {}
    if not path.exists():
        return done
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            print(f"{path}:{lineno}: ignoring an unreadable line (interrupted write?)", file=sys.stderr)
            continue
        done[(row["graph"], row["processors"])] = row
    return done


def run_case(data: Path, graph: str, processors: int, time_limit: float, seed: int, deterministic: bool) -> dict:
    g = read_stg(data / graph)
    result = solve_makespan(g, processors, time_limit=time_limit, seed=seed, workers=1, deterministic=deterministic)
    return {
        "graph": graph,
        "processors": processors,
        "status": result.status.value,
        "makespan": result.makespan,
        "lower_bound": result.lower_bound,
        "list_makespan": result.list_makespan,
        "bounds": result.bounds,
        "source": result.source,
        "cpsat_status": result.cpsat_status,
        "wall_time": round(result.wall_time, 3),
        "time_limit": time_limit,
        "seed": seed,
        "deterministic": deterministic,
        "schedule": [[t.processor, t.start] for t in result.schedule.tasks],
    }


def verify(data: Path, row: dict) -> list[str]:
    """Re-check a stored schedule against its graph."""
    g = read_stg(data / row["graph"])
    tasks = tuple(ScheduledTask(name, p, s, s + d) for name, d, (p, s) in zip(g.names, g.durations, row["schedule"]))
    schedule = Schedule(tasks, row["processors"])
    problems = schedule_violations(g, schedule, comm_delays=False)
    if not problems and schedule.makespan != row["makespan"]:
        problems.append(f"stored makespan {row['makespan']} != schedule's {schedule.makespan}")
    return problems


def _interesting_rows(keys, rows: dict, table: dict, marks: dict[str, list], invalid: dict) -> list[str]:
    """The table of cases worth a look: each with what marks it (`marks`: note -> cases)."""
    out = ["", "| graph | P | CSV lower bound | best known | our lower bound | our makespan | status | note |"]
    out.append("|---|---|---|---|---|---|---|---|")
    for k in keys:
        r, t = rows[k], table[k]
        notes = [note for note, cases in marks.items() if k in cases]
        if k in invalid:
            notes.append("INVALID: " + invalid[k][0])
        out.append(
            f"| {k[0]} | {k[1]} | {t.lower_bound} | {t.best_known} | "
            f"{r['lower_bound']} | {r['makespan']} | {r['status']} | "
            f"{', '.join(notes)} |"
        )
    return out


def summary(data: Path, rows: dict[tuple[str, int], dict], table: dict, total: int) -> str:
    out: list[str] = []
    keys = sorted(rows)
    n = len(keys)
    optimal = [k for k in keys if rows[k]["status"] == "OPTIMAL"]
    by_bound = [k for k in optimal if rows[k]["source"] == "bound"]
    equal = [k for k in keys if rows[k]["makespan"] == table[k].best_known]
    worse = [k for k in keys if rows[k]["makespan"] > table[k].best_known]
    beats = [k for k in keys if rows[k]["makespan"] < table[k].best_known]
    lb_up = [k for k in keys if rows[k]["lower_bound"] > table[k].lower_bound]
    below_csv_lb = [k for k in keys if rows[k]["makespan"] < table[k].lower_bound]
    lb_above_best = [k for k in keys if rows[k]["lower_bound"] > table[k].best_known]
    newly_closed = [k for k in optimal if not table[k].is_optimal]
    invalid = {k: p for k in keys if (p := verify(data, rows[k]))}
    times = [rows[k]["wall_time"] for k in keys]

    out.append(f"- cases run: **{n} of {total}**")
    out.append(
        f"- proven optimal within the limit: **{len(optimal)}** "
        f"({len(by_bound)} by list schedule = lower bound without CP-SAT, "
        f"{len(optimal) - len(by_bound)} by CP-SAT)"
    )
    out.append(
        f"- makespan equal to best known: **{len(equal)}**; better than best known: "
        f"**{len(beats)}**; worse than best known: **{len(worse)}**"
    )
    out.append(
        f"- our lower bound above the CSV lower bound: **{len(lb_up)}**; "
        f"CSV-open cases ({sum(1 for k in keys if not table[k].is_optimal)} run) "
        f"closed by us: **{len(newly_closed)}**"
    )
    out.append(
        f"- consistency: schedules failing re-verification: {len(invalid)}; makespans "
        f"below the CSV lower bound: {len(below_csv_lb)}; our lower bounds above the "
        f"best known: {len(lb_above_best)}"
    )
    if times:
        out.append(
            f"- solve time per case (wall, s): median {statistics.median(times):.2f}, "
            f"mean {statistics.fmean(times):.2f}, max {max(times):.2f}, "
            f"total {sum(times) / 60:.1f} min"
        )
    out.append("")
    out.append(
        "| P | cases | optimal | by bound | = best known | < best known | > best known "
        "| LB > CSV LB | median s | max s |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for p in sorted({k[1] for k in keys}):
        ks = [k for k in keys if k[1] == p]
        ts = [rows[k]["wall_time"] for k in ks]
        out.append(
            f"| {p} | {len(ks)} | {sum(1 for k in ks if k in set(optimal))} "
            f"| {sum(1 for k in ks if k in set(by_bound))} "
            f"| {sum(1 for k in ks if k in set(equal))} | {sum(1 for k in ks if k in set(beats))} "
            f"| {sum(1 for k in ks if k in set(worse))} | {sum(1 for k in ks if k in set(lb_up))} "
            f"| {statistics.median(ts):.2f} | {max(ts):.2f} |"
        )
    interesting = sorted(set(beats) | set(lb_up) | set(worse) | set(invalid))
    if interesting:
        marks = {
            "beats best known": beats,
            "bound improved": lb_up,
            "closed": newly_closed,
            "worse than best known": worse,
        }
        out += _interesting_rows(interesting, rows, table, marks, invalid)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="directory with rand*.stg and optimal.csv")
    parser.add_argument(
        "--results",
        type=Path,
        default=Path("bench/stg_makespan.jsonl"),
        help="JSON-lines results file (appended to, resumed from)",
    )
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per case")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--deterministic", action="store_true", help="use a CP-SAT deterministic-time limit instead of wall time"
    )
    parser.add_argument("--processors", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--limit", type=int, default=None, help="run only the first N graphs (smoke test)")
    parser.add_argument("--summary-only", action="store_true", help="do not run new cases")
    args = parser.parse_args(argv)

    table = read_optimal_csv(args.data / "optimal.csv")
    graphs = sorted(p.name for p in args.data.glob("rand*.stg"))[: args.limit]
    cases = [(g, p) for g in graphs for p in args.processors]
    done = load_results(args.results)
    for key, row in done.items():
        if (row["time_limit"], row["seed"]) != (args.time_limit, args.seed):
            print(
                f"{args.results}: {key} was run with time limit {row['time_limit']} and seed "
                f"{row['seed']}, not {args.time_limit} and {args.seed}; use another file",
                file=sys.stderr,
            )
            return 2
    if not args.summary_only:
        todo = [c for c in cases if c not in done]
        print(f"{len(done)} cases already done, {len(todo)} to run", file=sys.stderr)
        args.results.parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        with args.results.open("a") as out:
            for number, (graph, processors) in enumerate(todo, start=1):
                row = run_case(args.data, graph, processors, args.time_limit, args.seed, args.deterministic)
                out.write(json.dumps(row) + "\n")
                out.flush()
                done[(graph, processors)] = row
                print(
                    f"[{number}/{len(todo)} {time.perf_counter() - start:.0f}s] {graph} "
                    f"P={processors}: {row['status']} {row['makespan']} "
                    f"(lb {row['lower_bound']}, best known {table[(graph, processors)].best_known}) "
                    f"{row['wall_time']:.2f}s",
                    file=sys.stderr,
                    flush=True,
                )
    rows = {k: v for k, v in done.items() if k in set(cases)}
    print(
        f"## STG rand50 makespan benchmark\n\nmachine: {platform.machine()}, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}; "
        f"time limit {args.time_limit:g} s per case, 1 worker, seed {args.seed}\n"
    )
    text = summary(args.data, rows, table, len(cases))
    print(text)
    mode = "deterministic time" if args.deterministic else "wall clock"
    data = {"time_limit": args.time_limit, "seed": args.seed, "mode": mode, "cases": len(cases), "summary": text}
    write_results("stg-makespan", data, modules=MODULES)
    return 0


MODULES = [
    f"solver/makespan/{p.name}"
    for p in sorted((Path(__file__).resolve().parents[1] / "solver" / "makespan").glob("*.py"))
]


def render_markdown(data: dict) -> str:
    return (
        f"Time limit {data['time_limit']:g} s per case ({data['mode']}), 1 worker, seed {data['seed']}; "
        f"{data['cases']} cases (the command is in the results file):\n\n" + data["summary"]
    )


if __name__ == "__main__":
    sys.exit(main())
