"""The executor: the same results inline, in local processes and on Dask; per-worker state built
once; failures surfaced; workers gone when their parent is killed or terminated."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasksolve.simulate.executor import Executor, ExecutorError

ROOT = Path(__file__).resolve().parents[2]


def make_state(offset):
    return {"offset": offset, "pid": os.getpid(), "token": os.urandom(8).hex()}


def square_chunk(state, jobs):
    return [(job * job + state["offset"], state["pid"], state["token"]) for job in jobs]


def failing_chunk(state, jobs):
    if 13 in jobs:
        raise RuntimeError("job 13 is unlucky")
    return list(jobs)


def dying_chunk(state, jobs):
    if 13 in jobs:
        os._exit(7)
    return list(jobs)


def sleepy_chunk(state, jobs):
    if jobs[0] != 0:
        time.sleep(60)
    return [os.getpid()] * len(jobs)


@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster


def _collect(executor, jobs, chunk_size=None):
    executor.chunk_size = chunk_size
    out = {}
    with executor.map(square_chunk, jobs, init=make_state, init_args=(5,)) as stream:
        for indices, results in stream:
            assert len(indices) == len(results)
            for i, result in zip(indices, results, strict=True):
                assert i not in out
                out[i] = result
    return out


def test_inline_processes_and_dask_give_the_same_results(dask_cluster):
    jobs = list(range(100))
    expected = {i: i * i + 5 for i in jobs}
    for executor in (Executor(workers=1), Executor(workers=2), Executor(scheduler=dask_cluster)):
        out = _collect(executor, jobs, chunk_size=7)
        assert {i: r[0] for i, r in out.items()} == expected, executor
        # the state is built once per worker: one token per worker process
        tokens = {}
        for _, pid, token in out.values():
            tokens.setdefault(pid, set()).add(token)
        assert all(len(t) == 1 for t in tokens.values())
        if executor.workers == 1 and executor.scheduler is None:
            assert set(tokens) == {os.getpid()}
        else:
            assert os.getpid() not in tokens


@settings(max_examples=60, deadline=None)
@given(
    jobs=st.lists(st.integers(-1000, 1000), max_size=200),
    workers=st.integers(1, 8),
    chunk_size=st.none() | st.integers(1, 40),
)
def test_chunks_partition_the_jobs_and_every_result_comes_back_once(jobs, workers, chunk_size):
    executor = Executor(workers=workers, chunk_size=chunk_size)
    chunks = executor.chunks(jobs)
    assert all(chunks) and [i for chunk in chunks for i, _ in chunk] == list(range(len(jobs)))
    assert [job for chunk in chunks for _, job in chunk] == jobs
    inline = Executor(workers=1, chunk_size=chunk_size)
    out = _collect(inline, jobs, chunk_size=chunk_size)
    assert {i: r[0] for i, r in out.items()} == {i: job * job + 5 for i, job in enumerate(jobs)}


def test_inline_runs_without_a_pool():
    out = _collect(Executor(workers=1), list(range(10)))
    assert {pid for _, pid, _ in out.values()} == {os.getpid()}


def test_an_exception_in_a_chunk_is_raised(dask_cluster):
    for executor in (Executor(workers=1), Executor(workers=2, chunk_size=4), Executor(scheduler=dask_cluster)):
        with pytest.raises(RuntimeError, match="unlucky"):
            with executor.map(failing_chunk, list(range(40))) as stream:
                list(stream)


def test_a_dead_worker_is_an_executor_error():
    with pytest.raises(ExecutorError, match="worker process died"):
        with Executor(workers=2, chunk_size=5).map(dying_chunk, list(range(40))) as stream:
            list(stream)


def test_closing_early_terminates_the_workers_without_waiting():
    with Executor(workers=2, chunk_size=1).map(sleepy_chunk, list(range(6))) as stream:
        _, [pid] = next(stream)  # job 0 returns at once; the others sleep for a minute
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_an_unreachable_scheduler_is_an_executor_error():
    pytest.importorskip("distributed")
    with pytest.raises(ExecutorError, match="cannot connect"):
        with Executor(scheduler="tcp://127.0.0.1:9").map(square_chunk, [1, 2]) as stream:
            list(stream)


# ------------------------------------------------------------------ life cycle in a subprocess
SCRIPT = textwrap.dedent("""
    import sys, time
    from tasksolve.simulate.executor import Executor

    def sleepy(state, jobs):
        time.sleep(60)
        return list(jobs)

    if __name__ == "__main__":
        try:
            with Executor(workers=2, chunk_size=1).map(sleepy, list(range(8))) as stream:
                for _ in stream:
                    pass
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(130)
""")


def _alive(pid: int) -> bool:
    """True if `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _start(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    script = tmp_path / "pool.py"
    script.write_text(SCRIPT)
    process = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 30
    workers: list[int] = []
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
        workers = _children(process.pid)
    assert len(workers) >= 2, "the pool did not start"
    return process, workers


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_workers_die_with_their_parent(tmp_path):
    process, workers = _start(tmp_path)
    process.kill()  # SIGKILL: the parent runs no cleanup at all
    process.wait(timeout=10)
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = [pid for pid in workers if _alive(pid)]
    for pid in survivors:  # do not leave them behind if the test fails
        os.kill(pid, signal.SIGKILL)
    assert not survivors


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_sigterm_tears_the_pool_down_without_waiting(tmp_path):
    process, workers = _start(tmp_path)
    process.terminate()
    try:
        out, err = process.communicate(timeout=20)  # the running chunks sleep for 60 s
    finally:
        process.kill()
    assert process.returncode == 130 and "interrupted" in out, err
    assert not any(_alive(pid) for pid in workers)


def test_a_malformed_scheduler_address_is_bad_input():
    pytest.importorskip("distributed")
    with pytest.raises(ValueError, match="bad Dask scheduler address 'foo'"):
        with Executor(scheduler="foo").map(square_chunk, [1, 2]) as stream:
            list(stream)


@pytest.mark.parametrize("port", ["99999", "-1", "0"])
def test_a_port_out_of_range_is_bad_input_at_once(port):
    pytest.importorskip("distributed")
    begin = time.monotonic()
    with pytest.raises(ValueError, match=f"port {port} is not in 1-65535"):
        with Executor(scheduler=f"tcp://127.0.0.1:{port}").map(square_chunk, [1, 2]) as stream:
            list(stream)
    assert time.monotonic() - begin < 5  # not after the 10 s connect timeout


def test_a_frozen_dask_worker_ends_the_map_within_its_stall_deadline():
    """A worker stopped with SIGSTOP never answers and Dask notices only after its worker TTL
    (minutes): the map raises WorkerStalled once no chunk has finished for `stall_seconds`, and
    closing the stream waits for the frozen worker at most FORGET_SECONDS (`client.run` returns
    only when every worker has answered, whatever its `wait`: it had held the end for 10 s)."""
    import signal

    distributed = pytest.importorskip("distributed")
    from tasksolve.simulate.executor import FORGET_SECONDS, WorkerStalled

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            (pid,) = client.run(os.getpid).values()
            os.kill(pid, signal.SIGSTOP)
            began = time.monotonic()
            try:
                with pytest.raises(WorkerStalled, match="for 3 s: a worker stopped answering"):
                    with Executor(scheduler=client, stall_seconds=3).map(square_chunk, [1, 2, 3]) as stream:
                        list(stream)
                assert time.monotonic() - began < 3 + FORGET_SECONDS + 3
            finally:
                with contextlib.suppress(ProcessLookupError):  # the nanny may have replaced it by now
                    os.kill(pid, signal.SIGCONT)


def state_keys():
    from tasksolve.simulate.executor import _STATE

    return sorted(_STATE)


def test_a_dask_map_drops_its_worker_state_at_the_end(dask_cluster):
    """Each worker's state (an oracle for the spec) is built once per map and dropped when the map
    ends: a long-lived cluster does not keep every past map's spec and oracle."""
    distributed = pytest.importorskip("distributed")

    with distributed.Client(dask_cluster) as client:
        before = client.run(state_keys)
        assert _collect(Executor(scheduler=client), list(range(20)))[3][0] == 3 * 3 + 5
        assert client.run(state_keys) == before
