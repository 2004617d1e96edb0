"""Every failure path ends in its documented exit code (issue 25): all samples failed -> 3 with
the failures summarised; a lost Dask scheduler or workers -> 3 naming the address and --resume;
a --scheduler that is not Dask -> refused within the connect timeout."""

from __future__ import annotations

import json
import socket
import sys
import textwrap
import threading
import time

import pytest

from tasksolve.simulate.executor import CONNECT_TIMEOUT, Executor, ExecutorError, SchedulerLost
from tasksolve.solver.cli import main
from tests.solver.test_executor import square_chunk

SPEC = textwrap.dedent("""\
    tasksolve: 1
    name: spin
    topology:
      name: two cores of two strands
      clock: 1GHz
      levels: [{name: core, count: 2}, {name: strand, count: 2}]
      resources: [{name: alu, level: core, capacity: 1.0}]
    applications:
      spin:
        tasks:
          A: {cycles: 1000, demand: {alu: 1.0}}
          B: {cycles: 1000, demand: {alu: 1.0}}
        edges: [{from: A, to: B, bytes: 0}]
    workload: [{app: spin}]
    """)

FAILING = {
    "exits 1": "import sys; sys.exit(1)",
    "prints nothing": "pass",
    "prints no number": 'print(\'{"rate": "fast"}\')',
    "negative": "print('{\"rate\": -5.0}')",
    "zero": "print('{\"rate\": 0}')",
    "killed by a signal": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
    "runs past the timeout": "import time; time.sleep(30)",
    "cannot start": None,
}


@pytest.mark.parametrize("kind", list(FAILING))
def test_every_sample_failing_exits_3_with_the_failures_summarised(kind, tmp_path, capsys):
    code = FAILING[kind]
    command = ["/nonexistent/program"] if code is None else [sys.executable, "-c", code]
    oracle = {"kind": "command", "command": command, "metric": {"json": "rate"}, "repeats": 1, "timeout": "0.5s"}
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC + "oracle: " + json.dumps(oracle) + "\n")
    samples = "20"
    code = main(
        [
            "certify",
            str(spec),
            "--out",
            str(tmp_path / "out"),
            "--samples",
            samples,
            "--design",
            "random",
            "--allow-commands",
        ]
    )
    err = capsys.readouterr().err
    assert code == 3, err
    assert f"all {samples} measurements failed" in err and "Traceback" not in err and "internal error" not in err
    assert "samples.jsonl" in err


def _server(answer: bytes | None):
    """A plain TCP server on 127.0.0.1 that is not a Dask scheduler (silent, or answering junk)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []

    def accept():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if answer:
                conn.sendall(answer)

    threading.Thread(target=accept, daemon=True).start()
    return server, f"tcp://127.0.0.1:{server.getsockname()[1]}"


@pytest.mark.parametrize("answer", [None, b"HTTP/1.1 200 OK\r\n\r\nnot dask\n"])
def test_a_scheduler_address_that_is_not_dask_is_refused_within_the_connect_timeout(answer):
    pytest.importorskip("distributed")
    server, address = _server(answer)
    clock = time.monotonic()
    try:
        with pytest.raises(ExecutorError if answer is None else ValueError, match="Dask scheduler"):
            with Executor(scheduler=address).map(square_chunk, [1, 2]) as stream:
                list(stream)
    finally:
        server.close()
    assert time.monotonic() - clock < CONNECT_TIMEOUT + 5


def test_the_cli_refuses_a_non_dask_scheduler_with_a_message(tmp_path, capsys):
    pytest.importorskip("distributed")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    server, address = _server(b"SSH-2.0-OpenSSH_9.6\r\n")
    try:
        code = main(["certify", str(spec), "--out", str(tmp_path / "out"), "--samples", "20", "--scheduler", address])
    finally:
        server.close()
    err = capsys.readouterr().err
    assert code in (2, 3) and "is not a Dask scheduler" in err and "Traceback" not in err


def slow_chunk(state, jobs):
    time.sleep(0.2 if jobs[0] == 0 else 30)
    return list(jobs)


def test_a_lost_scheduler_is_exit_3_naming_the_address_with_resume():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)
    address = cluster.scheduler_address
    got = []
    with pytest.raises(SchedulerLost) as caught:
        with Executor(scheduler=address, chunk_size=1).map(slow_chunk, list(range(4))) as stream:
            for indices, _ in stream:
                got += indices
                cluster.close()
    assert got == [0]
    message = str(caught.value)
    assert address in message and "--resume" in message
    from tasksolve.solver.cli.errors import classify

    assert classify(caught.value).code == 3


def test_workers_killed_by_a_chunk_are_a_lost_cluster_not_a_crash():
    distributed = pytest.importorskip("distributed")
    import dask

    from tests.solver.test_executor import dying_chunk

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster:
            with pytest.raises(SchedulerLost, match="--resume"):
                with Executor(scheduler=cluster.scheduler_address, chunk_size=1).map(dying_chunk, [1, 13]) as stream:
                    list(stream)
