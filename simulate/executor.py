"""One executor for every "measure many plans" loop: local processes or a Dask cluster.

A loop that measures many plans (the certifier's random sample, `evaluate_many`, the profiling
tables) is a map of a picklable function over *chunks* of jobs, where every worker first builds
some state once (an oracle for the spec) and the caller wants the results as soon as a chunk is
done, to append them to disk.  The API:

* ``Executor(workers=1, scheduler=None, chunk_size=None)`` -- ``workers`` local processes
  (``workers=1``: inline in this process, no pool), or, when ``scheduler`` is given, a Dask
  cluster: a scheduler address (``"tcp://host:8786"``), a ``distributed.Client``, or a cluster
  object such as ``distributed.LocalCluster`` (a client is made for it).  Every worker of a remote
  cluster must be able to import tasksolve.
* ``executor.map(fn, jobs, init=None, init_args=())`` returns a `ChunkStream`; use it as a context
  manager and iterate: it yields ``(indices, results)`` per chunk, in the order chunks *finish*,
  where ``indices`` are the positions of the chunk's jobs in `jobs` and ``results[k]`` is the
  result of job ``indices[k]``.  ``init(*init_args)`` runs once per worker (per map call) and its
  return value, the worker's *state*, is passed to every call ``fn(state, chunk) -> list`` (one
  result per job of the chunk; a chunk is a list of jobs, so a vectorised ``fn`` can batch it).
  ``fn`` and ``init`` must be picklable (module-level functions), like ``jobs`` and
  ``init_args``.  An exception raised by ``fn`` is re-raised by the iteration; a worker that dies
  raises `ExecutorError`.

The executor guarantees the *set* of results, not their order: a caller that needs a result to
be independent of the backend gives job ``i`` everything it needs (e.g. its seed,
``plan_seed(base, i)``), as `solver.certify.service` does.

Life cycle.  Local worker processes die with their parent (Linux ``prctl(PR_SET_PDEATHSIG)``,
elsewhere a watchdog thread on ``os.getppid()``) and ignore SIGINT: on KeyboardInterrupt, on
SIGTERM (turned into KeyboardInterrupt while a stream runs in the main thread) or when the
stream is closed early, pending chunks are cancelled and the workers terminated without waiting
for the running chunks.  (PR_SET_PDEATHSIG fires when the *thread* that started the pool ends:
iterate a stream in a thread that outlives it.)  On Dask, pending chunks are cancelled (running
tasks cannot be stopped), the per-worker state is dropped at the end of the map (waiting at most
`FORGET_SECONDS` for the workers to answer: a frozen one never would), and a client the executor
made is closed.
Every Dask wait has a deadline: ``stall_seconds`` (`Executor`) is the longest the map waits for
the next chunk; past it the map raises `WorkerStalled` (a worker stopped answering -- frozen,
partitioned -- which Dask notices only after its worker TTL, minutes later), and what finished
is the caller's to keep, as when the scheduler is lost.

Example (the shape of `SimulationOracle.evaluate_many`)::

    def make_oracle_state(spec, overrides):          # once per worker
        return SimulationOracle(spec, **overrides)

    def measure(oracle, jobs):                       # one chunk: [(plan, seed), ...]
        return [oracle.evaluate(plan, seed) for plan, seed in jobs]

    results = [None] * len(jobs)
    with Executor(workers=4).map(measure, jobs, init=make_oracle_state, init_args=(spec, {})) as stream:
        for indices, measurements in stream:
            for i, m in zip(indices, measurements):
                results[i] = m

A new backend is a generator function ``_<name>_chunks(executor, fn, chunks, init, init_args)``
yielding ``(indices, results)`` and cleaning up in its ``finally``; `Executor.map` chooses it.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from tasksolve.simulate.errors import OracleError, SimulateError
from tasksolve.specs.errors import shorten

Chunk = list[tuple[int, Any]]  # (position in the job list, job)
ChunkFn = Callable[[Any, list[Any]], list[Any]]
Init = Callable[..., Any] | None


class SchedulerAddressError(SimulateError, ValueError):
    """`--scheduler` is not a Dask address (bad input, exit 2)."""


class ExecutorError(OracleError):
    """The executor itself failed: a worker process died, the Dask scheduler is unreachable."""


# ------------------------------------------------------------------ the public API
@dataclass
class Executor:
    """Where chunks of jobs run (see the module docstring)."""

    workers: int = 1
    scheduler: Any = None  # None: local; "tcp://host:port", a distributed.Client or a cluster
    chunk_size: int | None = None  # None: small chunks, about 4 per worker, at most 25 jobs
    stall_seconds: float | None = None  # Dask: the longest wait for the next chunk (None: no limit)

    def map(self, fn: ChunkFn, jobs: Sequence[Any], init: Init = None, init_args: tuple = ()) -> ChunkStream:
        """Map `fn` over chunks of `jobs`; see the module docstring."""
        chunks = self.chunks(jobs)
        if self.scheduler is not None:
            generator = _dask_chunks(self, fn, chunks, init, init_args)
        elif self.workers <= 1 or len(chunks) <= 1:
            generator = _inline_chunks(self, fn, chunks, init, init_args)
        else:
            generator = _process_chunks(self, fn, chunks, init, init_args)
        return ChunkStream(generator)

    def chunks(self, jobs: Sequence[Any]) -> list[Chunk]:
        numbered = list(enumerate(jobs))
        lanes = max(1, self.workers)
        size = self.chunk_size or max(1, min(MAX_CHUNK, len(numbered) // (4 * lanes) or 1))
        return [numbered[k : k + size] for k in range(0, len(numbered), size)]


class ChunkStream:
    """The results of one `Executor.map`: an iterator of ``(indices, results)`` and a context
    manager whose exit tears the workers down (cancelling what has not run)."""

    def __init__(self, generator: Iterator[tuple[list[int], list[Any]]]) -> None:
        self._generator = generator
        self._previous_sigterm: Any = None

    def __enter__(self) -> ChunkStream:
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            self._previous_sigterm = signal.signal(signal.SIGTERM, _sigterm_to_interrupt)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __iter__(self) -> ChunkStream:
        return self

    def __next__(self) -> tuple[list[int], list[Any]]:
        return next(self._generator)

    def close(self) -> None:
        try:
            self._generator.close()
        finally:
            if self._previous_sigterm is not None:
                signal.signal(signal.SIGTERM, self._previous_sigterm)
                self._previous_sigterm = None


def _sigterm_to_interrupt(signum, frame):
    raise KeyboardInterrupt("terminated (SIGTERM)")


def _split(chunk: Chunk) -> tuple[list[int], list[Any]]:
    return [i for i, _ in chunk], [job for _, job in chunk]


def _checked(results: Any, indices: list[int]) -> list[Any]:
    results = list(results)
    if len(results) != len(indices):
        raise ExecutorError(f"a chunk function returned {len(results)} results for {len(indices)} jobs")
    return results


# ------------------------------------------------------------------ inline (workers=1)
def _inline_chunks(executor: Executor, fn: ChunkFn, chunks: list[Chunk], init: Init, init_args: tuple):
    state = init(*init_args) if init else None
    for chunk in chunks:
        indices, jobs = _split(chunk)
        yield indices, _checked(fn(state, jobs), indices)


# ------------------------------------------------------------------ local processes
#: chunks submitted per worker process at a time (a worker never waits for its next chunk; waiting
#: for the first of thousands of submitted chunks would cost a pass over all of them each time)
IN_FLIGHT = 4
_STATE: dict[str, Any] = {}
_STATE_LOCK = threading.Lock()


def _watch_parent(parent: int) -> None:
    """Make this worker process die with `parent`."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError):  # not Linux: poll the parent from a thread

        def watchdog() -> None:
            while os.getppid() == parent:
                threading.Event().wait(0.5)
            os._exit(1)

        threading.Thread(target=watchdog, daemon=True, name="parent-watchdog").start()
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _process_init(parent: int, key: str, init: Init, init_args: tuple) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and tears us down
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _watch_parent(parent)
    _STATE[key] = init(*init_args) if init else None


def _process_chunk(key: str, fn: ChunkFn, indices: list[int], jobs: list[Any]) -> tuple[list[int], list[Any]]:
    return indices, _checked(fn(_STATE[key], jobs), indices)


def _process_chunks(executor: Executor, fn: ChunkFn, chunks: list[Chunk], init: Init, init_args: tuple):
    key = uuid.uuid4().hex
    pool = ProcessPoolExecutor(
        min(executor.workers, len(chunks)), initializer=_process_init, initargs=(os.getpid(), key, init, init_args)
    )
    pending: set = set()
    finished = False
    waiting = iter(chunks)  # submitted `IN_FLIGHT` per worker at a time: each wait is over a few futures
    try:
        pending = {
            pool.submit(_process_chunk, key, fn, *_split(chunk))
            for chunk in itertools.islice(waiting, IN_FLIGHT * executor.workers)
        }
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    result = future.result()
                    pending |= {pool.submit(_process_chunk, key, fn, *_split(c)) for c in itertools.islice(waiting, 1)}
                except BrokenProcessPool:
                    raise ExecutorError("a worker process died (killed, or out of memory)") from None
                yield result
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:
            _terminate(pool, pending)


def _terminate(pool: ProcessPoolExecutor, pending: set) -> None:
    """Cancel what has not started and kill the workers without waiting for running chunks."""
    for future in pending:
        future.cancel()
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=2)
        if process.is_alive():
            process.kill()
            process.join(timeout=2)


# ------------------------------------------------------------------ Dask
def _dask_state(key: str, init: Init, init_args: tuple) -> Any:
    with _STATE_LOCK:
        if key not in _STATE:
            _STATE[key] = init(*init_args) if init else None
        return _STATE[key]


def _dask_chunk(
    key: str, init: Init, init_args: tuple, fn: ChunkFn, indices: list[int], jobs: list[Any]
) -> tuple[list[int], list[Any]]:
    return indices, _checked(fn(_dask_state(key, init, init_args), jobs), indices)


def _dask_forget(key: str) -> None:
    with _STATE_LOCK:
        _STATE.pop(key, None)


#: the most jobs a chunk holds when `Executor.chunk_size` is not given
MAX_CHUNK = 25

#: seconds to connect to a Dask scheduler *and* receive its handshake
CONNECT_TIMEOUT = 10.0

#: seconds the end of a map waits for the workers to drop its state (a frozen worker never answers)
FORGET_SECONDS = 2.0


class SchedulerLost(ExecutorError):
    """The Dask scheduler or all its workers went away during a map (exit 3; finished chunks kept)."""


class WorkerStalled(SchedulerLost):
    """No chunk finished within `Executor.stall_seconds`: a worker stopped answering (exit 3)."""


def _check_address(address: str) -> None:
    """A TCP or TLS address names a port 1-65535 (refused at once, not after a connect timeout)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme not in ("tcp", "tls"):
            return
        _, port = parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise SchedulerAddressError(f"bad Dask scheduler address {shorten(address, 200)!r}: {exc}") from None
    if not 1 <= int(port) <= 65535:
        raise SchedulerAddressError(
            f"bad Dask scheduler address {shorten(address, 200)!r}: port {port} is not in 1-65535"
        )


def _probe_scheduler(address: str, seconds: float = CONNECT_TIMEOUT) -> None:
    """Connect to `address` with distributed's own comm and wait for its handshake, all within
    `seconds`: distributed's connect timeout covers the TCP connection only, and a server that
    accepts but never answers (any non-Dask service) would hold ``Client()`` for minutes."""
    import asyncio

    from distributed.comm import connect

    _check_address(address)

    async def handshake() -> None:
        # the outer limit leaves distributed's own connect timeout the first word, so that a
        # refused connection says so; it ends only a server that accepts and never answers
        comm = await asyncio.wait_for(connect(address, timeout=seconds), seconds + 2)
        await comm.close()

    try:
        asyncio.run(handshake())
    except TimeoutError:
        raise ExecutorError(
            f"no Dask scheduler answered at {address} within {seconds + 2:g} s (is it a Dask scheduler's address?)"
        ) from None
    except OSError as exc:
        raise ExecutorError(f"cannot connect to the Dask scheduler {address}: {exc}") from None
    except (ValueError, TypeError) as exc:  # not an address (bad input, not a failure)
        raise SchedulerAddressError(f"bad Dask scheduler address {address!r}: {exc}") from None
    except Exception as exc:  # it answered, but not as Dask does (garbage frames, a huge length, ...)
        raise SchedulerAddressError(
            f"{address} is not a Dask scheduler: its answer is not Dask's handshake ({type(exc).__name__})"
        ) from None


def _dask_client(scheduler: Any) -> tuple[Any, bool]:
    """(client, whether we made it)."""
    try:
        import distributed
    except ImportError:
        raise ExecutorError(
            "a Dask scheduler needs the `distributed` package (pip install 'tasksolve[dask]')"
        ) from None
    if isinstance(scheduler, distributed.Client):
        return scheduler, False
    if isinstance(scheduler, str):
        _probe_scheduler(scheduler)
    try:
        return distributed.Client(scheduler, timeout=f"{CONNECT_TIMEOUT:g}s"), True
    except (OSError, TimeoutError) as exc:
        raise ExecutorError(f"cannot connect to the Dask scheduler {scheduler}: {exc}") from None
    except (ValueError, TypeError) as exc:  # not an address (bad input, not a failure)
        raise SchedulerAddressError(f"bad Dask scheduler address {scheduler!r}: {exc}") from None


def _dask_chunks(executor: Executor, fn: ChunkFn, chunks: list[Chunk], init: Init, init_args: tuple):
    import distributed

    client, owned = _dask_client(executor.scheduler)
    key = uuid.uuid4().hex
    futures: list = []
    try:
        wait = executor.stall_seconds or 6 * CONNECT_TIMEOUT
        # the broadcast waits for every worker, and its own timeout does not cover a frozen one
        shared = _within(wait, lambda: client.scatter([init_args], broadcast=True, hash=False)[0])
        if shared is _UNANSWERED:
            raise _stalled(client, executor.scheduler, wait, "the broadcast of the spec to the workers")
        futures = [client.submit(_dask_chunk, key, init, shared, fn, *_split(chunk), pure=False) for chunk in chunks]
        for future in _as_finished(distributed, futures, executor.stall_seconds, client, executor.scheduler):
            try:
                result = future.result()
            except Exception as exc:
                killed = isinstance(exc, getattr(distributed, "KilledWorker", ()))  # workers died running it
                if future.status == "error" and not killed:  # the chunk function raised: its own exception
                    raise
                raise _lost(client, executor.scheduler, exc) from None
            yield result
    except (OSError, TimeoutError) as exc:  # the connection to the scheduler itself
        raise _lost(client, executor.scheduler, exc) from None
    finally:
        with _quiet_if_lost(client):  # a lost scheduler: our message says it, not distributed's tracebacks
            unfinished = [f for f in futures if not f.done()]
            # cancelling asks the scheduler only; dropping the state asks every worker, and `run`
            # returns when all have answered (``wait=False`` only spares waiting for a coroutine),
            # which a frozen worker never does: the others drop it within FORGET_SECONDS
            for seconds, call in (
                (CONNECT_TIMEOUT, lambda: client.cancel(unfinished)),
                (FORGET_SECONDS, lambda: client.run(_dask_forget, key, on_error="ignore")),
            ):
                try:
                    _within(seconds, call)
                except Exception:
                    pass
            if owned:
                client.close(timeout=CONNECT_TIMEOUT)


def _as_finished(distributed, futures: list, stall_seconds: float | None, client: Any, scheduler: Any):
    """The futures as they finish (`distributed.wait`, first completed), raising `WorkerStalled`
    when none finishes within `stall_seconds` (None: wait as long as it takes)."""
    pending = set(futures)
    while pending:
        try:
            done, pending = distributed.wait(pending, timeout=stall_seconds, return_when="FIRST_COMPLETED")
        except TimeoutError:
            raise _stalled(client, scheduler, stall_seconds, f"{len(pending)} chunk(s) pending") from None
        except (CancelledError, OSError) as exc:  # the scheduler went away and took the futures with it
            raise _lost(client, scheduler, exc) from None
        yield from done


_UNANSWERED = object()


def _within(seconds: float, call: Callable[[], Any]) -> Any:
    """`call()`'s value, or `_UNANSWERED` when it has not returned within `seconds` (it then goes
    on in a daemon thread, which never holds the process at exit); its exception is re-raised."""
    box: dict[str, Any] = {}

    def body() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=body, name="tasksolve-dask-call", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        return _UNANSWERED
    if "error" in box:
        raise box["error"]
    return box["value"]


def _stalled(client: Any, scheduler: Any, seconds: float, what: str) -> WorkerStalled:
    address = scheduler if isinstance(scheduler, str) else getattr(getattr(client, "scheduler", None), "address", "?")
    return WorkerStalled(
        f"no chunk finished on the Dask cluster {address} for {seconds:g} s: a worker stopped answering ({what}); "
        "every finished measurement is kept: restart the worker and continue with the same command and --resume"
    )


@contextlib.contextmanager
def _quiet_if_lost(client: Any):
    import logging

    quiet = getattr(client, "status", "running") not in ("running", "connecting")
    logger = logging.getLogger("distributed.client")
    level = logger.level
    if quiet:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _lost(client: Any, scheduler: Any, exc: BaseException) -> SchedulerLost:
    address = scheduler if isinstance(scheduler, str) else getattr(getattr(client, "scheduler", None), "address", "?")
    return SchedulerLost(
        f"lost the Dask scheduler {address} or all its workers ({type(exc).__name__}: {str(exc)[:200]}); every "
        "finished measurement is kept: restart the cluster and continue with the same command and --resume"
    )
