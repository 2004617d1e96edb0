"""``tasksolve simulate``: measure one plan with a cost oracle."""

from __future__ import annotations

from enum import Enum
from typing import Any

import typer

from tasksolve.solver.cli import options
from tasksolve.solver.cli.common import (
    EXIT_BAD_INPUT,
    chosen_oracle,
    console,
    emit_json,
    fail,
    load_spec_or_fail,
)


class Ideal(str, Enum):
    contention = "contention"
    communication = "communication"
    queues = "queues"
    locks = "locks"
    all = "all"


class Arrival(str, Enum):
    saturated = "saturated"
    deterministic = "deterministic"
    poisson = "poisson"


def simulate(
    spec_path: str = options.spec_argument(),
    plan_path: str | None = typer.Option(
        None,
        "--plan",
        "-p",
        metavar="PLAN.yaml",
        help="The plan to measure (YAML or JSON). Without it, a balanced placement is drawn (seeded).",
    ),
    oracle: str | None = options.oracle_option(),
    allow_commands: bool = options.allow_commands_option(),
    max_rate: bool = typer.Option(
        False,
        "--max-rate",
        help="Also find the highest arrival rate per instance the plan sustains (bisection, des only).",
    ),
    ideal: list[Ideal] = typer.Option(
        [],
        "--ideal",
        help="Also simulate with a limit switched off: contention, communication, queues, locks or all "
        "(repeatable; des only). Shows which limit binds.",
    ),
    seed: int | None = typer.Option(
        None, "--seed", min=0, help="Seed of the simulation and of the balanced draw. Default: oracle.seed."
    ),
    precision: float | None = typer.Option(
        None,
        "--precision",
        help="Target relative half-width of the throughput's 95% interval (default: oracle.precision).",
    ),
    packets: int | None = typer.Option(
        None, "--packets", help="Stop after this many packets (default: oracle.packets)."
    ),
    queue_capacity: int | None = typer.Option(
        None, "--queue-capacity", help="Messages per queue (default: oracle.queue_capacity)."
    ),
    arrival: Arrival | None = typer.Option(
        None, "--arrival", help="Packet sources: saturated, deterministic or poisson."
    ),
    rate: str | None = typer.Option(
        None, "--rate", help="Arrival rate per instance, e.g. 2Mpps (with --arrival deterministic|poisson)."
    ),
    shared_queue: bool = typer.Option(
        False,
        "--shared-queue",
        help="Replicas of a stage take packets from one shared queue (NPIRE) instead of in turn.",
    ),
    as_json: bool = options.json_option(),
) -> None:
    """Measure a plan: throughput (total and per instance), latency, per-thread utilisation.

    The des oracle simulates until the 95% confidence half-width of the total throughput is
    below the precision (or the packet cap); analytic evaluates the closed form, which assumes
    every co-located thread always loads its resources; command runs the spec's program pinned
    to the plan's CPUs and reads its figure.  Exit code 0 with the measurement, 2 for a bad spec
    or plan, 3 when the oracle fails, 130 when interrupted.
    """
    spec = load_spec_or_fail(spec_path)
    kind = chosen_oracle(oracle, spec, allow_commands)
    if kind != "des" and (max_rate or ideal):
        fail("--max-rate and --ideal need the des oracle", EXIT_BAD_INPUT)
    overrides = _overrides(
        kind,
        seed=seed,
        precision=precision,
        packets=packets,
        queue_capacity=queue_capacity,
        arrival=arrival,
        rate=rate,
        shared_queue=shared_queue,
    )
    plan, source = _plan(spec, plan_path, seed)
    measurement, extra = _measure(spec, plan, kind, overrides, ideal, max_rate)

    if as_json:
        out = measurement.to_dict()
        out["spec"] = spec.name
        out["plan_source"] = source if source is not None else "balanced placement (no --plan)"
        out["plan"] = plan.to_dict()
        out.update(extra)
        emit_json(out)
        return
    _print_text(spec, plan, measurement, source, extra, _latency_meaning(spec, measurement.oracle, overrides))


def _overrides(kind: str, *, seed, precision, packets, queue_capacity, arrival, rate, shared_queue) -> dict[str, Any]:
    """The simulation settings given on the command line, checked."""
    overrides: dict[str, Any] = {}
    for key, value in (
        ("seed", seed),
        ("precision", precision),
        ("packets", packets),
        ("queue_capacity", queue_capacity),
    ):
        if value is not None:
            overrides[key] = value
    if precision is not None and not 0 < precision < 1:
        fail(f"--precision must be a fraction between 0 and 1 (e.g. 0.01), got {precision}")
    if packets is not None and packets < 1:
        fail("--packets must be positive")
    if queue_capacity is not None and queue_capacity < 1:
        fail("--queue-capacity must be at least 1")
    if arrival is not None:
        overrides["arrival"] = arrival.value
    if rate is not None:
        from tasksolve.specs.units import UnitError, parse_rate

        try:
            overrides["rate"] = parse_rate(rate)
        except UnitError as exc:
            fail(f"--rate: {exc}")
        if overrides["rate"] <= 0:
            fail("--rate must be positive")
    if shared_queue:
        overrides["shared_queue"] = True
    if kind != "des" and overrides:
        fail(
            "simulation settings (--seed, --precision, --packets, --queue-capacity, --arrival, --rate, "
            "--shared-queue) apply to the des oracle only"
        )
    return overrides


def _plan(spec, plan_path: str | None, seed: int | None):
    """The plan to measure and where it came from (None: a seeded balanced placement)."""
    import numpy as np

    from tasksolve.specs import Plan, load_plan

    if plan_path is not None:
        return load_plan(plan_path, spec), plan_path
    from tasksolve.solver.binding.samplers import balanced_plans

    if len(spec.threads) > len(spec.usable_contexts):
        fail(
            f"{spec.name}: {len(spec.threads)} tasks do not fit one per context on "
            f"{len(spec.usable_contexts)} contexts; give a pipeline plan with --plan"
        )
    draw_seed = seed if seed is not None else spec.oracle.seed
    row = balanced_plans(spec, 1, np.random.default_rng(draw_seed))[0]
    return Plan.from_contexts(spec, row, method="balanced"), None


def _measure(spec, plan, kind: str, overrides: dict[str, Any], ideal: list[Ideal], max_rate: bool):
    """The measurement, plus the idealised runs and the maximum rate when asked for."""
    from tasksolve.simulate import IDEALS, compile_plan, ideal_runs, make_oracle
    from tasksolve.simulate import max_rate as find_max_rate
    from tasksolve.simulate.experiments import bounding_limit

    graph = compile_plan(spec, plan)
    measurement = make_oracle(spec, kind, **overrides).evaluate(plan)
    extra: dict[str, Any] = {}
    if ideal:
        what = IDEALS if Ideal.all in ideal else tuple(dict.fromkeys(i.value for i in ideal))
        runs = ideal_runs(spec, plan, what, graph=graph, **overrides)
        base = measurement.throughput
        extra["ideal"] = {
            name: {
                "throughput": m.throughput,
                "half_width": m.half_width,
                "gain": m.throughput / base - 1.0 if base > 0 else None,
            }
            for name, m in runs.items()
            if name != "actual"
        }
        limit, ratio = bounding_limit(runs)
        extra["bounded_by"] = {"limit": limit, "ratio": ratio}
    if max_rate:
        found = find_max_rate(
            spec, plan, graph=graph, **{k: v for k, v in overrides.items() if k not in ("arrival", "rate")}
        )
        extra["max_rate"] = {
            "per_instance": found.rate,
            "total": found.total,
            "tolerance": found.tolerance,
            "arrival": found.arrival,
            "simulations": len(found.runs),
        }
    return measurement, extra


def _latency_meaning(spec, oracle: str, overrides: dict[str, Any]) -> str:
    """Which latency the figures are (docs/design.md, "The latency a verdict covers")."""
    from tasksolve.specs import display

    if oracle == "analytic":
        return "unloaded critical path with the plan's sharing"
    process = overrides.get("arrival") or spec.oracle.arrival.process
    if process == "saturated":
        return "saturated sources: every queue full, so it grows with oracle.queue_capacity; latency_max is checked at oracle.load"
    offered = overrides.get("rate") or spec.oracle.arrival.rate
    return f"{process} arrivals at {display.rate(offered)} per instance"


def _print_text(spec, plan, m, source, extra, latency_meaning: str = "") -> None:
    from rich.table import Table

    from tasksolve.specs import display

    what = f"plan {source}" if source else "a balanced placement (no --plan given; drawn with the seed)"
    console.print(f"{spec.name}: {what}, oracle {m.oracle}", markup=False, soft_wrap=True)
    if m.oracle == "des":
        rel = f" (+-{100 * m.relative_half_width:.2f}%, 95%)" if m.throughput > 0 else ""
        console.print(f"throughput  {display.rate(m.throughput)} +- {display.rate(m.half_width)}{rel}", markup=False)
    elif m.oracle == "analytic":
        console.print(f"throughput  {display.rate(m.throughput)} (closed form)", markup=False)
    else:
        console.print(f"throughput  {display.rate(m.throughput)} ({m.oracle} oracle)", markup=False)
    if len(m.per_instance) > 1:
        parts = ", ".join(f"{name} {display.rate(x)}" for name, x in m.per_instance.items())
        console.print(f"per instance  {parts}", markup=False, soft_wrap=True)
    if m.oracle not in ("des", "analytic"):  # a program's one figure: where each thread ran
        if m.latency_mean:
            console.print(f"latency     {display.seconds(m.latency_mean)}", markup=False)
        for t in m.threads:
            console.print(f"  {t['thread']}  {t['context']}  cpu {t.get('cpu', '-')}", markup=False)
        for note in m.notes:
            console.print(f"note: {note}", markup=False, soft_wrap=True)
        return
    console.print(
        f"latency     mean {display.seconds(m.latency_mean)}, p50 {display.seconds(m.latency_p50)}, p99 {display.seconds(m.latency_p99)}"
        + (f"  ({latency_meaning})" if latency_meaning else ""),
        markup=False,
    )
    table = Table(title_justify="left")
    for column in ("thread", "context", "utilization", "rate", "queue wait", "blocked"):
        table.add_column(column, justify="left" if column in ("thread", "context") else "right")
    for t in m.threads:
        blocked = "-" if t["blocked"] is None else f"{100 * t['blocked']:.1f}%"
        table.add_row(
            t["thread"],
            t["context"],
            f"{100 * t['utilization']:.1f}%",
            f"{t['rate']:.3f}" if not 0 < t["rate"] < 5e-4 else f"{t['rate']:.2e}",  # 1e-300, not 0.000
            display.seconds(t["queue_wait"]) if t["queue_wait"] else "0",
            blocked,
        )
    console.print(table)
    console.print(f"bottleneck  {m.bottleneck}", markup=False)
    if "ideal" in extra:
        base = m.throughput
        console.print("idealised runs (one limit off at a time):", markup=False)
        for name, row in extra["ideal"].items():
            gain = row["throughput"] / base - 1.0 if base > 0 else float("nan")
            console.print(f"  no {name:<14s} {display.rate(row['throughput'])}  ({100 * gain:+.1f}%)", markup=False)
        bound = extra["bounded_by"]
        if bound["limit"] is None:
            console.print("bounded by  the threads' own work (no limit's removal helps)", markup=False)
        else:
            console.print(f"bounded by  {bound['limit']} (x{bound['ratio']:.3g} without it)", markup=False)
    if "max_rate" in extra:
        r = extra["max_rate"]
        console.print(
            f"max sustainable rate  {display.rate(r['per_instance'])} per instance "
            f"({display.rate(r['total'])} in all; {r['arrival']} arrivals, "
            f"{r['simulations']} simulations, tolerance {100 * r['tolerance']:g}%)",
            markup=False,
        )
    for note in m.notes:
        console.print(f"note: {note}", markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Attach ``simulate`` to the `tasksolve` application."""
    app.command(name="simulate")(simulate)
