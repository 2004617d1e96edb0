"""The sampling service: random plans measured on the oracle, in parallel, kept on disk.

* Plan ``i`` is row ``i`` of ``uniform_plans(spec, max_samples, seed)`` and is measured with the
  seed ``plan_seed(seed, i)``: the sample depends on the seed only, never on the number of
  worker processes nor on interruptions.
* Every finished measurement is appended to a JSON-lines file (one line per plan, flushed and
  fsync'ed in small batches), so Ctrl-C loses nothing; on `resume` the lines already there are
  read back and only the missing indices are measured.
* A measurement that fails (the oracle raises) or runs past `timeout` seconds is retried once;
  if it fails again it is recorded with ``"status": "failed"`` and the error, and the run goes on.
"""

from __future__ import annotations

import json
import os
import signal
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from simulate.oracle import make_oracle, plan_seed
from solver.binding.samplers import uniform_plans
from specs import Plan, Spec


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
            if timeout:
                signal.signal(signal.SIGALRM, _alarm)
                signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                m = oracle.evaluate(Plan.from_contexts(spec, contexts), seed=plan_seed(seed, index))
            finally:
                if timeout:
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
    records: dict[int, Record] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self.objective = self.objective or self.spec.objective
        self.plans = uniform_plans(self.spec, self.max_samples, self.seed)
        if len(self.plans) < self.max_samples:
            raise ValueError(f"only {len(self.plans)} distinct random plans could be drawn")

    # -- disk
    def load(self) -> int:
        """Read what an earlier run finished (resume); returns how many records were read."""
        self.records = {}
        if not self.path.exists():
            return 0
        with self.path.open() as handle:
            for line in handle:
                line = line.strip()
                if not line:
                    continue
                try:
                    data = json.loads(line)
                    record = Record(**data)
                except (json.JSONDecodeError, TypeError):
                    continue  # a line cut by a crash: measured again
                if record.index < self.max_samples and record.contexts == [int(c) for c in self.plans[record.index]]:
                    self.records[record.index] = record
        return len(self.records)

    def start_fresh(self) -> None:
        self.records = {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")

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
        """Make sure plans 0..n-1 are measured (in parallel with `workers` processes)."""
        n = min(n, self.max_samples)
        todo = [i for i in range(n) if i not in self.records]
        if not todo:
            return
        jobs = [(i, [int(c) for c in self.plans[i]], self.seed) for i in todo]
        size = max(1, min(25, len(jobs) // (4 * self.workers) or 1))
        chunks = [jobs[k:k + size] for k in range(0, len(jobs), size)]
        if self.workers <= 1:
            _init_worker(self.spec, self.oracle_kind, self.objective, self.timeout, self.oracle_factory)
            for chunk in chunks:
                self._append(_measure_chunk(chunk))
                if on_progress:
                    on_progress(len(chunk))
            return
        with ProcessPoolExecutor(self.workers, initializer=_init_worker,
                                 initargs=(self.spec, self.oracle_kind, self.objective, self.timeout,
                                           self.oracle_factory)) as pool:
            pending = {pool.submit(_measure_chunk, chunk) for chunk in chunks}
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        records = future.result()
                        self._append(records)
                        if on_progress:
                            on_progress(len(records))
            except BaseException:
                for future in pending:
                    future.cancel()
                raise

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
