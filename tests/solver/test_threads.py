"""The library from threads: a job in a thread other than the main one runs (signal handlers are
the main thread's business), and a second job on a folder another thread's job holds is refused,
never interleaved with it."""

from __future__ import annotations

import threading

import tasksolve
from tasksolve.solver.certify.samples_file import SamplingError, acquire_lock, release_lock

OPTIONS = {"oracle_kind": "analytic", "time_limit": 3, "samples": 40, "workers": 1, "seed": 0}
CERTIFY = {"oracle_kind": "analytic", "samples": 40, "workers": 1, "seed": 0}


def _in_thread(target):
    found: dict = {}

    def body():
        try:
            found["value"] = target()
        except BaseException as exc:  # handed to the test thread
            found["error"] = exc

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(timeout=300)
    assert not thread.is_alive()
    return found


def test_the_main_job_runs_in_a_thread(tmp_path):
    """Before: CP-SAT's solve restored the signal handlers with `signal.signal`, which Python
    refuses outside the main thread (ValueError: signal only works in main thread)."""
    found = _in_thread(lambda: tasksolve.run("t2-ipfwd-intadd-x2", tmp_path / "out", **OPTIONS))
    assert "error" not in found, repr(found.get("error"))
    assert found["value"].verdict in ("proven", "certified", "best_found")
    assert (tmp_path / "out" / "certificate.json").exists()


def test_a_folder_held_by_one_thread_is_refused_to_another(tmp_path):
    key = acquire_lock(tmp_path)
    try:
        assert acquire_lock(tmp_path) == key  # the holder's own nested steps
        release_lock(key)
        found = _in_thread(lambda: acquire_lock(tmp_path))
        assert isinstance(found.get("error"), SamplingError)
        assert "another tasksolve job in this process" in str(found["error"])
    finally:
        release_lock(key)
    found = _in_thread(lambda: acquire_lock(tmp_path))  # free again: another thread may take it
    assert "error" not in found
    release_lock(found["value"])


def test_two_threads_certifying_into_one_folder_do_not_both_run(tmp_path):
    """Two jobs on one folder with force: one runs, the other is refused (exit-2 error), and the
    samples file holds one spec's records."""
    barrier = threading.Barrier(2)
    results: list = []

    def job(name):
        barrier.wait()
        try:
            results.append(("ok", tasksolve.certify(name, tmp_path / "out", force=True, **CERTIFY)))
        except SamplingError as exc:
            results.append(("refused", exc))

    threads = [threading.Thread(target=job, args=(n,)) for n in ("t2-ipfwd-intadd-x2", "t2-ipfwd-l1-x2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    # both start at the barrier and take the folder first thing; a job lasts seconds
    assert sorted(kind for kind, _ in results) == ["ok", "refused"], results
