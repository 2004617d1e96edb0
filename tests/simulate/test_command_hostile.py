"""Hostile programs under the command oracle (issue 25): nothing they start outlives a run, the
timeout measures the program, output is capped, and figures outside the metric's domain or orders
of magnitude away from the others are refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tasksolve.simulate.errors import CommandTimeout, MetricOutOfRange
from tasksolve.simulate.oracle import make_oracle
from tasksolve.simulate.process import run_program
from tasksolve.simulate.reaper import descendants
from tasksolve.specs import Plan
from tests.simulate.test_command import python, spec_with

ROOT = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone(pids: list[int], within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


# a program that starts a child which outlives it (and a setsid grandchild holding stdout)
LEAVER = textwrap.dedent("""
    import os, subprocess, sys
    pids = sys.argv[1]
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    grand = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
    open(pids, "w").write(f"{child.pid} {grand.pid}")
    print('{"rate": 1000.0}', flush=True)
""")


def _oracle(argv, **extra):
    settings = {"kind": "command", "command": argv, "metric": {"json": "rate"}, "repeats": 1, "timeout": "20s"}
    spec = spec_with({**settings, **extra})
    return spec, make_oracle(spec)


def test_a_child_and_a_setsid_grandchild_are_killed_and_do_not_hold_the_run(tmp_path):
    pids = tmp_path / "pids"
    spec, oracle = _oracle(python(LEAVER, str(pids)))
    clock = time.monotonic()
    m = oracle.evaluate(Plan.from_contexts(spec, [0, 1]), seed=1)
    assert m.throughput == 1000.0
    assert time.monotonic() - clock < 10  # not the 20 s timeout: the grandchild held stdout
    left = [int(p) for p in pids.read_text().split()]
    assert _gone(left), [p for p in left if _alive(p)]


def test_the_timeout_measures_the_program_and_kills_everything(tmp_path):
    pids = tmp_path / "pids"
    code = LEAVER.replace("print('{\"rate\": 1000.0}', flush=True)", "import time; time.sleep(300)")
    spec, oracle = _oracle(python(code, str(pids)), timeout="1s")
    clock = time.monotonic()
    with pytest.raises(CommandTimeout, match="ran past oracle.timeout"):
        oracle.evaluate(Plan.from_contexts(spec, [0, 1]), seed=1)
    assert time.monotonic() - clock < 10
    assert _gone([int(p) for p in pids.read_text().split()])


KILLED = textwrap.dedent("""
    import sys
    from tasksolve.simulate.process import run_program
    run_program([sys.executable, "-c", sys.argv[1]], {}, 300, 1 << 20)
""")


def test_kill_9_of_tasksolve_kills_the_measured_program(tmp_path):
    pids = tmp_path / "pids"
    program = (
        "import os, subprocess, sys, time\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], start_new_session=True)\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{g.pid}}')\n"
        "time.sleep(300)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", KILLED, program], cwd=ROOT)
    deadline = time.monotonic() + 30
    while not (pids.exists() and len(pids.read_text().split()) == 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [int(p) for p in pids.read_text().split()]
    assert all(_alive(p) for p in left)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert _gone(left), [p for p in left if _alive(p)]


def test_output_beyond_max_output_is_discarded_with_a_note():
    spec, oracle = _oracle(
        python("import sys\nfor _ in range(400): sys.stdout.write('x' * 100000 + '\\n')\nprint('{\"rate\": 5.0}')"),
        max_output="1MiB",
    )
    m = oracle.evaluate(Plan.from_contexts(spec, [0, 1]), seed=1)
    assert m.throughput == 5.0
    assert any("beyond oracle.max_output" in note for note in m.notes)
    done = run_program(["sh", "-c", "head -c 30000000 /dev/zero"], dict(os.environ), 30, 1 << 20)
    assert done.discarded["stdout"] == 30000000 - (1 << 20) and len(done.stdout) == 1 << 20


@pytest.mark.parametrize("figure", ["-5.0", "0", "1e308"])
def test_a_figure_outside_the_metric_domain_is_refused(figure):
    spec, oracle = _oracle(python(f"print('{{\"rate\": {figure}}}')"))
    with pytest.raises(MetricOutOfRange, match="must be positive|plausible"):
        oracle.evaluate(Plan.from_contexts(spec, [0, 1]), seed=1)


def test_oracle_range_is_an_explicit_domain():
    spec, oracle = _oracle(python("print('{\"rate\": 50.0}')"), range=[100, 1000])
    with pytest.raises(MetricOutOfRange, match=r"outside oracle.range \[100, 1000\]"):
        oracle.evaluate(Plan.from_contexts(spec, [0, 1]), seed=1)


def test_a_figure_orders_of_magnitude_away_is_measured_again_then_refused(tmp_path):
    counter = tmp_path / "n"
    # runs 1-4 print 1000; run 5 prints 1e9 once (kept after its re-measure gives 1000);
    # from run 7 on every run prints 1e9 (refused)
    code = textwrap.dedent(f"""
        from pathlib import Path
        p = Path({str(counter)!r}); n = int(p.read_text()) + 1 if p.exists() else 1; p.write_text(str(n))
        print('{{"rate": %s}}' % (1e9 if n == 5 or n >= 7 else 1000.0))
    """)
    spec, oracle = _oracle(python(code))
    plan = Plan.from_contexts(spec, [0, 1])
    for _ in range(4):
        assert oracle.evaluate(plan, seed=1).throughput == 1000.0
    m = oracle.evaluate(plan, seed=1)  # run 5 flagged, run 6 in line
    assert m.throughput == 1000.0 and any("flagged" in note for note in m.notes)
    with pytest.raises(MetricOutOfRange, match="orders of magnitude away"):
        oracle.evaluate(plan, seed=1)


def test_the_reaper_walks_descendants():
    me = os.getpid()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in descendants(me)
    finally:
        child.kill()
        child.wait()
