"""The one executor for "measure many plans": chunks of jobs run inline, in local worker
processes, or on a Dask cluster, and come back as they finish.

`run_chunks(function, chunks, initializer=..., initargs=..., workers=..., scheduler=...)` calls
``initializer(*initargs)`` once in every worker (to build the oracle there once), then
``function(chunk)`` for every chunk, and yields ``(chunk index, result)`` in the order chunks
finish, so that a caller can write each result to disk at once. Callers make the work of a job
depend only on the job (a plan and its own seed), never on which worker runs it: the results
are then the same, bit for bit, with one worker, several, or a cluster.

Backends:

* **inline** (``workers <= 1``, no scheduler): in this process, in order;
* **local processes** (``workers > 1``): a `multiprocessing.Pool`. Workers ignore SIGINT (the
  parent decides what an interruption means), ask the kernel to kill them when the parent dies
  (Linux ``PR_SET_PDEATHSIG``, so a ``kill -9`` of the parent leaves no orphans), and are
  terminated at once if the caller stops early (an exception, Ctrl-C, SIGTERM);
* **Dask** (``scheduler="tcp://host:8786"`` or a ``distributed.Client``/``LocalCluster``): the
  initializer's arguments are scattered to every worker once, and each worker runs the
  initializer once per run (its state is cached under a token). This is how sampling scales past
  one machine; it needs the ``dask`` extra (``pip install 'tasksolve[dask]'``).

A new backend is a generator with the signature of `_inline` added to `run_chunks`.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from simulate.errors import SimulateError

PR_SET_PDEATHSIG = 1


class ExecutorError(SimulateError):
    """The executor cannot run (no Dask installed, the scheduler cannot be reached)."""


def run_chunks(function: Callable[[Any], Any], chunks: Sequence[Any], *,
               initializer: Callable[..., None] | None = None, initargs: tuple = (),
               workers: int = 1, scheduler: Any = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(index, function(chunks[index]))`` as chunks finish (module docstring)."""
    if not chunks:
        return iter(())
    if scheduler is not None:
        return _dask(function, chunks, initializer, initargs, scheduler)
    if workers <= 1 or len(chunks) == 1:
        return _inline(function, chunks, initializer, initargs)
    return _processes(function, chunks, initializer, initargs, min(int(workers), len(chunks)))


def _inline(function, chunks, initializer, initargs) -> Iterator[tuple[int, Any]]:
    if initializer is not None:
        initializer(*initargs)
    for index, chunk in enumerate(chunks):
        yield index, function(chunk)


# ----------------------------------------------------------------------------- local processes
def _die_with_parent() -> None:
    """Ignore SIGINT (the parent handles it) and die when the parent dies (Linux)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: workers still end with the pool
        pass


def _worker_start(parent: int, initializer, initargs) -> None:
    _die_with_parent()
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)
    if initializer is not None:
        initializer(*initargs)


def _indexed(function, item):
    index, chunk = item
    return index, function(chunk)


def _processes(function, chunks, initializer, initargs, workers: int) -> Iterator[tuple[int, Any]]:
    from functools import partial

    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    pool = context.Pool(workers, initializer=_worker_start, initargs=(os.getpid(), initializer, initargs))
    finished = False
    try:
        yield from pool.imap_unordered(partial(_indexed, function), list(enumerate(chunks)))
        finished = True
    finally:
        if finished:
            pool.close()
        else:  # stopped early: do not wait for running chunks
            pool.terminate()
        pool.join()


# ----------------------------------------------------------------------------- Dask
_DASK_STATE: dict[str, Any] = {"token": None}


def _dask_chunk(token: str, initializer, initargs, function, chunk):
    """Run on a Dask worker: the initializer once per token, then the chunk."""
    if _DASK_STATE["token"] != token:
        if initializer is not None:
            initializer(*initargs)
        _DASK_STATE["token"] = token
    return function(chunk)


def _dask(function, chunks, initializer, initargs, scheduler) -> Iterator[tuple[int, Any]]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ExecutorError("a Dask scheduler needs the `distributed` package: pip install 'tasksolve[dask]'") from None
    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler, set_as_default=False, timeout="10s") if own else scheduler
    except (OSError, TimeoutError, ValueError) as exc:
        raise ExecutorError(f"cannot reach the Dask scheduler {scheduler!r}: {exc}") from None
    token = uuid.uuid4().hex
    futures = []
    try:
        shared = tuple(client.scatter(list(initargs), broadcast=True)) if initargs else ()
        index_of = {}
        for index, chunk in enumerate(chunks):
            future = client.submit(_dask_chunk, token, initializer, shared, function, chunk, pure=False,
                                   key=f"tasksolve-{token}-{index}")
            futures.append(future)
            index_of[future.key] = index
        for future in as_completed(futures):
            yield index_of[future.key], future.result()
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)
        if own:
            client.close()
