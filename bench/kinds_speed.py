"""Does a hybrid processor (kinds of core, an irregular tree) cost `tasksolve run` time? The main
job on the hybrid desktop example beside every uniform tree of its size, and on the EPYC example
beside itself.

    python bench/kinds_speed.py --repeats 3

* ``alderlake-ids`` (20 threads on alderlake-12900k: 8 P-cores x 2 hyper-threads + 2 clusters of
  4 E-cores, 24 contexts held padded to 10 x 4 x 2 = 80) against the *uniform family*: every
  regular tree ``cluster: C, core: K, thread: T`` of 24 contexts with T = 2 (a P-core's
  hyper-threads) or T = 1 (an E-core's one), 14 trees (``alderlake-ids@12x1x2`` and so on): the
  same levels, resources and message costs; no `kinds`; each task's cycles its P-core cycles; OS
  CPUs 0-23 in order.  No single tree is *the* uniform machine of that size, and the job's time
  on them spreads widely (BENCHMARKS: 2.4 to 38.3 s, the slowest mostly its configuration bound),
  so the hybrid is compared with the family's middle (the median over the trees of each tree's
  median) and, beside it, with its fastest tree (before, the only twin: ``12x1x2``) and with the
  middle of each half of the family: the 6 trees with SMT (T = 2, as its P-cores, which hold 16 of
  its 24 contexts) and the 8 without (T = 1, as its E-cores).  The column "CP-SAT" says how the
  binding's CP-SAT run ended (OPTIMAL: it proved its plan inside the deterministic budget).
* ``epyc-l3fwd-dpi`` (12 threads on epyc-rome-2s, 64 contexts) has no kinds and a regular tree:
  its twin is the same spec (``@uniform``: an A/A pair; the spread between the two is this
  machine's noise).

Each run is `solver.job.run` in this process (as `bench/main_job.py`), with a fixed amount of work
so that the wall time measures speed rather than a time budget: CP-SAT on deterministic time
(``--deterministic``, `TIME_LIMIT`), a fixed certificate sample (`SAMPLES` local-search
restarts), no comparison sample, one worker, seed 0 (`OPTIONS`). Every spec runs once in every
repetition (interleaved, so a change of the machine's load hits all of them), in an order
shuffled anew each repetition (seeded by its number: a spec does not always follow the same one,
and the first of a repetition is not always the same spec), after one untimed run of the first
spec (the lazy imports -- matplotlib, OR-Tools, SciPy, the solvers -- paid before the clock
starts, not by the first timed run); medians of the wall time, of each phase
(solve, certify, report) and of the process's CPU time (every thread, CP-SAT's included: less
sensitive to the machine's load than the wall time), and the ratios example / family. Beside
them, what the run did that instances may legitimately differ in: the report's figures and the
distinct values of the certificate's sample (local optima reached; values within
`evt.atom.RELATIVE_TIE` are one). The goal: a wall-time ratio at most 1 against the family's
middle. Its spread: the same ratio within each repetition (the example's run over the median of
the trees' runs in that repetition), lowest and highest.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from results import ROOT, markdown_table, write_results

EXAMPLES = ROOT / "specs" / "examples"
#: the uniform trees (cluster, core, thread) each example is measured against (None: the
#: example's tree is already regular and has no kinds: its twin is itself, ``@uniform``)
TWINS = {
    "alderlake-ids": [(c, 24 // (c * t), t) for t in (2, 1) for c in range(1, 25) if 24 % (c * t) == 0],
    "epyc-l3fwd-dpi": None,
}
#: a hybrid's uniform trees by their threads per core: with SMT, as its P-cores; without, as its E-cores
SUBFAMILIES = {"with SMT (T = 2)": 2, "without SMT (T = 1)": 1}
TIME_LIMIT = 0.5  # deterministic seconds of CP-SAT
SAMPLES = 20
OPTIONS = {"deterministic": True, "workers": 1, "seed": 0, "compare_samples": 0}
MODULES = [
    "specs/topology.py",
    "specs/cpu_kinds.py",
    "specs/symmetry.py",
    "simulate/analytic.py",
    "simulate/model.py",
    "solver/binding/cpsat.py",
    "solver/binding/model.py",
    "solver/binding/problem.py",
    "solver/certify/fluid_max.py",
]
NOISY = ["rows.*.median_s", "rows.*.phases_s.*", "rows.*.cpu_median_s", "comparisons.*", "warmup_s"]
IGNORE = ["rows.*.runs_s", "rows.*.cpu_runs_s"]


def _reference_kind(topology: dict) -> str:
    """The kind whose cycles a task's single figure means: the one at the topology's clock, IPC 1."""
    for name, kind in topology["kinds"].items():
        if kind.get("clock") is None and kind.get("speed", 1) == 1 and kind.get("ipc", 1) == 1:
            return name
    raise ValueError("no kind runs at the topology's clock with IPC 1")


def _os_cpus(levels: list[dict]) -> dict[str, int]:
    names = [[f"{level['name']}{i}" for i in range(level["count"])] for level in levels]
    return {".".join(path): cpu for cpu, path in enumerate(itertools.product(*names))}


def twin_names(example: str) -> list[str]:
    """The twins of `example`: one per uniform tree (``example@CxKxT``), or ``example@uniform``."""
    shapes = TWINS[example]
    return [f"{example}@uniform"] if shapes is None else [f"{example}@{c}x{k}x{t}" for c, k, t in shapes]


def twin_text(name: str) -> str:
    """The example's spec as YAML text, its topology inline; for ``example@CxKxT``, the uniform
    tree's (cluster: C, core: K, thread: T); ``example@uniform`` is the example itself."""
    example, _, variant = name.partition("@")
    spec = yaml.safe_load((EXAMPLES / f"{example}.yaml").read_text())
    topology = yaml.safe_load((EXAMPLES / "topologies" / f"{spec['topology']}.yaml").read_text())
    if variant and variant != "uniform":
        counts = [int(x) for x in variant.split("x")]
        levels = [{"name": n, "count": c} for n, c in zip(("cluster", "core", "thread"), counts)]
        reference = _reference_kind(topology)
        topology = {k: v for k, v in topology.items() if k not in ("kinds", "os_cpus")}
        topology |= {"name": f"{topology['name']} (uniform {variant})", "levels": levels, "os_cpus": _os_cpus(levels)}
        for app in spec["applications"].values():
            for task in app["tasks"].values():
                if isinstance(task["cycles"], dict):
                    task["cycles"] = task["cycles"][reference]
    spec["topology"] = topology
    spec["name"] = name.replace("@", "-")
    return yaml.safe_dump(spec, sort_keys=False)


def one(name: str) -> dict:
    """One main job on ``name`` (an example, or its twin): wall time, phases, verdict, value."""
    from tasksolve.solver.job import run
    from tasksolve.specs import load_spec_text

    spec = load_spec_text(twin_text(name), f"<{name}>")
    with tempfile.TemporaryDirectory() as tmp:
        clock, cpu = time.perf_counter(), time.process_time()
        result = run(spec, Path(tmp) / "out", time_limit=TIME_LIMIT, samples=SAMPLES, **OPTIONS)
        wall, cpu = time.perf_counter() - clock, time.process_time() - cpu
        cert = json.loads((Path(tmp) / "out" / "certificate.json").read_text())
        figures = (Path(tmp) / "out" / "report.html").read_text().count("data:image/png;base64,")
        values = _sample_values(Path(tmp) / "out" / "samples.jsonl")
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "phases_s": dict(result.seconds),
        "figures": figures,
        "sample_values": values,
        "verdict": cert["verdict"],
        "cpsat": result.solve.status,
        "value": cert["plan_performance"]["value"],
        "threads": len(spec.threads),
        "contexts": len(spec.usable_contexts),
        "held_contexts": spec.topology.n_contexts,
    }


def _sample_values(path: Path) -> int:
    """How many distinct values the sample holds, values within `RELATIVE_TIE` of each other one."""
    from tasksolve.evt.atom import RELATIVE_TIE

    values = sorted(
        float(r["value"]) for r in map(json.loads, path.read_text().splitlines()[1:]) if r.get("status") == "ok"
    )
    return sum(1 for a, b in itertools.pairwise(values) if b - a > RELATIVE_TIE * max(abs(b), 1e-300)) + bool(values)


def summarise(name: str, runs: list[dict]) -> dict:
    phases = sorted({p for r in runs for p in r["phases_s"]})
    first = runs[0]
    return {
        "spec": name,
        "threads": first["threads"],
        "contexts": first["contexts"],
        "held_contexts": first["held_contexts"],
        "median_s": statistics.median(r["wall_s"] for r in runs),
        "runs_s": [r["wall_s"] for r in runs],
        "cpu_median_s": statistics.median(r["cpu_s"] for r in runs),
        "cpu_runs_s": [r["cpu_s"] for r in runs],
        "phases_s": {p: statistics.median(r["phases_s"].get(p, 0.0) for r in runs) for p in phases},
        "verdicts": sorted({r["verdict"] for r in runs}),
        "cpsat": sorted({r["cpsat"] for r in runs}),
        "value": first["value"],
        "figures": sorted({r["figures"] for r in runs}),
        "sample_values": sorted({r["sample_values"] for r in runs}),
    }


def render_markdown(data: dict) -> str:
    rows = []
    for r in data["rows"]:
        phases = " / ".join(f"{r['phases_s'].get(p, 0):.1f}" for p in ("solve", "certify", "report"))
        rows.append(
            [
                f"`{r['spec']}`",
                f"{r['threads']} / {r['contexts']} ({r['held_contexts']} held)",
                f"{r['median_s']:.1f} s",
                " ".join(f"{s:.1f}" for s in r["runs_s"]),
                phases,
                f"{r['cpu_median_s']:.1f} s",
                f"{', '.join(map(str, r['figures']))} / {', '.join(map(str, r['sample_values']))}",
                ", ".join(r["cpsat"]),
                ", ".join(r["verdicts"]),
            ]
        )
    comparisons = []
    for example, c in data["comparisons"].items():
        if c["trees"] == 1:
            comparisons.append(
                f"`{example}` / itself: **{c['middle']:.2f}** by wall ({_range(c)} within a repetition), "
                f"{c['cpu_middle']:.2f} by CPU"
            )
        else:
            comparisons.append(
                f"`{example}` / the middle of its {c['trees']} uniform trees: **{c['middle']:.2f}** by wall "
                f"({_range(c)} within a repetition), "
                f"{c['cpu_middle']:.2f} by CPU; faster than {c['slower_trees']} of them; / its fastest tree "
                f"(`{c['fastest']}`): {c['fastest_ratio']:.2f} by wall, {c['cpu_fastest_ratio']:.2f} by CPU"
            )
            for label, sub in c.get("subfamilies", {}).items():
                comparisons.append(
                    f"`{example}` / the middle of its {sub['trees']} trees {label}: **{sub['middle']:.2f}** by wall "
                    f"({_range(sub)} within a repetition), {sub['cpu_middle']:.2f} by CPU; faster than "
                    f"{sub['slower_trees']} of them"
                )
    columns = ["spec", "threads / contexts", "wall, median", "runs (s)", "solve / certify / report (s)"]
    columns += ["CPU, median", "figures / sample values", "CP-SAT", "verdict"]
    return (
        f"`tasksolve run` in process, fixed work (CP-SAT {data['time_limit']} deterministic s, "
        f"{data['samples']} restarts, 1 worker, seed 0, no comparison sample), {data['repeats']} repetitions "
        f"interleaved in an order shuffled each repetition after an untimed warm-up run; load average "
        f"{data['load_before']} before and {data['load_after']} after (1 / 5 min), 2 cores shared.\n\n"
        + markdown_table(columns, rows)
        + "\n\nRatios of median times (goal: at most 1 by wall against the middle): "
        + "; ".join(comparisons)
        + "."
    )


def _range(comparison: dict) -> str:
    low, high = comparison["middle_range"]
    return f"{low:.2f}-{high:.2f}"


def compare(example: str, rows: dict[str, dict]) -> dict:
    """`example`'s medians against its twins': the middle (the median over the twins of each
    twin's median), the fastest twin, how many twins were slower, and the middle of each
    sub-family of a hybrid's trees (`SUBFAMILIES`: with SMT, as its P-cores; without, as its
    E-cores)."""
    own, twins = rows[example], [rows[n] for n in twin_names(example)]
    fastest = min(twins, key=lambda r: r["median_s"])
    out = _against(own, twins) | {
        "fastest": fastest["spec"].partition("@")[2],
        "fastest_ratio": own["median_s"] / fastest["median_s"],
        "cpu_fastest_ratio": own["cpu_median_s"] / fastest["cpu_median_s"],
    }
    if TWINS[example] is not None:
        out["subfamilies"] = {
            label: _against(own, [r for r in twins if int(r["spec"].rpartition("x")[2]) == threads])
            for label, threads in SUBFAMILIES.items()
        }
    return out


def _against(own: dict, twins: list[dict]) -> dict:
    """`own`'s median over the twins' middle, by wall and by CPU time; the same ratio within each
    repetition (its run over the median of the twins' runs there), lowest and highest."""
    middle = statistics.median(r["median_s"] for r in twins)
    cpu_middle = statistics.median(r["cpu_median_s"] for r in twins)
    per_repetition = [run / statistics.median(r["runs_s"][i] for r in twins) for i, run in enumerate(own["runs_s"])]
    return {
        "trees": len(twins),
        "middle": own["median_s"] / middle,
        "middle_range": [min(per_repetition), max(per_repetition)],
        "cpu_middle": own["cpu_median_s"] / cpu_middle,
        "slower_trees": sum(r["median_s"] > own["median_s"] for r in twins),
    }


def _load() -> str:
    import os

    one_min, five_min, _ = os.getloadavg()
    return f"{one_min:.1f} / {five_min:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--name", default="kinds-speed", help="results file name (bench/results/NAME.json)")
    args = parser.parse_args()
    names = [n for example in TWINS for n in (example, *twin_names(example))]
    clock = time.perf_counter()
    one(names[0])  # warm-up, untimed: the lazy imports
    warmup = time.perf_counter() - clock
    load_before = _load()
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for rep in range(args.repeats):
        order = list(names)
        random.Random(rep).shuffle(order)
        for name in order:
            row = one(name)
            runs[name].append(row)
            print(f"{rep} {name}: {row['wall_s']:.1f} s (CPU {row['cpu_s']:.1f} s) {row['phases_s']}", flush=True)
    rows = [summarise(n, runs[n]) for n in names]
    data = {
        "rows": rows,
        "comparisons": {e: compare(e, {r["spec"]: r for r in rows}) for e in TWINS},
        "warmup_s": warmup,
        "repeats": args.repeats,
        "time_limit": TIME_LIMIT,
        "samples": SAMPLES,
        "load_before": load_before,
        "load_after": _load(),
    }
    path = write_results(args.name, data, modules=MODULES)
    print(render_markdown(data))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
