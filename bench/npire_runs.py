"""NPIRE's idealised runs (§4, Figure 8) and early signalling (§2.3, §5) on `t2-npire-locks`, the
NPIRE-like router with critical sections (520 of 3060 cycles synchronised) and an early signal
(classify signals its successors at 60% of its cycles).

* ``npire-ideal``: LATA's plan on 32 and 64 contexts (``tasksolve pipeline --method lata
  --latency-max none --seed 1``), simulated as is and with each limit switched off (``tasksolve
  simulate --ideal all``); the pipeline closed form's throughput for the same plan beside it.
* ``npire-signal``: LATA's 16-context plan simulated with one packet every microsecond
  (``--arrival deterministic --rate 1Mpps``), with the early signal and with the same spec
  without it; mean latency with its 95% half-width.

Both go through the command line, as a user runs them.

    python bench/npire_runs.py
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from results import markdown_table, write_results

from tasksolve.specs import dump_spec, load_spec

SPEC = "t2-npire-locks"
METHODS_SIGNAL = ("lata", "greedy")
MODULES = [
    "simulate/experiments.py",
    "simulate/locks.py",
    "simulate/des/phases.py",
    "solver/pipeline/lata.py",
    "solver/pipeline/sync.py",
    "solver/pipeline/evaluation.py",
    "specs/examples/t2-npire-locks.yaml",
    "specs/examples/apps/npire-router-locks.yaml",
]


def tasksolve(*args: str) -> dict:
    """One ``tasksolve ... --json`` run, its JSON output."""
    exe = str(Path(sys.executable).parent / "tasksolve")
    done = subprocess.run([exe, *args, "--json"], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"tasksolve {' '.join(args)}: exit {done.returncode}: {done.stderr[-400:]}")
    return json.loads(done.stdout)


def pipeline_plan(spec: str, cores: int, out: Path, method: str = "lata") -> dict:
    return tasksolve(
        "pipeline",
        spec,
        "--method",
        method,
        "--cores",
        str(cores),
        "--latency-max",
        "none",
        "--seed",
        "1",
        "--out",
        str(out),
    )


def ideal(tmp: Path, cores: int) -> dict:
    model = pipeline_plan(SPEC, cores, tmp / f"out{cores}")
    sim = tasksolve("simulate", SPEC, "--plan", str(tmp / f"out{cores}" / "plan.yaml"), "--ideal", "all")
    return {
        "cores": cores,
        "model_mpps": model["throughput"] / 1e6,
        "actual_mpps": sim["throughput"]["total"] / 1e6,
        "actual_half_width": sim["throughput"]["half_width"] / 1e6,
        "ideal": {
            k: {"mpps": v["throughput"] / 1e6, "half_width": v["half_width"] / 1e6, "gain": v["gain"]}
            for k, v in sim["ideal"].items()
        },
        "bounded_by": sim["bounded_by"],
    }


def signal(tmp: Path) -> list[dict]:
    data = yaml.safe_load(dump_spec(load_spec(SPEC)))
    for task in data["applications"]["router"]["tasks"].values():
        task.pop("signal", None)
    nosignal = tmp / "t2-npire-locks-nosignal.yaml"
    nosignal.write_text(yaml.safe_dump(data, sort_keys=False))
    rows = []
    for method in METHODS_SIGNAL:
        out = tmp / f"signal-{method}"
        plan = pipeline_plan(SPEC, 16, out, method)
        for label, spec in (("with the signal", SPEC), ("without it", str(nosignal))):
            sim = tasksolve(
                "simulate", spec, "--plan", str(out / "plan.yaml"), "--arrival", "deterministic", "--rate", "1Mpps"
            )
            rows.append(
                {
                    "method": method,
                    "stages": len({re.match(r"s(\d+)", b.split(".", 1)[1]).group(1) for b in plan["plan"]["bindings"]}),
                    "run": label,
                    "latency_us": sim["latency"]["mean"] * 1e6,
                    "latency_half_width_us": sim["latency"]["half_width"] * 1e6,
                    "mpps": sim["throughput"]["total"] / 1e6,
                    "mpps_half_width": sim["throughput"]["half_width"] / 1e6,
                }
            )
    return rows


def render_ideal(data: dict) -> str:
    lines = [
        "`python bench/npire_runs.py` (section `npire-ideal`): LATA's plan on C contexts "
        f"(`tasksolve pipeline {SPEC} --method lata --cores C --latency-max none --seed 1 --out outC`), then "
        f"`tasksolve simulate {SPEC} --plan outC/plan.yaml --ideal all`. Mpps with the 95% half-width.",
        "",
    ]
    for run in data["runs"]:
        rows = [["actual", f"{run['actual_mpps']:.3f} +- {run['actual_half_width']:.3f}", ""]]
        for name, r in run["ideal"].items():
            rows.append([f"no {name}", f"{r['mpps']:.3f} +- {r['half_width']:.3f}", f"{100 * r['gain']:+.1f}%"])
        b = run["bounded_by"]
        lines += [
            f"**{run['cores']} contexts**: the pipeline closed form (locks, retries and signals charged) gives "
            f"{run['model_mpps']:.3f} Mpps for this plan; bounded by {b['limit']} (x{b['ratio']:.2f} without it).",
            "",
            markdown_table(["run", "Mpps", "vs actual"], rows),
            "",
        ]
    return "\n".join(lines)


def render_signal(data: dict) -> str:
    rows, changes = [], []
    for r in data["rows"]:
        rows.append(
            [
                r["method"],
                r["stages"],
                r["run"],
                f"{r['latency_us']:.4f} +- {r['latency_half_width_us']:.4f}",
                f"{r['mpps']:.4f} +- {r['mpps_half_width']:.4f}",
            ]
        )
    for method in dict.fromkeys(r["method"] for r in data["rows"]):
        w, wo = (r["latency_us"] for r in data["rows"] if r["method"] == method)
        changes.append(f"{method} {100 * (w / wo - 1):+.1f}%")
    return (
        "`python bench/npire_runs.py` (section `npire-signal`): 16-context plans (`tasksolve pipeline "
        f"{SPEC} --method M --cores 16 --latency-max none --seed 1`), one packet every microsecond "
        "(`--arrival deterministic --rate 1Mpps`), the spec as is (classify signals at 60%) and without the "
        "signal; stages: the plan's pipeline stages:\n\n"
        + markdown_table(["method", "stages", "run", "mean latency us (95% half-width)", "Mpps"], rows)
        + "\n\nLatency change with the signal: "
        + ", ".join(changes)
        + "."
    )


def render_markdown(data: dict) -> str:
    return render_ideal(data) if data["section"] == "npire-ideal" else render_signal(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [ideal(Path(tmp), cores) for cores in (32, 64)]
        write_results("npire-ideal", {"section": "npire-ideal", "runs": runs}, modules=MODULES)
        print(render_ideal({"runs": runs}))
        rows = signal(Path(tmp))
        write_results("npire-signal", {"section": "npire-signal", "rows": rows}, modules=MODULES)
        print(render_signal({"rows": rows}))


if __name__ == "__main__":
    main()
