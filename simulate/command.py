"""The command oracle: the user's real program, run pinned on this host, one run per plan and repeat.

Spec (``oracle:``)::

    kind: command
    command: [./fwd, --lcores, "{lcores}", --plan, "{plan_file}"]   # argv, never a shell
    metric: {regex: 'rate=([-+0-9.eE]+)'}   # or {json: rate} (dotted for nested keys)
    timeout: 30s                             # per run, the program's own wall time
    repeats: 3                               # runs per plan at least (after the warm-up)
    warmup: 1                                # runs per plan made and discarded first (default 0)
    precision: 0.02                          # more runs until the 95% half-width is 2% of the mean...
    budget: 20                               # ...or the plan has had 20 runs (default: repeats)
    range: [1e3, 1e9]                        # optional: the figures the metric may take
    max_output: 4MiB                         # the last bytes of stdout (and stderr) kept

Each run gets the placement in every form `simulate.pinning` offers (argv placeholders,
``TASKSOLVE_CPUS`` / ``TASKSOLVE_PLAN`` / ``TASKSOLVE_SEED``, a JSON plan file in a fresh
temporary directory).  The program is started with ``subprocess.Popen(argv, shell=False)`` in its
own session: ``;``, ``$()``, backticks and spaces inside an element reach it as literal argv text.
Pinning is the program's job (``sched_setaffinity``, ``taskset``-like runtimes, DPDK's
``--lcores``, ``OMP_PLACES``); this oracle only says where.

The figure is read on standard output: with ``regex``, the first group (else the whole match) of
the *last* match, refused when the pattern takes only part of a number or letters are glued to it
(``rate=12.5M``); with ``json``, the key (dotted for nested objects) of the *last* line that is a
JSON object; with ``instances`` too (a key of the same line), an object giving every instance's
own figure (``{"app#0": ..., "app#1": ...}``), which TSBSched's and BlackBox's profiling need.  It is the objective's figure: packets (or work items) per second for the
throughput objectives, seconds per packet for ``latency``.  The measurement is the *mean* of the
kept runs with its Student-t 95% half-width (``inf`` from one run: its spread is unknown); plans
measured together (`evaluate_many`, `measure`) have their runs interleaved in rounds, never one
plan back to back, and `noise_floor` is the host's noise, the pooled CV of the repeated runs
(`simulate.noise`).  `unpinned` is the OS scheduler's baseline: the program told
``TASKSOLVE_PINNING=none`` (`simulate.pinning`).  A run that cannot start or exits
non-zero raises `CommandFailed`, one without the figure `MetricNotFound`, one past ``timeout``
`CommandTimeout` (a `SimulationTimeout`, so the sampling service records it as a timed-out plan);
each message names the command and the plan.  Measurements of one host must not overlap, so the
registry marks this oracle *exclusive* and the sampling service runs it with one worker.

Hostile or broken programs (`simulate.process`, `simulate.reaper`, `simulate.screening`): every
run goes through a watchdog that kills the program *and everything it started* (a child left
behind, a ``setsid`` grandchild) when it exits, times out, or tasksolve dies; the timeout is the
program's own wall time, reading stops once the program has exited, and only the last
``max_output`` bytes of each stream are kept (a note says how much was discarded).  A figure must
be in the metric's domain -- positive and finite, within ``oracle.range`` if given -- else
`MetricOutOfRange`; a figure three orders of magnitude away from the run's earlier ones is
flagged and the run measured again: kept (with a note) if the new figure is in line, refused if
not.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tasksolve.simulate.errors import (
    CommandFailed,
    CommandTimeout,
    MetricNotFound,
    MetricOutOfRange,
    NonFiniteResultError,
    OracleError,
)
from tasksolve.simulate.measurement import Measurement
from tasksolve.simulate.pinning import PlaceholderError, Placement
from tasksolve.simulate.screening import Screen, domain_problem
from tasksolve.specs.objective import Objective
from tasksolve.specs.placeholders import thread_placeholders

SETTINGS = ("command", "metric", "timeout", "repeats", "range", "max_output", "warmup", "precision", "budget")
SHOWN = 400  # characters of a program's output quoted in an error message


def resolve_program(spec, program: str) -> str:
    """argv[0] as run: a relative path with a folder part (``./fwd``, ``bin/fwd``) is taken from the
    spec's folder, as every other file a spec names, never from wherever tasksolve was started; a
    bare name (``python3``) is looked up on ``PATH`` when run; an absolute path stays."""
    source = getattr(spec, "source", None)
    if "/" in program and not os.path.isabs(program) and source and Path(source).is_file():
        return str(Path(source).resolve().parent / program)
    return program


def program_identity(spec) -> dict[str, Any]:
    """The program a spec's command runs, for a samples file's header: its resolved path and the
    SHA-256 of its content (None where no such file is found yet), so that ``--resume`` refuses
    measurements of another program (`solver.certify.samples_file`)."""
    import hashlib
    import shutil

    argv = spec.oracle.command
    if not argv:
        return {}
    program = resolve_program(spec, str(argv[0]))
    found = program if "/" in program else shutil.which(program)
    digest = None
    if found and os.path.isfile(found):
        sha = hashlib.sha256()
        with open(found, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                sha.update(block)
        digest = sha.hexdigest()
    return {"program": {"path": str(Path(found).resolve()) if found else program, "sha256": digest}}


class CommandOracle:
    """The program of ``spec.oracle`` run once per plan and repeat (see the module docstring);
    `overrides` may replace any of `SETTINGS`."""

    name = "command"

    def __init__(self, spec, **overrides) -> None:
        from tasksolve.simulate.registry import OracleUnavailableError

        unknown = set(overrides) - set(SETTINGS)
        if unknown:
            raise OracleError(f"the command oracle takes only {', '.join(SETTINGS)} (got {', '.join(sorted(unknown))})")
        settings = {name: overrides.get(name, getattr(spec.oracle, name)) for name in SETTINGS}
        if not settings["command"] or settings["metric"] is None:
            raise OracleUnavailableError(
                "the command oracle needs `oracle.command` (the program's argv) and "
                "`oracle.metric` in the spec, e.g. command: [./bench, --cpus, '{cpus}'], "
                "metric: {json: rate}"
            )
        self.spec = spec
        self.argv = [str(a) for a in settings["command"]]
        self.argv[0] = resolve_program(spec, self.argv[0])
        self.metric = settings["metric"]
        self.timeout = float(settings["timeout"])
        self.repeats = int(settings["repeats"])
        from tasksolve.simulate.noise import RepeatPolicy

        self.policy = RepeatPolicy(
            repeats=self.repeats,
            warmup=int(settings["warmup"] or 0),
            precision=float(settings["precision"]),
            budget=None if settings["budget"] is None else int(settings["budget"]),
        )
        self.runs: dict[str, list[float]] = {}  # every plan's kept runs, by label: the noise floor
        self.range = None if settings["range"] is None else tuple(float(x) for x in settings["range"])
        self.max_output = int(settings["max_output"])
        self.screen = Screen()  # the figures of this run, to flag one orders of magnitude away
        self._notes: list[str] = []
        self.overrides = dict(overrides)
        self.latency = Objective.of(spec.objective).minimize  # the program reports a latency
        if spec.problem == "binding":
            names = set(spec.thread_names)
            for name in thread_placeholders(self.argv):
                if name not in names:
                    from tasksolve.specs.errors import did_you_mean

                    raise PlaceholderError(
                        f"placeholder {{cpu:{name}}} in oracle.command names no thread of "
                        f"{spec.name}{did_you_mean(name, spec.thread_names)}"
                    )

    @staticmethod
    def identity(spec) -> dict[str, Any]:
        """What a samples file's header records: the program, what is read from it and how many
        runs make a figure (not the wall-clock timeout)."""
        settings = spec.oracle.model_dump(
            mode="json", by_alias=True, include={"command", "metric", "repeats", "warmup", "precision", "budget"}
        )
        return settings | program_identity(spec)

    # -- the protocol
    def evaluate(self, plan: Any, seed: int | None = None) -> Measurement:
        """Measure `plan` (a `specs.Plan` or context indices): warm-up, then `repeats` runs and
        more up to `budget` until `precision` (`simulate.noise`), back to back."""
        return self.measure([self.placement(plan)], [seed])[0]

    def evaluate_many(
        self, plans: Sequence[Any], seed: int | None = None, workers: int | None = None
    ) -> list[Measurement]:
        """Every plan (plan ``i`` with ``plan_seed(seed, i)``), their runs interleaved in rounds
        (`simulate.noise`); `workers` is accepted for the protocol but runs never overlap: they
        would share the host they measure."""
        from tasksolve.simulate.oracle import plan_seed

        base = int(seed or 0)
        return self.measure([self.placement(p) for p in plans], [plan_seed(base, i) for i in range(len(plans))])

    def placement(self, plan: Any) -> Placement:
        """The placement of a `specs.Plan` or of context indices."""
        from tasksolve.specs import Plan

        if not hasattr(plan, "bindings"):
            plan = Plan.from_contexts(self.spec, [int(c) for c in plan])
        return Placement.of(self.spec, plan)

    def unpinned(self) -> Placement:
        """The OS scheduler's baseline: the program told not to pin (`simulate.pinning`)."""
        return Placement.unpinned(self.spec)

    def measure(self, placements: Sequence[Placement], seeds: Sequence[int | None]) -> list[Measurement]:
        """The placements measured together, interleaved (`simulate.noise.interleaved`)."""
        from tasksolve.simulate.noise import interleaved

        notes: list[list[str]] = [[] for _ in placements]
        instances: list[list[dict[str, float] | None]] = [[] for _ in placements]

        def run(i: int) -> float:
            self._notes = []
            figure, each = self._screened_run(placements[i], seeds[i], len(instances[i]))
            notes[i] += self._notes
            instances[i].append(each)
            return figure

        kept = interleaved(len(placements), run, self.policy)
        out = []
        for i, placement in enumerate(placements):
            each = instances[i][len(instances[i]) - len(kept[i]) :]  # the kept runs' (warm-up first)
            self.runs[placement.label] = self.runs.get(placement.label, []) + kept[i]
            out.append(self._measurement(placement, kept[i], each, seeds[i], notes[i], len(placements) - 1))
        return out

    def run_once(self, placement: Placement, seed: int | None = None) -> tuple[float, dict[str, float] | None]:
        """One screened run: the figure and, with ``metric.instances``, every instance's (for
        `solver.selection.racing`, which makes its own repeats and interleaving)."""
        self._notes = []
        figure, instances = self._screened_run(placement, seed, 0)
        self.runs.setdefault(placement.label, []).append(figure)
        return figure, instances

    def noise_floor(self) -> float | None:
        """The host's noise: the pooled CV of every pinned plan's repeated runs so far
        (`simulate.noise`); the unpinned runs vary with where the OS puts the threads too."""
        from tasksolve.simulate.noise import noise_floor

        unpinned = Placement.unpinned(self.spec).label
        return noise_floor([runs for label, runs in self.runs.items() if label != unpinned])

    # -- one run
    def _screened_run(self, placement: Placement, seed: int | None, repeat: int):
        """One run whose figure is in line with the run's others; a flagged figure is measured
        once more, and refused if it is flagged again (`simulate.screening`)."""
        run = self._run_once(placement, seed, repeat)
        why = self.screen.away(run[0])
        if why is not None:
            again = self._run_once(placement, seed, repeat)
            if self.screen.away(again[0]) is not None:
                raise MetricOutOfRange(
                    f"`{_shown_argv(self.argv)}` on plan {_shown_plan(placement)}: run {repeat + 1}: {why}, and "
                    f"{again[0]:g} when measured again: refused as orders of magnitude away from the other runs"
                )
            self._notes.append(f"run {repeat + 1} was flagged ({why}) and measured again: {again[0]:g}")
            run = again
        self.screen.keep(run[0])
        return run

    def _run_once(self, placement: Placement, seed: int | None, repeat: int) -> tuple[float, dict[str, float] | None]:
        """One run: the figure and, with ``metric.instances``, every instance's own figure."""
        with tempfile.TemporaryDirectory(prefix="tasksolve-run-") as folder:
            plan_file = str(Path(folder) / "plan.json")
            Path(plan_file).write_text(json.dumps(placement.document(self.spec.name, seed), indent=2))
            argv = placement.argv(self.argv, plan_file)
            env = {**os.environ, **placement.environment(plan_file, seed)}
            where = f"`{_shown_argv(self.argv)}` on plan {_shown_plan(placement)}"
            stdout, notes = _run(argv, env, self.timeout, where, repeat, self.max_output)
            self._notes += notes
        figure = self._figure(stdout, where)
        if self.metric.instances is None:
            return figure, None
        return figure, self._instance_figures(stdout, where)

    def _instance_figures(self, stdout: str, where: str) -> dict[str, float]:
        """``metric.instances``: every instance's own figure, from the last JSON object line."""
        key = self.metric.instances
        found = _json_object(stdout, key, where)
        names = [f"{app}#{i}" for app, i in self.spec.instances]
        missing = [name for name in names if name not in found]
        if missing:
            raise MetricNotFound(f"{where}: {key!r} has no figure for instance(s) {', '.join(missing[:5])}")
        values = {}
        for name in names:
            value = found[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise MetricNotFound(f"{where}: {key}.{name} is {str(value)[:80]!r}, not a finite number")
            values[name] = float(value)
        return values

    def _figure(self, stdout: str, where: str) -> float:
        metric = self.metric
        if metric.regex is not None:
            matches = list(re.finditer(metric.regex, stdout, flags=re.MULTILINE))
            if not matches:
                raise MetricNotFound(
                    f"{where}: no match of metric.regex {metric.regex!r} in its output ({_tail(stdout)})"
                )
            last = matches[-1]
            group = 1 if last.re.groups else 0
            text = last.group(group)
            try:
                value = float(text)
            except (TypeError, ValueError):
                raise MetricNotFound(f"{where}: metric.regex matched {str(text)[:80]!r}, not a number") from None
            _whole_number(stdout, *last.span(group), metric.regex, where, last.end())
        else:
            value = _json_value(stdout, metric.json_key, where)
        if not math.isfinite(value):
            raise NonFiniteResultError(f"{where}: the metric is {value}, not a finite number")
        why = domain_problem(value, self.latency, self.range)
        if why is not None:
            raise MetricOutOfRange(f"{where}: the metric gives {why}")
        return value

    def _measurement(
        self,
        placement: Placement,
        figures: list[float],
        instances: list[dict[str, float] | None],
        seed: int | None,
        notes: list[str],
        others: int,
    ) -> Measurement:
        from tasksolve.simulate.noise import describe, t_interval

        figure, spread = t_interval(figures)
        per_instance, per_instance_half = {}, {}
        if instances and instances[0] is not None and not self.latency:
            for name in instances[0]:
                per_instance[name], per_instance_half[name] = t_interval([run[name] for run in instances])
        threads = [
            {"thread": t, "context": c, "cpu": cpu}
            for t, c, cpu in zip(placement.threads, placement.contexts, placement.cpus)
        ]
        throughput, latency = (0.0, figure) if self.latency else (figure, 0.0)
        return Measurement(
            throughput=throughput,
            per_instance=per_instance,
            per_instance_half_width=per_instance_half,
            half_width=0.0 if self.latency else spread,
            min_throughput=min(per_instance.values()) if per_instance else throughput,
            latency_mean=latency,
            latency_p50=latency,
            latency_p99=latency,
            threads=threads,
            bottleneck="",
            oracle=self.name,
            latency_half_width=spread if self.latency else 0.0,
            packets=len(figures),
            seed=seed,
            converged=self.policy.precision >= (spread / abs(figure) if figure else math.inf),
            notes=[describe(figures, self.policy, others), *notes],
        )


def _run(
    argv: list[str], env: dict[str, str], timeout: float, where: str, repeat: int, max_output: int
) -> tuple[str, list[str]]:
    """The program's standard output and notes (output discarded); raises the errors of the module
    docstring.  The program and all it started are killed by the watchdog (`simulate.process`)."""
    from tasksolve.simulate.process import run_program

    done = run_program(argv, env, timeout, max_output)
    if done.error is not None:
        raise CommandFailed(f"{where}: cannot start the program: {done.error}")
    if done.timed_out:
        raise CommandTimeout(f"{where}: run {repeat + 1} ran past oracle.timeout ({timeout:g} s) and was killed")
    if done.returncode != 0:
        raise CommandFailed(f"{where}: run {repeat + 1} exited with status {done.returncode} ({_tail(done.stderr)})")
    notes = [
        f"run {repeat + 1}: {count} bytes of {name} beyond oracle.max_output ({max_output} bytes) were discarded; "
        "the figure was read from the last ones"
        for name, count in done.discarded.items()
    ]
    return done.stdout, notes


def _json_at(stdout: str, key: str, where: str) -> Any:
    """The value at `key` (dotted for nested objects) of the last JSON object line of `stdout`."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value: Any = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(value, dict):
            continue
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                raise MetricNotFound(f"{where}: the last JSON line of its output has no key {key!r} ({line[:SHOWN]})")
            value = value[part]
        return value
    raise MetricNotFound(f"{where}: no JSON object line in its output ({_tail(stdout)})")


def _json_object(stdout: str, key: str, where: str) -> dict[str, Any]:
    """The object at `key`: each instance's own figure (``metric.instances``)."""
    value = _json_at(stdout, key, where)
    if not isinstance(value, dict):
        raise MetricNotFound(f"{where}: {key!r} is {str(value)[:80]!r}, not an object of instance figures")
    return value


def _json_value(stdout: str, key: str, where: str) -> float:
    """The number at `key` (``metric.json``)."""
    value = _json_at(stdout, key, where)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MetricNotFound(f"{where}: {key!r} is {str(value)[:80]!r}, not a number")
    return float(value)


_GOES_ON = re.compile(r"[0-9.]|[eE][-+]?[0-9]")
_NUMBER = "0123456789.-+"


def _whole_number(stdout: str, start: int, end: int, pattern: str, where: str, match_end: int) -> None:
    """Refuse a figure the regex took only part of: ``rate=([0-9.]+)`` on ``rate=1.25e6`` reads
    1.25, and on ``rate=-5`` reads 5 (the digits go on after it, or a sign or digit stands before it);
    and a figure with letters glued to it that the pattern does not take (``rate=12.5abc``,
    ``rate=12.5M``: 12.5 of what?)."""
    before = stdout[start - 1] if start > 0 else ""
    if _GOES_ON.match(stdout, end) or (before and before in _NUMBER):
        left, right = start, end
        while left > max(0, start - 40) and stdout[left - 1] in _NUMBER:
            left -= 1
        while right < min(len(stdout), end + 40) and stdout[right] in _NUMBER + "eE":
            right += 1
        token = stdout[left:right]
        raise MetricNotFound(
            f"{where}: metric.regex {pattern!r} matched {stdout[start:end][:40]!r}, part of the number "
            f"{token[:40]!r} in its output; widen the pattern to the whole figure, e.g. "
            "'rate=([-+0-9.eE]+)'"
        )
    after = stdout[end] if end < len(stdout) else ""
    if match_end == end and (after.isalpha() or after == "_"):
        glued = re.match(r"\w{1,40}", stdout[end:]).group()
        raise MetricNotFound(
            f"{where}: metric.regex {pattern!r} matched {stdout[start:end][:40]!r}, followed by {glued!r} in its "
            f"output: a figure with letters glued to it is not read as a number; print the figure alone, in "
            "the objective's unit (packets per second, not Mpps)"
        )


def _tail(text: str) -> str:
    text = (text or "").strip()
    if not text:
        return "no output"
    return "output ends: " + (text if len(text) <= SHOWN else "..." + text[-SHOWN:]).replace("\n", " | ")


def _shown_argv(argv: list[str]) -> str:
    text = " ".join(argv)
    return text if len(text) <= 200 else text[:197] + "..."


def _shown_plan(placement: Placement) -> str:
    text = placement.label
    return text if len(text) <= 300 else text[:297] + "..."
