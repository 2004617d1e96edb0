"""Sweeps: the throughput-latency trade-off over the latency bound (LATA, DAC'10, Figure 14) and
throughput scaling with the number of cores (Figure 15), with their plots; `sweep_pipeline` is the
`tasksolve pipeline --sweep-latency` / `--cores A:B` job as a library call (progress and errors
as `solver.pipeline.job.solve_pipeline`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tasksolve.solver.pipeline.compare import Progress, Steps, compare
from tasksolve.solver.pipeline.problem import PipelineError, PipelineProblem


@dataclass
class SweepPoint:
    x: float  # latency bound (fraction of sequential) or cores
    method: str
    status: str
    throughput: float | None  # packets/s (closed form); None: the method found no plan
    latency: float | None  # seconds (closed form)
    feasible: bool
    bound: float | None  # latency bound, seconds
    threads: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def parse_range(text: str, *, percent: bool) -> list[float]:
    """``60%:100%:5%`` -> [0.60, 0.65, ..., 1.00] (percent) or ``2:8:2`` -> [2, 4, 6, 8].
    A single value is a one-point range.  Raises `PipelineError` with the accepted form."""
    form = "START:STOP[:STEP] such as 60%:100%:5%" if percent else "START:STOP[:STEP] such as 2:8 or 1:64:4"
    parts = [p.strip() for p in str(text).split(":")]
    if not 1 <= len(parts) <= 3 or any(not p for p in parts):
        raise PipelineError(f"expected {form} (got {text!r})")

    def number(p: str) -> float:
        try:
            if percent:
                return float(p[:-1]) / 100.0 if p.endswith("%") else float(p)
            value = float(p)
            if value != int(value):
                raise ValueError
            return value
        except ValueError:
            raise PipelineError(f"expected {form} (got {text!r})") from None

    start = number(parts[0])
    stop = number(parts[1]) if len(parts) > 1 else start
    step = number(parts[2]) if len(parts) > 2 else (0.05 if percent else 1.0)
    if step <= 0 or stop < start or start <= 0:
        raise PipelineError(f"expected {form} with 0 < START <= STOP and STEP > 0 (got {text!r})")
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > 200:
        raise PipelineError(f"{text!r} has {count} points; at most 200")
    return [round(start + i * step, 10) for i in range(count)]


def _compared(x: float, problem: PipelineProblem, methods: list[str], label: str, **options) -> list[SweepPoint]:
    """The methods compared at one point `x` of a sweep (`solver.pipeline.compare.compare` with
    `options`), one `SweepPoint` each."""
    no_plan: dict[str, str] = {}
    results = compare(problem, methods, label=label, no_plan=no_plan, **options)
    return _points(x, problem, results, no_plan)


def _points(x: float, problem: PipelineProblem, results, no_plan: dict[str, str]) -> list[SweepPoint]:
    """One point per method: its plan's figures, or none (status ``NO_PLAN`` when it has no plan that
    keeps the fixed replica counts, `solver.pipeline.compare.compare`)."""
    out = []
    bound = None if problem.latency_max is None else problem.seconds(problem.latency_max)
    for name, r in results.items():
        ev = None if r.status in ("INFEASIBLE", "UNKNOWN") else r.evaluation  # None: no plan, nothing to plot
        out.append(
            SweepPoint(
                x=x,
                method=name,
                status=r.status,
                throughput=None if ev is None else ev.throughput,
                latency=None if ev is None else ev.latency_seconds,
                feasible=ev is not None and ev.feasible,
                bound=bound,
                threads=0 if ev is None else ev.threads,
            )
        )
    out += [SweepPoint(x, name, "NO_PLAN", None, None, False, bound, 0) for name in no_plan]
    return out


def latency_sweep(
    problem: PipelineProblem,
    fractions: list[float],
    methods: list[str],
    *,
    time_limit: float = 10.0,
    workers: int = 2,
    seed: int = 0,
    steps: Steps | None = None,
) -> list[SweepPoint]:
    """Every method at ``L0 = fraction x sequential`` for each fraction (Figure 14); a bound below
    the critical path is skipped (no plan can meet it)."""
    points = []
    for f in fractions:
        p = problem.with_bound(int(math.floor(problem.sequential * f + 1e-9)))
        if p.latency_max < p.critical_path:
            if steps is not None:
                steps.skip(len(methods))
            continue
        points += _compared(
            f, p, methods, f"L0 = {f:.0%}: ", time_limit=time_limit, workers=workers, seed=seed, steps=steps
        )
    return points


def cores_sweep(
    problem: PipelineProblem,
    cores: list[float],
    methods: list[str],
    *,
    time_limit: float = 10.0,
    workers: int = 2,
    seed: int = 0,
    steps: Steps | None = None,
) -> list[SweepPoint]:
    """Every method with the first ``k`` usable contexts for each ``k`` (Figure 15)."""
    if cores and max(cores) > problem.n_contexts:
        raise PipelineError(
            f"--cores {int(min(cores))}:{int(max(cores))}: the spec has only {problem.n_contexts} usable contexts"
        )
    points = []
    for k in cores:
        p = problem.with_cores(int(k))
        points += _compared(
            k, p, methods, f"{int(k)} cores: ", time_limit=time_limit, workers=workers, seed=seed, steps=steps
        )
    return points


def plot_targets(kinds: list[str], *, out_dir: Path | None = None, plot_file: Path | None = None) -> dict[str, Path]:
    """Where each sweep's plot goes: ``plot_file`` (``stem-<kind>.suffix`` when there are several
    sweeps), else ``out_dir/sweep-<kind>.png``, else nowhere."""
    if plot_file is not None:
        plot_file = Path(plot_file)
        if len(kinds) == 1:
            return {kinds[0]: plot_file}
        return {k: plot_file.with_name(f"{plot_file.stem}-{k}{plot_file.suffix}") for k in kinds}
    if out_dir is not None:
        return {k: Path(out_dir) / f"sweep-{k}.png" for k in kinds}
    return {}


def plot(points: list[SweepPoint], path: str, *, kind: str, title: str) -> None:
    """Throughput against the latency bound (`kind` ``latency``) or the cores (``cores``); filled
    markers meet the bound, hollow ones do not.  PNG, SVG or PDF by the file's suffix."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tasksolve.solver.pipeline.compare import METHOD_NAMES

    fig, ax = plt.subplots(figsize=(7, 4.5))
    methods = list(dict.fromkeys(p.method for p in points))
    markers = "osD^v<>ph*"
    palette = plt.get_cmap("tab10").colors
    for m in methods:
        i = METHOD_NAMES.index(m) if m in METHOD_NAMES else len(METHOD_NAMES)
        mine = [p for p in points if p.method == m and p.throughput is not None]
        xs = [p.x * 100 if kind == "latency" else p.x for p in mine]
        ys = [p.throughput / 1e6 for p in mine]
        colour = palette[i % len(palette)]
        ax.plot(xs, ys, "-", marker=markers[i % len(markers)], label=m, alpha=0.85, color=colour)
        for x, y, p in zip(xs, ys, mine, strict=True):
            if not p.feasible:
                ax.plot(
                    [x],
                    [y],
                    marker=markers[i % len(markers)],
                    markerfacecolor="white",
                    markeredgecolor=colour,
                    linestyle="none",
                )
    ax.set_xlabel("latency bound L0 (% of sequential time)" if kind == "latency" else "cores (usable contexts)")
    ax.set_ylabel("throughput (Mpackets/s, closed form)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        fig.savefig(path)
    except ValueError as exc:  # an unknown format: bad input, not a bug
        raise PipelineError(f"cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)


# ------------------------------------------------------------------------------ the sweep job
@dataclass
class SweepResult:
    """The answer of `sweep_pipeline`: ``(kind, point)`` pairs, kind ``latency`` or ``cores``."""

    spec_name: str
    problem: PipelineProblem
    points: list[tuple[str, Any]]  # (kind, solver.pipeline.sweep.SweepPoint)
    plots: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        return sorted({k for k, _ in self.points})

    def of(self, kind: str) -> list:
        return [p for k, p in self.points if k == kind]

    def to_dict(self) -> dict:
        p = self.problem
        return {
            "spec": self.spec_name,
            "app": p.app,
            "sequential_cycles": p.cycles(p.sequential),
            "critical_path_cycles": p.cycles(p.critical_path),
            "sweep": [dict(kind=k, **point.to_dict()) for k, point in self.points],
            "plots": list(self.plots),
        }


def sweep_pipeline(
    spec,
    *,
    app: str | None = None,
    methods: list[str] | str = "all",
    latency_max: str | None = None,
    fractions: list[float] | None = None,
    cores: list[int] | None = None,
    time_limit: float | None = None,
    workers: int = 1,
    seed: int = 0,
    out_dir: Path | str | None = None,
    plot_file: Path | str | None = None,
    progress: Progress | None = None,
) -> SweepResult:
    """Every method over latency bounds ``fractions x sequential`` (Figure 14) and/or the first
    ``k`` contexts for each k in `cores` (Figure 15).  Plots go to `plot_file` (one per sweep,
    ``stem-<kind>``, when both run), else to ``out_dir/sweep-<kind>.png``, else nowhere."""
    from tasksolve.solver.pipeline.job import build_problem, instance_note, parse_methods, prepare_out_dir

    if not fractions and not cores:
        raise PipelineError("a sweep needs latency bounds (--sweep-latency) or a range of cores (--cores A:B)")
    methods = parse_methods(methods) if isinstance(methods, str) else list(methods)
    limit = float(time_limit if time_limit is not None else spec.search.time_limit)
    problem = build_problem(spec, app, latency_max=latency_max)
    if cores and max(cores) > problem.n_contexts:
        raise PipelineError(
            f"--cores {min(cores)}:{max(cores)}: the spec has only {problem.n_contexts} usable contexts"
            + (" in each instance's block" if problem.instances > 1 else "")
        )
    steps = Steps(progress, (len(fractions or ()) + len(cores or ())) * len(methods))
    options = dict(time_limit=limit, workers=workers, seed=seed, steps=steps)
    points = [("latency", q) for q in latency_sweep(problem, list(fractions or ()), methods, **options)]
    points += [("cores", q) for q in cores_sweep(problem, list(cores or ()), methods, **options)]
    result = SweepResult(
        spec_name=spec.name, problem=problem, points=points, notes=[n for n in [instance_note(spec, problem)] if n]
    )
    if out_dir is not None:
        out_dir = prepare_out_dir(out_dir)
    for kind, target in plot_targets(result.kinds, out_dir=out_dir, plot_file=plot_file).items():
        what = "throughput vs latency bound" if kind == "latency" else "throughput vs cores"
        plot(result.of(kind), str(target), kind=kind, title=f"{spec.name}: {problem.app}, {what}")
        result.plots.append(str(target))
    return result
