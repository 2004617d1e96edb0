"""LATA vs CP-SAT vs the comparison systems (Parallel, List, Greedy, Random, Bipar) on the example
task graphs, at L0 = 75% of the sequential time (LATA, DAC'10, evaluation) and at looser bounds
where 75% is below the minimum achievable latency.

For each case (application on a topology, latency bound, contexts) every method is run; Random
with seeds 0..R-1 and CP-SAT with seeds 0..S-1 (medians reported), each plan measured by the
closed-form model and by the discrete-event simulation (saturated sources, so simulated latency
includes queueing).  Prints a Markdown report; ``--jsonl`` appends one line per run.

    python bench/pipeline_compare.py --time-limit 30 --workers 2 --random-seeds 10 --cpsat-seeds 3
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import yaml

from tasksolve.solver.pipeline import cpsat
from tasksolve.solver.pipeline.candidates import check_candidate
from tasksolve.solver.pipeline.compare import Measurer, run_method
from tasksolve.solver.pipeline.plans import pipeline_problems, to_plan
from tasksolve.solver.pipeline.problem import PipelineProblem
from tasksolve.specs import dump_spec, load_spec, load_spec_text

CASES = [
    # (label, spec, application file to swap in or None, bounds, cores)
    ("lata-dag on Xeon", "xeon-lata-dag", None, ["75%", "95%", "100%"], None),
    ("npire-router on Xeon", "xeon-lata-dag", "npire-router", ["75%", "95%", "100%"], None),
    ("npire-router on T2, 16 contexts", "t2-npire-router", None, ["75%", "90%"], 16),
    ("npire-router on T2, 64 contexts", "t2-npire-router", None, ["75%", "90%"], None),
]
HEURISTICS = ["lata", "parallel", "list", "greedy", "bipar"]


def case_spec(name: str, app: str | None):
    spec = load_spec(name)
    if app is None:
        return spec
    data = yaml.safe_load(dump_spec(spec))
    from tasksolve.specs.loader import builtin_path

    application = yaml.safe_load(builtin_path("apps", app).read_text())
    for task in application["tasks"].values():  # its demands name the other machine's resources
        task.pop("demand", None)
        task.pop("idle_demand", None)
    data["applications"] = {"app": application}
    data["workload"] = [{"app": "app", "instances": 1}]
    data["name"] = f"{name}+{app}"
    data.get("constraints", {}).pop("latency_max", None)
    return load_spec_text(yaml.safe_dump(data, sort_keys=False), file=f"{name}+{app}")


def run_case(label, spec, bound, cores, args, measurer_cache, log) -> dict:
    problem = PipelineProblem.from_spec(spec, latency_max=bound, cores=cores)
    row = {
        "case": label,
        "bound": bound,
        "contexts": problem.n_contexts,
        "sequential": problem.cycles(problem.sequential),
        "critical_path": problem.cycles(problem.critical_path),
        "L0": problem.cycles(problem.latency_max),
        "clock": problem.clock,
        "methods": {},
    }
    measurer = None
    if args.simulate:
        key = (spec.name, cores)
        if key not in measurer_cache:
            measurer_cache[key] = Measurer(spec, problem, "des", seed=0, packets=args.packets)
        measurer = measurer_cache[key]

    def record(name, result, extra=None):
        ev = result.evaluation
        assert check_candidate(problem, result.candidate) == []
        plan = to_plan(problem, result.candidate, name)
        assert pipeline_problems(spec, plan) == []
        entry = {
            "status": result.status,
            "latency": ev.latency_cycles,
            "throughput": ev.throughput,
            "period": ev.period_cycles,
            "threads": ev.threads,
            "meets": ev.feasible,
            "seconds": result.seconds,
            "gap": result.gap,
        }
        if measurer is not None and result.status not in ("INFEASIBLE", "UNKNOWN"):
            m = measurer.measure(plan)
            entry["sim_throughput"] = m.throughput
            entry["sim_latency"] = m.latency_mean * problem.clock
        entry.update(extra or {})
        log({"case": label, "bound": bound, "method": name, **entry})
        return entry

    minimum = cpsat.min_latency(problem, time_limit=args.time_limit, workers=args.workers)
    row["min_latency"] = None if minimum[0] is None else problem.cycles(minimum[0])
    row["min_latency_status"] = minimum[2]
    for name in HEURISTICS:
        row["methods"][name] = [record(name, run_method(problem, name))]
    row["methods"]["random"] = [
        record("random", run_method(problem, "random", seed=s), {"seed": s}) for s in range(args.random_seeds)
    ]
    lata_result = run_method(problem, "lata")
    list_result = run_method(problem, "list")
    row_hint = min([lata_result, list_result], key=lambda r: r.evaluation.rank()).candidate
    row["methods"]["cpsat"] = []
    for s in range(args.cpsat_seeds):
        t0 = time.perf_counter()
        r = cpsat.solve(problem, time_limit=args.time_limit, workers=args.workers, seed=s, hint=row_hint)
        r.seconds = time.perf_counter() - t0
        row["methods"]["cpsat"].append(record("cpsat", r, {"seed": s}))
    return row


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, spec="{:.4g}"):
    return "-" if v is None else spec.format(v)


def report(rows, args, seconds) -> str:
    out = ["# Pipeline benchmark: LATA vs CP-SAT vs the comparison systems", ""]
    out.append(
        f"Command: `python bench/pipeline_compare.py --time-limit {args.time_limit:g} --workers {args.workers} "
        f"--random-seeds {args.random_seeds} --cpsat-seeds {args.cpsat_seeds} --packets {args.packets}`  "
    )
    out.append(
        f"Machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"2 cores shared with other jobs (timings are noisy); total {seconds:.0f} s.  "
    )
    out.append(
        "Figures: closed-form model (latency = longest path of thread times, Mpps = clock / period); "
        "`sim` = discrete-event simulation with saturated sources (its latency includes queueing). "
        "Random: median over seeds; CP-SAT: median over solver seeds (status of the worst)."
    )
    out.append("")
    for row in rows:
        clock = row["clock"]
        us = lambda cycles, clock=clock: None if cycles is None else cycles / clock * 1e6  # noqa: E731
        out.append(
            f"## {row['case']}, L0 = {row['bound']} of sequential ({row['L0']:.6g} cycles, {us(row['L0']):.4g} us)"
        )
        out.append("")
        out.append(
            f"{row['contexts']} contexts; sequential {row['sequential']:.6g} cycles, critical path "
            f"{row['critical_path']:.6g}, minimum achievable latency "
            f"{fmt(row['min_latency'], '{:.6g}')} ({row['min_latency_status']})."
        )
        out.append("")
        out.append("| method | status | meets L0 | latency us | Mpps | threads | sim latency us | sim Mpps | time s |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for name in ["cpsat", "lata", "parallel", "list", "greedy", "random", "bipar"]:
            runs = row["methods"][name]
            statuses = sorted({r["status"] for r in runs})
            meets = sum(r["meets"] for r in runs)
            gap = median([r.get("gap") for r in runs])
            status = "/".join(statuses) + (f" (gap {gap:.1%})" if name == "cpsat" and gap else "")
            out.append(
                "| "
                + " | ".join(
                    [
                        name,
                        status,
                        f"{meets}/{len(runs)}",
                        fmt(us(median([r["latency"] for r in runs])), "{:.3f}"),
                        fmt(median([r["throughput"] for r in runs]) / 1e6),
                        fmt(median([r["threads"] for r in runs]), "{:g}"),
                        fmt(us(median([r.get("sim_latency") for r in runs])), "{:.3f}"),
                        fmt(
                            None
                            if median([r.get("sim_throughput") for r in runs]) is None
                            else median([r.get("sim_throughput") for r in runs]) / 1e6
                        ),
                        fmt(median([r["seconds"] for r in runs]), "{:.2f}"),
                    ]
                )
                + " |"
            )
        lata_lat = row["methods"]["lata"][0]["latency"]
        rnd_lat = median([r["latency"] for r in row["methods"]["random"]])
        lata_thr = row["methods"]["lata"][0]["throughput"]
        rnd_thr = median([r["throughput"] for r in row["methods"]["random"]])
        out.append("")
        out.append(
            f"LATA vs Random (median): latency {100 * (rnd_lat - lata_lat) / rnd_lat:+.1f}% lower, "
            f"throughput x{lata_thr / rnd_thr:.2f}."
        )
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--random-seeds", type=int, default=10)
    parser.add_argument("--cpsat-seeds", type=int, default=3)
    parser.add_argument("--packets", type=int, default=50_000)
    parser.add_argument("--no-simulate", dest="simulate", action="store_false")
    parser.add_argument("--cases", default="all", help="comma-separated case indices (0-based) or all")
    parser.add_argument("--jsonl", type=Path, default=None, help="append one JSON line per run")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the report here")
    args = parser.parse_args(argv)
    chosen = range(len(CASES)) if args.cases == "all" else [int(i) for i in args.cases.split(",")]
    log_file = args.jsonl.open("a") if args.jsonl else None

    def log(entry):
        if log_file:
            log_file.write(json.dumps(entry) + "\n")
            log_file.flush()

    t0 = time.perf_counter()
    rows, cache, skipped = [], {}, []
    for i in chosen:
        label, name, app, bounds, cores = CASES[i]
        spec = case_spec(name, app)
        for bound in bounds:
            problem = PipelineProblem.from_spec(spec, latency_max=bound, cores=cores)
            if problem.latency_max < problem.critical_path:
                note = (
                    f"{label}, L0 = {bound} of sequential = {problem.cycles(problem.latency_max):.6g} cycles: below "
                    f"the critical path ({problem.cycles(problem.critical_path):.6g} cycles), no plan can meet it; skipped"
                )
                print(note, file=sys.stderr)
                skipped.append(note)
                continue
            print(f"{label}, L0 = {bound} ...", file=sys.stderr, flush=True)
            rows.append(run_case(label, spec, bound, cores, args, cache, log))
    text = report(rows, args, time.perf_counter() - t0)
    if skipped:
        text += "\n## Skipped\n\n" + "\n".join(f"- {n}" for n in skipped) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
