"""The sampling service: random plans measured on the oracle, in parallel, kept on disk.

* The plans form one stream per (spec, seed): plan ``i`` is row ``i % B`` of
  ``uniform_plans(spec, B, default_rng([seed, i // B]))`` with ``B = PLAN_BLOCK``, so the first n
  plans do not depend on how many are wanted in the end (``--resume --samples 600`` after 300
  extends the same sample), and plan ``i`` is measured with the seed ``plan_seed(seed, i)``: the
  sample depends on the seed only, never on the executor (`simulate.executor`: inline, local
  processes, Dask) nor on interruptions.
* The samples file (JSON lines) starts with a header naming what produced it -- the hash of the
  spec's problem (`spec_hash`), the oracle's kind and settings, the design and plan stream, the
  seed -- then one line per finished measurement, appended as each chunk of `CHUNK` plans
  finishes (one write: in the file for every reader at once; fsync'ed at most every
  `SYNC_SECONDS` and when sampling stops), so Ctrl-C or kill -9 loses at most the running chunks
  (a power failure the last `SYNC_SECONDS` too); Ctrl-C raises `SamplingInterrupted`, saying how
  many measurements the file holds.  `open` refuses to resume a file whose header differs
  (naming what changed), refuses to overwrite finished samples without ``force``, repairs a last
  line cut by a crash before appending, and holds an exclusive lock on the output directory
  (``.tasksolve.lock``, naming the holder's PID).
* A pipeline problem (``pipeline=``) samples pipeline plans instead of bindings
  (`solver.certify.pipeline_samples`): each record then also holds its plan as JSON under
  ``pipeline`` (a binding record has no such key, so binding files read as before).
* One measurement per placement class (`solver.certify.measure.ClassOracle`): each worker measures
  a class once, seeded by the class and the run's seed, and reuses it for every later visit, so a
  value never depends on which sample reached the class first.  Pipeline plans are measured as drawn.
* A measurement that fails (the oracle raises) or runs past `timeout` seconds is retried once;
  if it fails again it is recorded with ``"status": "failed"`` and the error, and the run goes on.
  Running past a time limit is one exception, `simulate.errors.SimulationTimeout`, whether the
  service's alarm fires (`timeout`) or the oracle stops itself (the simulation's
  ``oracle.time_cap``, the command oracle's ``oracle.timeout``).
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tasksolve.simulate.errors import SimulationTimeout
from tasksolve.simulate.executor import Executor
from tasksolve.simulate.measurement import known_half_width
from tasksolve.simulate.oracle import make_oracle, plan_seed
from tasksolve.solver.binding.samplers import uniform_plans
from tasksolve.solver.certify.budget import BudgetCut
from tasksolve.solver.certify.records import RecordError, check_spread, checked_record
from tasksolve.solver.certify.samples_file import (  # noqa: F401  (re-exported: the service's vocabulary)
    LOCK_NAME,
    SamplingError,
    SamplingInterrupted,
    acquire_lock,
    check_start,
    header_changes,
    oracle_identity,
    package_version,
    release_lock,
    spec_hash,
)
from tasksolve.specs import Plan, Spec
from tasksolve.specs.files import append_text, read_cut_to_last_line, write_text_atomic

if TYPE_CHECKING:
    from tasksolve.solver.certify.designs import Climber, PlanOracle
    from tasksolve.solver.certify.pipeline_samples import PipelineSampler, PlanJSON
    from tasksolve.solver.pipeline.problem import PipelineProblem

FORMAT = 1
#: how plans are measured (the samples header records it: a change refuses --resume)
MEASURE = "once per placement class, seeded by the class"
PLAN_BLOCK = 1024
#: plans per chunk: a finished measurement waits at most for its chunk's other plans before it
#: reaches the file, and a deadline is overrun by at most one chunk
CHUNK = 2
#: the longest a finished measurement stays in the file unsynced (fsync once per this, not per chunk:
#: a fast oracle finishes hundreds of chunks a second)
SYNC_SECONDS = 1.0
#: the sampling designs (`solver.certify.designs`): what one sample is
DESIGNS = ("random", "local-optima")


@dataclass
class Record:
    """One line of the samples file."""

    index: int
    contexts: list[int]
    status: str  # "ok" or "failed"
    value: float | None = None  # the objective's value (packets/s, or seconds for latency)
    throughput: float | None = None
    half_width: float | None = None
    latency: float | None = None
    attempts: int = 1
    error: str | None = None
    seed: int | None = None  # the measurement's (and the local search's) seed
    start: list[int] | None = None  # local-optima design: the random start (plan i of the stream)
    steps: int | None = None  # local-optima design: improving moves to the local optimum
    pipeline: dict | None = None  # pipeline problems: the plan (`solver.pipeline.sampling.encode`)

    def to_json(self) -> str:
        """One strict JSON line: a non-finite figure (e.g. an unbounded half-width) is null."""
        data = {
            k: (None if isinstance(v, float) and not np.isfinite(v) else v)
            for k, v in self.__dict__.items()
            if not (k == "pipeline" and v is None)
        }
        return json.dumps(data, separators=(",", ":"), allow_nan=False)


# ------------------------------------------------------------------ worker side
@dataclass
class _Worker:
    spec: Spec
    oracle: PlanOracle
    objective: str
    timeout: float | None
    design: str = "random"
    oracle_kind: str = "des"
    climber: Climber | None = None
    pipeline: PipelineSampler | None = None  # pipeline problems


@dataclass(frozen=True)
class _Draws:
    """How a worker draws its plans: the design, the pipeline problem (None: bindings), the
    run's seed and the time after which a climb is cut (None: never)."""

    design: str = "random"
    pipeline: PipelineProblem | None = None
    seed_of_run: int = 0
    cut: float | None = None


def _make_worker(
    spec: Spec,
    oracle_kind: str,
    objective: str,
    timeout: float | None,
    oracle_factory: Callable[[Spec], PlanOracle] | None,
    draws: _Draws = _Draws(),
) -> _Worker:
    design, pipeline, seed_of_run, cut = draws.design, draws.pipeline, draws.seed_of_run, draws.cut
    oracle = oracle_factory(spec) if oracle_factory else make_oracle(spec, oracle_kind)
    climber = None
    if pipeline is None:
        from tasksolve.solver.certify.measure import ClassOracle

        oracle = ClassOracle(spec, oracle, seed_of_run)
    if pipeline is not None:
        from tasksolve.solver.certify.pipeline_samples import PipelineSampler

        return _Worker(spec, oracle, objective, timeout, design, oracle_kind, None, PipelineSampler(pipeline, design))
    if design == "local-optima":
        from tasksolve.solver.certify.designs import Climber

        climber = Climber(spec, objective, screen=oracle_kind != "analytic" or oracle_factory is not None, cut=cut)
    return _Worker(spec, oracle, objective, timeout, design, oracle_kind, climber)


def _alarm(signum, frame):  # pragma: no cover - runs in the worker
    raise SimulationTimeout("alarm")


def _measure_one(worker: _Worker, index: int, drawn: list[int] | PlanJSON | None, seed: int) -> Record:
    """Measure sample `index` drawn as `drawn` (a binding's contexts, a pipeline plan's JSON, or None:
    a pipeline plan drawn here): as drawn (random design) or after its climb (local-optima design)."""
    sample_seed = plan_seed(seed, index)
    climbs = worker.design == "local-optima"
    if worker.pipeline is not None:
        from tasksolve.solver.certify.pipeline_samples import flat_contexts

        if drawn is None:  # drawn here, when it is measured (`SamplingService.ensure`)
            drawn = worker.pipeline.draw(seed, index)

        def take():
            plan, steps, m = worker.pipeline.sample(worker.oracle, drawn, sample_seed)
            return flat_contexts(plan), steps, m, plan

        return _attempts(worker, index, sample_seed, take, flat_contexts(drawn), drawn if climbs else None, drawn)

    def take():
        if worker.climber is None:
            return (
                list(drawn),
                None,
                worker.oracle.evaluate(Plan.from_contexts(worker.spec, drawn), seed=sample_seed),
                None,
            )
        plan, steps, m = worker.climber.sample(worker.oracle, drawn, sample_seed)
        return list(plan), steps, m, None

    return _attempts(worker, index, sample_seed, take, drawn, None if worker.climber is None else drawn, None)


def _attempts(worker: _Worker, index: int, sample_seed: int, take, contexts, start, pipeline) -> Record:
    """`take()` -> (contexts, improving moves, measurement, pipeline plan or None), run at most
    twice under the service's alarm (`_Worker.timeout`, main thread only); a failure of the
    oracle is recorded with the drawn `contexts` / `pipeline`, not raised."""
    timeout = worker.timeout if threading.current_thread() is threading.main_thread() else None
    error = None
    for attempt in (1, 2):
        try:
            if timeout:
                signal.signal(signal.SIGALRM, _alarm)
                signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                plan, steps, m, measured = take()
            finally:
                if timeout:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            return Record(
                index,
                plan,
                "ok",
                float(m.natural(worker.objective)),
                float(m.throughput),
                known_half_width(float(m.half_width)),  # None: one run of a noisy program (spread unknown)
                float(m.latency_mean),
                attempt,
                seed=sample_seed,
                start=start,
                steps=steps,
                pipeline=measured,
            )
        except BudgetCut:  # not a failure: the restart is dropped (`_measure_chunk`)
            raise
        except SimulationTimeout as exc:  # the service's alarm, or the oracle's own cap (oracle.time_cap)
            error = f"timed out after {timeout:g}s" if str(exc) == "alarm" else f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # an oracle failure is data, not a crash
            error = f"{type(exc).__name__}: {exc}"
    return Record(index, contexts, "failed", attempts=2, error=error, seed=sample_seed, start=start, pipeline=pipeline)


def _measure_chunk(worker: _Worker, jobs: list[tuple[int, list[int] | PlanJSON | None, int]]) -> list[Record | None]:
    """The chunk's records in order; None from the first restart cut by the budget (`BudgetCut`)
    on: `SamplingService.ensure` leaves those out, so the samples file keeps a prefix of the stream."""
    records: list[Record | None] = []
    for job in jobs:
        try:
            records.append(None if records and records[-1] is None else _measure_one(worker, *job))
        except BudgetCut:
            records.append(None)
    return records


# ------------------------------------------------------------------ the service
@dataclass
class SamplingService:
    """Measure random plans of `spec` into `path` (JSON lines), resumably.

    Life cycle: ``service.open(resume=..., force=...)`` (or its halves `start_fresh` / `load`),
    then ``service.ensure(n)`` as often as needed."""

    spec: Spec
    path: Path
    seed: int = 0
    oracle_kind: str = "des"
    workers: int = 1
    max_samples: int = 5000
    timeout: float | None = None
    objective: str | None = None
    oracle_factory: Callable[[Spec], PlanOracle] | None = None  # tests: an oracle that fails on purpose
    scheduler: object = None  # a Dask scheduler: address, distributed.Client or cluster (simulate.executor)
    design: str = "random"  # see DESIGNS
    pipeline: PipelineProblem | None = None  # sample pipeline plans (`solver.certify.pipeline_samples`)
    deadline: float | None = None  # `ensure`'s deadline when it is given none (`time.monotonic()` seconds)
    cut: float | None = None  # local-optima design: a climb still running past it is dropped (`BudgetCut`)
    records: dict[int, Record] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        if self.design not in DESIGNS:
            raise SamplingError(f"unknown sampling design {self.design!r}; choose one of {', '.join(DESIGNS)}")
        self.objective = self.objective or self.spec.objective
        self._blocks: dict[int, np.ndarray] = {}
        self._drawn: dict[int, PlanJSON] = {}
        self._synced, self._unsynced = time.monotonic(), False  # the last fsync; records written since
        if self.timeout and self.scheduler is not None:
            raise SamplingError("a measurement timeout needs local worker processes, not a Dask scheduler")

    # -- the plan stream
    def contexts(self, index: int) -> list[int] | PlanJSON:
        """Plan `index` of the stream (see the module docstring); a pipeline plan's JSON for a
        pipeline problem."""
        if self.pipeline is not None:
            if index not in self._drawn:
                from tasksolve.solver.certify.pipeline_samples import PipelineSampler

                self._drawn[index] = PipelineSampler(self.pipeline, self.design).draw(self.seed, index)
            return self._drawn[index]
        block = index // PLAN_BLOCK
        if block not in self._blocks:
            self._blocks[block] = uniform_plans(self.spec, PLAN_BLOCK, np.random.default_rng([self.seed, block]))
        return [int(c) for c in self._blocks[block][index % PLAN_BLOCK]]

    def header(self) -> dict[str, object]:
        """The first line of the samples file: what the sample depends on."""
        return {
            "tasksolve_samples": FORMAT,
            "spec_name": self.spec.name,
            "spec_hash": spec_hash(self.spec),
            "objective": self.objective,
            "oracle": oracle_identity(self.spec, self.oracle_kind, self.oracle_factory),
            "design": self.design,
            "plans": self._plans_identity(),
            "seed": self.seed,
            "version": package_version(),
        }

    def _plans_identity(self) -> dict[str, object]:
        if self.pipeline is not None:
            from tasksolve.solver.certify.pipeline_samples import identity as pipeline_identity

            return pipeline_identity(self.design)
        plans: dict[str, object] = {"sampler": "uniform", "block": PLAN_BLOCK, "measure": MEASURE}
        if self.design == "local-optima":
            from tasksolve.solver.certify.designs import identity

            plans["local_search"] = identity(screen=self.oracle_kind != "analytic" or self.oracle_factory is not None)
        return plans

    # -- the file's life cycle
    def open(self, resume: bool = False, force: bool = False) -> None:
        """Resume the file (`resume`), or start it afresh -- refusing to discard finished samples
        unless `force`.  (`solver.certify.run.certify` holds the directory's lock around it.)"""
        check_start(self.path, resume, force)
        if resume:
            self.load()
        else:
            self.start_fresh()

    def start_fresh(self) -> None:
        """Start the file afresh: the header, no record."""
        self.records = {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.path, json.dumps(self.header(), separators=(",", ":")) + "\n")

    def load(self) -> int:
        """Read what an earlier run of the same sample finished (resume), after cutting a last line
        left unfinished by a crash; returns how many records were read.  A missing or empty file
        starts afresh.  Raises `SamplingError` for another sample's file or a damaged line."""
        self.records = {}
        text = self._repaired_text()
        lines = text.splitlines()
        if not lines:
            self.start_fresh()
            return 0
        expected = self.header()
        try:
            found = json.loads(lines[0])
        except json.JSONDecodeError:
            found = None
        if not isinstance(found, dict) or "tasksolve_samples" not in found:
            raise SamplingError.worded(
                "{path}:1: no samples header (written by an older tasksolve or another "
                "program); start afresh with {force}",
                path=self.path,
            )
        changes = header_changes(found, expected)
        if changes:
            raise SamplingError.worded(
                "{path}: cannot resume: {changes}; start afresh with {force} or choose another {out}",
                path=self.path,
                changes="; ".join(changes),
            )
        for lineno, line in enumerate(lines[1:], start=2):
            if line.strip():
                self._read_record(line, lineno)
        check_spread(self.path, lines[1:], first=2)
        return len(self.records)

    def _repaired_text(self) -> str:
        return read_cut_to_last_line(self.path).decode("utf-8", errors="replace")  # a line cut by a crash

    def _read_record(self, line: str, lineno: int) -> None:
        try:
            record = Record(**checked_record(line, self.path, lineno, self.objective, self.spec.oracle.range))
            index = int(record.index)
        except RecordError as exc:  # checked like spec input (`solver.certify.records`)
            raise SamplingError(str(exc), command_line=exc.command_line) from None
        except (json.JSONDecodeError, TypeError, ValueError) as exc:
            raise SamplingError.worded(
                "{path}:{lineno}: not a sample record ({exc}); the file is damaged: start afresh with {force}",
                path=self.path,
                lineno=lineno,
                exc=exc,
            ) from None
        drawn = record.contexts if self.design == "random" or record.status == "failed" else record.start
        if self.pipeline is not None:
            drawn = record.pipeline if self.design == "random" or record.status == "failed" else record.start
        if index < 0 or drawn != self.contexts(index):
            raise SamplingError.worded(
                "{path}:{lineno}: plan {index} is not the plan the header's stream "
                "draws; the file is damaged: start afresh with {force}",
                path=self.path,
                lineno=lineno,
                index=index,
            )
        self.records.setdefault(index, record)

    def _append(self, records: list[Record]) -> None:
        """`records` into the file at once, fsync'ed when `SYNC_SECONDS` have passed since the
        last fsync (`_sync` does the rest when sampling stops)."""
        now = time.monotonic()
        sync = now - self._synced >= SYNC_SECONDS
        append_text(self.path, "".join(record.to_json() + "\n" for record in records), sync=sync)
        self._synced, self._unsynced = (now, False) if sync else (self._synced, True)
        for record in records:
            self.records[record.index] = record

    def _sync(self) -> None:
        """fsync the file if records were written since the last fsync."""
        if self._unsynced:
            append_text(self.path, "")  # nothing written, the file fsync'ed
            self._synced, self._unsynced = time.monotonic(), False

    # -- measuring
    def ensure(self, n: int, on_progress: Callable[[int], None] | None = None, deadline: float | None = None) -> int:
        """Make sure plans 0..n-1 are measured (with `workers` processes or on `scheduler`);
        returns how many of the first plans are measured without a gap (`measured_prefix`).
        With a `deadline` (`time.monotonic()` seconds) no chunk starts after it: the chunks are
        small (`CHUNK` plans), the running ones finish, and the rest is cancelled, so the prefix
        may end before `n` (a sample is always a prefix of the stream: plans that finished early
        never stand in for the ones before them).  Ctrl-C raises `SamplingInterrupted`: every
        chunk that came back is in the file."""
        n = min(n, self.max_samples)
        deadline = self.deadline if deadline is None else deadline
        lazy = self.pipeline is not None  # drawn where measured: 100 up front took 39 s on xeon-lata-dag
        jobs = [(i, None if lazy else self.contexts(i), self.seed) for i in range(n) if i not in self.records]
        if not jobs or (deadline is not None and time.monotonic() >= deadline):
            return self.measured_prefix(n)
        init_args = (
            self.spec,
            self.oracle_kind,
            self.objective,
            self.timeout,
            self.oracle_factory,
            _Draws(self.design, self.pipeline, self.seed, self.cut),
        )
        from tasksolve.simulate.registry import exclusive

        alone = self.oracle_factory is None and exclusive(self.oracle_kind)  # e.g. a real program on this host
        executor = Executor(
            workers=1 if alone else self.workers,
            scheduler=None if alone else self.scheduler,
            chunk_size=CHUNK,
            stall_seconds=self.stall_seconds(),
        )
        try:
            with executor.map(_measure_chunk, jobs, init=_make_worker, init_args=init_args) as stream:
                for _, chunk in stream:
                    records = [r for r in chunk if r is not None]  # None: a restart the budget cut
                    self._append(records)
                    if on_progress:
                        on_progress(len(records))
                    if deadline is not None and time.monotonic() >= deadline:
                        break
        except KeyboardInterrupt as exc:
            raise SamplingInterrupted(len(self.records), self.path) from exc
        finally:
            self._sync()
        return self.measured_prefix(n)

    def stall_seconds(self) -> float:
        """The longest a Dask map waits for its next chunk (`simulate.executor.WorkerStalled`): a
        chunk's plans each within the oracle's own cap (the simulation's `time_cap`, the command's
        `timeout` per repeat), twice over."""
        oracle = self.spec.oracle
        per_plan = max(float(oracle.time_cap), float(oracle.timeout) * oracle.repeats)
        return max(2.0 * CHUNK * per_plan, 10.0)

    def measured_prefix(self, n: int) -> int:
        """How many of plans 0..n-1 are measured (ok or failed) before the first gap."""
        for i in range(min(n, self.max_samples)):
            if i not in self.records:
                return i
        return min(n, self.max_samples)

    # -- reading
    def ok_records(self, n: int | None = None) -> list[Record]:
        limit = self.max_samples if n is None else n
        return [self.records[i] for i in sorted(self.records) if i < limit and self.records[i].status == "ok"]

    def failures(self, n: int | None = None) -> list[Record]:
        limit = self.max_samples if n is None else n
        return [self.records[i] for i in sorted(self.records) if i < limit and self.records[i].status == "failed"]

    def values(self, n: int | None = None) -> np.ndarray:
        return np.array([r.value for r in self.ok_records(n)], dtype=float)

    def best(self, n: int | None = None, minimize: bool = False) -> Record | None:
        records = self.ok_records(n)
        if not records:
            return None
        key = (lambda r: r.value) if not minimize else (lambda r: -r.value)
        return max(records, key=key)
