"""`solver.stdout_guard`: stdout carries a command's result alone; what anything else prints
there, from C or from Python, goes to stderr, in the order it was printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def python(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter whose stdout is a pipe, buffered as a user's would be (no
    PYTHONUNBUFFERED: with it, a missing flush could not show)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )


def test_c_and_python_output_in_the_block_goes_to_stderr_and_the_rest_stays_on_stdout():
    # both Python's and C's stdout are block-buffered on a pipe: without the flushes, "before"
    # would follow the switch to stderr and "noise from C" would reach the real stdout at exit
    done = python(
        """
        import ctypes
        from tasksolve.solver.stdout_guard import stdout_to_stderr
        libc = ctypes.CDLL(None)
        print("before", end="")
        with stdout_to_stderr():
            libc.printf(b"noise from C\\n")
            print("noise from Python")
        print(" after")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "before after\n"
    assert "noise from C" in done.stderr and "noise from Python" in done.stderr


def test_the_result_reaches_the_real_stdout_from_inside_nested_blocks():
    # the command's block holds a solver's block: the result goes to the stdout the outer began with
    done = python(
        """
        import ctypes
        from tasksolve.solver.stdout_guard import result_stdout, stdout_to_stderr
        libc = ctypes.CDLL(None)
        with stdout_to_stderr():
            with stdout_to_stderr():
                libc.printf(b"inner noise\\n")
                with result_stdout():
                    print("result")
                libc.printf(b"more noise\\n")
            print("outer noise")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "result\n"
    assert all(text in done.stderr for text in ("inner noise", "more noise", "outer noise"))


def test_blocks_of_many_threads_interleaved_leave_stdout_where_it_was():
    # blocks that saved and restored descriptors one by one would end on a descriptor a later
    # block saved while the first was open (stderr): the counted blocks end on the real stdout
    done = python(
        """
        import random, threading, time
        from tasksolve.solver.stdout_guard import stdout_to_stderr

        def work(seed):
            rng = random.Random(seed)
            for _ in range(40):
                with stdout_to_stderr():
                    time.sleep(rng.random() / 2000)
                time.sleep(rng.random() / 4000)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("after")
        """
    )
    assert (done.returncode, done.stdout) == (0, "after\n"), done.stderr


def test_outside_a_block_the_result_goes_to_stdout_as_it_is():
    done = python(
        """
        from tasksolve.solver.stdout_guard import result_stdout
        with result_stdout():
            print("result")
        """
    )
    assert (done.returncode, done.stdout) == (0, "result\n"), done.stderr


def test_the_block_runs_where_stdout_is_closed():
    done = python(
        """
        import os, sys
        from tasksolve.solver.stdout_guard import stdout_to_stderr
        sys.stdout.flush()
        os.close(1)
        with stdout_to_stderr():
            sys.stderr.write("ran\\n")
        """
    )
    assert done.returncode == 0, done.stderr
    assert "ran" in done.stderr


def test_a_json_command_prints_its_json_alone_whatever_a_library_prints():
    # a loader that prints from C and from Python while `validate --json` runs: stdout is the
    # JSON, parsed whole; the noise is on stderr
    done = python(
        """
        import ctypes, sys
        import tasksolve.specs.kinds as kinds
        from tasksolve.solver.cli import main
        libc = ctypes.CDLL(None)
        real = kinds.load_any
        def noisy(path):
            libc.printf(b"library noise from C\\n")
            print("library noise from Python")
            return real(path)
        kinds.load_any = noisy
        sys.exit(main(["validate", "alderlake-ids", "--json"]))
        """
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["valid"] is True
    assert "library noise from C" in done.stderr and "library noise from Python" in done.stderr


def test_without_json_a_command_prints_as_before():
    done = python(
        """
        import sys
        from tasksolve.solver.cli import main
        sys.exit(main(["validate", "alderlake-ids"]))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok  alderlake-ids:")
