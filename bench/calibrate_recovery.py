"""Does `tasksolve calibrate` recover known demands from a simulated machine?

The "machine" is the SimPy simulation of a spec with known cycles and demands (IPFwd-intadd x2 on
the T2, idle demands set equal to the busy ones so that the closed form the fit uses is the
simulation's exact model).  Calibration starts from a wrong spec (cycles x1.3, demands x0.6),
measures the experiment plans on the machine, fits, and the table gives each parameter's relative
error against the truth, and whether the experiments identify it.

    python bench/calibrate_recovery.py --plans 100 --seed 0 --workers 2
    python bench/calibrate_recovery.py --plans 100 --seed 0 --machine command

With ``--machine command`` the machine is a program (`bench/simulated_machine.py`, the same
simulation) run by the command oracle: one total throughput per plan, as a user's program gives.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from results import markdown_table, write_results

from tasksolve.solver.calibration.experiments import calibration_plans, measure
from tasksolve.solver.calibration.fitting import fit
from tasksolve.specs import Spec, load_spec
from tasksolve.specs.loader import dump_spec

MACHINE = Path(__file__).with_name("simulated_machine.py")


def machine_spec(name: str) -> Spec:
    data = load_spec(name).model_dump(by_alias=True, exclude_none=True)
    for app in data["applications"].values():
        for task in app["tasks"].values():
            task["idle_demand"] = dict(task["demand"])
    return Spec.model_validate(data)


def wrong_spec(truth: Spec, cycles: float, demand: float) -> Spec:
    data = truth.model_dump(by_alias=True, exclude_none=True)
    for app in data["applications"].values():
        for task in app["tasks"].values():
            task["cycles"] *= cycles
            task["demand"] = {r: v * demand for r, v in task["demand"].items()}
            task["idle_demand"] = {r: v * demand for r, v in task["idle_demand"].items()}
    return Spec.model_validate(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", default="t2-ipfwd-intadd-x2")
    parser.add_argument("--plans", type=int, default=40)
    parser.add_argument("--starts", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--machine", choices=["des", "analytic", "command"], default="des")
    args = parser.parse_args()

    truth = machine_spec(args.spec)
    prior = wrong_spec(truth, 1.3, 0.6)
    plans = calibration_plans(prior, args.plans, args.seed)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        measured_spec, kind = truth, args.machine
        if args.machine == "command":
            truth_file = Path(folder) / "truth.yaml"
            truth_file.write_text(dump_spec(truth))
            data = truth.model_dump(by_alias=True, exclude_none=True)
            data["oracle"] = {
                "kind": "command",
                "metric": {"json": "rate"},
                "timeout": "300s",
                "repeats": 1,
                "command": [sys.executable, str(MACHINE), str(truth_file), "{plan_file}"],
            }
            measured_spec = Spec.model_validate(data)
        throughput, times = measure(measured_spec, plans, kind, seed=args.seed, workers=args.workers)
    measured_at = time.perf_counter()
    result = fit(prior, plans, throughput, times, starts=args.starts, seed=args.seed)
    fitted_at = time.perf_counter()

    params = []
    for p in result.parameters:
        task = truth.applications[p.parameter.app].tasks[p.parameter.task]
        true = task.cycles if p.parameter.resource is None else task.demand.get(p.parameter.resource, 0.0)
        error = abs(p.value - true) / true if true else None
        params.append(
            {"name": p.parameter.name, "truth": true, "start": p.prior, "fitted": p.value, "error": error}
            | {"identified": bool(p.identified)}
        )
    data = {
        "spec": args.spec,
        "machine": args.machine,
        "plans": len(plans),
        "per_instance": bool(throughput.shape[1] > 1),
        "measuring_s": measured_at - start,
        "fitting_s": fitted_at - measured_at,
        "starts": result.starts,
        "rms": float(result.rms),
        "worst": float(result.worst),
        "prior_rms": float(np.sqrt(np.mean(result.prior_residuals**2))),
        "parameters": params,
    }
    suffix = "" if (args.machine, args.plans) == ("des", 100) else f"-{args.machine}-{args.plans}"
    write_results("calibration-recovery" + suffix, data, modules=MODULES)
    print(render_markdown(data))


MODULES = [
    "solver/calibration/fitting.py",
    "solver/calibration/experiments.py",
    "solver/calibration/job.py",
    "simulate/oracle.py",
    "simulate/command.py",
]
NOISY = ["measuring_s", "fitting_s"]


def render_markdown(data: dict) -> str:
    rows = [
        [
            p["name"],
            f"{p['truth']:.4g}",
            f"{p['start']:.4g}",
            f"{p['fitted']:.4g}",
            "-" if p["error"] is None else f"{p['error']:.2%}",
            "yes" if p["identified"] else "no",
        ]
        for p in data["parameters"]
    ]
    identified = [p["error"] for p in data["parameters"] if p["identified"] and p["error"] is not None]
    worst = f"{max(identified):.2%}" if identified else "-"
    return (
        f"{data['spec']} measured by the `{data['machine']}` oracle "
        f"({'per instance' if data['per_instance'] else 'totals'}): {data['plans']} plans measured in "
        f"{data['measuring_s']:.1f} s, fitted in {data['fitting_s']:.1f} s ({data['starts']} starts); relative error "
        f"of instance throughputs after the fit: rms {data['rms']:.3%}, worst {data['worst']:.3%} (starting spec: rms "
        f"{data['prior_rms']:.3%}); {len(identified)} of {len(rows)} parameters identified, worst error of an "
        f"identified one {worst}:\n\n"
        + markdown_table(["parameter", "truth", "start", "fitted", "error", "identified"], rows)
    )


if __name__ == "__main__":
    main()
