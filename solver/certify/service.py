"""The sampling service: random plans measured on the oracle, in parallel, kept on disk.

* Plan ``i`` comes from a stream that depends on the seed only: block ``b`` of `BLOCK` plans is
  ``uniform_plans(spec, BLOCK, SeedSequence([seed, b]))``, so the first n plans are the same
  whatever the sample size, the number of workers or the interruptions; plan ``i`` is measured
  with the seed ``plan_seed(seed, i)``.
* Measurements run through `simulate.executor` (inline, local processes or a Dask cluster) and
  every finished one is appended to a JSON-lines file (flushed and fsync'ed per chunk), so
  nothing finished is lost. The file's first line is a header that identifies the run (the
  spec's canonical hash, the oracle, the sampling design, the seed, the version): `--resume`
  refuses a file written for another run and names what changed; a run without `--resume`
  refuses to overwrite finished samples unless forced; a cut last line (a crash, a full disk) is
  dropped before appending, so records never glue together.
* One run at a time writes into a directory: an exclusive lock (``.tasksolve.lock``, with the
  holder's PID) is taken for the service's lifetime.
* A measurement that fails (the oracle raises, or the simulation passes its time cap) is retried
  once; if it fails again it is recorded with ``"status": "failed"`` and the error, and the run
  goes on.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from simulate.executor import run_chunks
from simulate.oracle import make_oracle, plan_seed
from solver.binding.samplers import uniform_plans
from solver.errors import BadProblemError
from specs import Plan, Spec

FORMAT = 1
BLOCK = 1024          # plans per block of the plan stream
DESIGN = "random"     # ASPLOS'12: iid uniform plans


class SamplingError(BadProblemError):
    """The samples file cannot be used as asked (another run's file, a lock held, finished work
    that would be overwritten); the message says what to do."""


@dataclass
class Record:
    """One line of the samples file."""

    index: int
    contexts: list[int]
    status: str                  # "ok" or "failed"
    value: float | None = None   # the objective's value (packets/s, or seconds for latency)
    throughput: float | None = None
    half_width: float | None = None
    latency: float | None = None
    attempts: int = 1
    error: str | None = None

    def to_json(self) -> str:
        return json.dumps(self.__dict__, separators=(",", ":"))


class MeasurementTimeout(Exception):
    pass


def objective_value(measurement: Any, objective: str) -> float:
    """The figure a sample records: throughput (packets/s) for the throughput objectives, the
    latency in seconds (the slowest instance's, as `Measurement.value` and CP-SAT use) for
    ``latency`` -- to be minimised."""
    value = measurement.value(objective)
    return -value if objective == "latency" else value


# ------------------------------------------------------------------ worker side
_WORKER: dict[str, Any] = {}


def _init_worker(spec: Spec, oracle_kind: str, objective: str, timeout: float | None,
                 oracle_factory: Callable[[Spec], Any] | None) -> None:
    _WORKER["oracle"] = oracle_factory(spec) if oracle_factory else make_oracle(spec, oracle_kind)
    _WORKER["spec"] = spec
    _WORKER["objective"] = objective
    _WORKER["timeout"] = timeout


def _alarm(signum, frame):  # pragma: no cover - runs in the worker
    raise MeasurementTimeout()


def _measure_one(index: int, contexts: list[int], seed: int) -> Record:
    spec = _WORKER["spec"]
    oracle = _WORKER["oracle"]
    timeout = _WORKER["timeout"]
    error = None
    for attempt in (1, 2):
        try:
            alarm = bool(timeout) and threading.current_thread() is threading.main_thread()
            if alarm:
                signal.signal(signal.SIGALRM, _alarm)
                signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                m = oracle.evaluate(Plan.from_contexts(spec, contexts), seed=plan_seed(seed, index))
            finally:
                if alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            value = objective_value(m, _WORKER["objective"])
            return Record(index, contexts, "ok", float(value), float(m.throughput), float(m.half_width),
                          float(m.latency_mean), attempt)
        except MeasurementTimeout:
            error = f"timed out after {timeout:g}s"
        except Exception as exc:  # an oracle failure is data, not a crash
            error = f"{type(exc).__name__}: {exc}"
    return Record(index, contexts, "failed", attempts=2, error=error)


def _measure_chunk(jobs: list[tuple[int, list[int], int]]) -> list[Record]:
    return [_measure_one(*job) for job in jobs]


# ------------------------------------------------------------------ the plan stream
class PlanStream:
    """Plan ``i`` of the stream (module docstring): independent of how many are drawn."""

    def __init__(self, spec: Spec, seed: int) -> None:
        self.spec, self.seed = spec, int(seed)
        self._blocks: dict[int, np.ndarray] = {}

    def block(self, b: int) -> np.ndarray:
        if b not in self._blocks:
            self._blocks[b] = uniform_plans(self.spec, BLOCK, np.random.default_rng(np.random.SeedSequence([self.seed, b])))
        return self._blocks[b]

    def __getitem__(self, i: int) -> np.ndarray:
        return self.block(i // BLOCK)[i % BLOCK]


def spec_hash(spec: Spec) -> str:
    """A canonical hash of a loaded spec: its inlined YAML dump, so that a change of any referenced
    file shows, and a change of comments or key order does not."""
    from specs.loader import dump_spec

    return hashlib.sha256(dump_spec(spec).encode()).hexdigest()[:16]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tasksolve")
    except PackageNotFoundError:
        return "0+unknown"


# ------------------------------------------------------------------ the service
@dataclass
class SamplingService:
    """Measure random plans of `spec` into `path` (JSON lines), resumably."""

    spec: Spec
    path: Path
    seed: int = 0
    oracle_kind: str = "des"
    workers: int = 1
    max_samples: int = 5000
    timeout: float | None = None
    objective: str | None = None
    oracle_factory: Callable[[Spec], Any] | None = None   # tests: an oracle that fails on purpose
    scheduler: Any = None                                  # a Dask scheduler address or client
    records: dict[int, Record] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self.objective = self.objective or self.spec.objective
        self.plans = PlanStream(self.spec, self.seed)
        self.plans[max(0, self.max_samples - 1)]  # the constraints allow enough plans, or SamplerError now
        self._lock = None

    # -- identity of the run
    def header(self) -> dict[str, Any]:
        return {"tasksolve_samples": FORMAT, "spec": self.spec.name, "spec_hash": spec_hash(self.spec),
                "oracle": self.oracle_kind, "objective": self.objective, "design": DESIGN, "seed": self.seed,
                "plan_stream": f"uniform blocks of {BLOCK}", "version": _version()}

    def _check_header(self, found: dict[str, Any]) -> None:
        expected = self.header()
        names = {"spec_hash": "the spec (or a file it refers to)", "oracle": "the oracle", "objective": "the objective",
                 "design": "the sampling design", "seed": "the seed", "plan_stream": "the plan stream",
                 "tasksolve_samples": "the file format"}
        changed = [f"{names[key]} ({found.get(key)!r} then, {expected[key]!r} now)"
                   for key in names if found.get(key) != expected[key]]
        if changed:
            raise SamplingError(f"{self.path} was written for another run: {'; '.join(changed)}. Start again with "
                                "--force (the samples there are replaced) or use another --out")

    # -- disk
    def lock(self) -> None:
        """Take the directory's lock for this run (released when the process ends)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path.parent / ".tasksolve.lock", "a+")  # noqa: SIM115 - held for the run
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise SamplingError(f"another tasksolve run (pid {holder}) is writing into {self.path.parent}; "
                                "wait for it or choose another --out") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._lock = handle

    def release(self) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def _read_lines(self) -> tuple[dict[str, Any] | None, list[str]]:
        """The header and the complete record lines; a cut last line is cut off the file."""
        raw = self.path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            keep = raw.rfind(b"\n") + 1
            with self.path.open("r+b") as handle:
                handle.truncate(keep)
            raw = raw[:keep]
        lines = raw.decode("utf-8", errors="replace").splitlines()
        header = None
        if lines:
            try:
                first = json.loads(lines[0])
            except json.JSONDecodeError:
                first = None
            if isinstance(first, dict) and "tasksolve_samples" in first:
                header, lines = first, lines[1:]
        return header, lines

    def finished(self) -> int:
        """How many records the file holds (0 when there is no file)."""
        if not self.path.exists():
            return 0
        return sum(1 for line in self._read_lines()[1] if line.strip())

    def load(self) -> int:
        """Read what an earlier run of the same spec, oracle and seed finished (resume)."""
        self.records = {}
        if not self.path.exists() or self.path.stat().st_size == 0:
            self.start_fresh(force=True)
            return 0
        header, lines = self._read_lines()
        if header is None:
            raise SamplingError(f"{self.path} has no header line (another program's file, or an older tasksolve's): "
                                "start again with --force")
        self._check_header(header)
        for line in lines:
            try:
                record = Record(**json.loads(line))
            except (json.JSONDecodeError, TypeError):
                continue  # a damaged line: that plan is measured again
            if record.index < self.max_samples and record.contexts == [int(c) for c in self.plans[record.index]]:
                self.records[record.index] = record
        return len(self.records)

    def start_fresh(self, force: bool = False) -> None:
        """Start an empty file with this run's header; finished samples are kept unless `force`."""
        if not force and self.finished():
            raise SamplingError(f"{self.path} holds {self.finished()} finished samples: continue them with --resume, "
                                "or replace them with --force")
        self.records = {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.header(), separators=(",", ":")) + "\n")

    def _append(self, records: list[Record]) -> None:
        with self.path.open("a") as handle:
            for record in records:
                handle.write(record.to_json() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        for record in records:
            self.records[record.index] = record

    # -- measuring
    def ensure(self, n: int, on_progress: Callable[[int], None] | None = None) -> None:
        """Make sure plans 0..n-1 are measured (through the executor)."""
        n = min(n, self.max_samples)
        todo = [i for i in range(n) if i not in self.records]
        if not todo:
            return
        jobs = [(i, [int(c) for c in self.plans[i]], self.seed) for i in todo]
        parallel = max(1, self.workers)
        size = max(1, min(25, len(jobs) // (4 * parallel) or 1))
        chunks = [jobs[k:k + size] for k in range(0, len(jobs), size)]
        initargs = (self.spec, self.oracle_kind, self.objective, self.timeout, self.oracle_factory)
        for _, records in run_chunks(_measure_chunk, chunks, initializer=_init_worker, initargs=initargs,
                                     workers=self.workers, scheduler=self.scheduler):
            self._append(records)
            if on_progress:
                on_progress(len(records))

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
