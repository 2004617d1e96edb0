"""The CLI's one error path: exit codes, JSON errors, internal errors, SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tasksolve.solver.cli import errors, main


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_bug_exits_70_with_where_to_report_and_no_traceback(capsys, monkeypatch):
    from tasksolve import specs

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(specs, "load_spec", broken)
    code, out, err = run(capsys, "count", "t2-ipfwd-intadd-x2")
    assert code == errors.EXIT_INTERNAL
    assert "Traceback" not in out + err
    assert "internal error" in err and "report it" in err
    crash = Path(err.split("the traceback is in ")[1].split(";")[0])
    try:
        assert "RuntimeError: boom" in crash.read_text()
    finally:
        crash.unlink()


def test_json_errors_are_json_on_stdout(capsys):
    code, out, err = run(capsys, "solve", "t2-ipfwd-intadd-x2", "--method", "nope", "--json")
    assert code == 2
    data = json.loads(out)
    assert data["error"]["exit_code"] == 2
    assert "unknown method `nope`" in data["error"]["message"]
    assert "unknown method" in err


def test_usage_errors_exit_2_without_traceback(capsys):
    for args in (["bogus"], ["validate"], ["solve", "--workers", "x", "t2-ipfwd-intadd-x2"]):
        code, out, err = run(capsys, *args)
        assert code == 2, args
        assert "Traceback" not in out + err


def test_exit_codes_of_the_error_table():
    from tasksolve.simulate.errors import InvalidPlanError, OracleError
    from tasksolve.solver.errors import Infeasible, SolverFailed

    assert errors.classify(Infeasible("x")).code == 2
    assert errors.classify(SolverFailed("x")).code == 3
    assert errors.classify(OracleError("x")).code == 3
    assert errors.classify(InvalidPlanError("x")).code == 2
    assert errors.classify(PermissionError(13, "Permission denied", "/x/y")).message == "/x/y: Permission denied"
    assert errors.classify(KeyboardInterrupt()).code == 130
    assert errors.classify(errors.Terminated()).code == 143
    assert errors.classify(ValueError("a bug")).code == errors.EXIT_INTERNAL


def test_sigterm_is_handled_like_ctrl_c(tmp_path):
    """A SIGTERM during a long command ends it with a message and exit 143, not a traceback."""
    script = (
        "import sys, time\n"
        "from tasksolve.solver.cli import main, common\n"
        "def slow(*a, **k):\n"
        "    print('ready', flush=True); time.sleep(60)\n"
        "common.load_spec_or_fail = slow\n"
        "import tasksolve.solver.cli.spec_commands as s\n"
        "s.load_spec_or_fail = slow\n"
        "sys.exit(main(['count', 't2-ipfwd-intadd-x2']))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.2)
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == errors.EXIT_TERMINATED, err
    assert "Traceback" not in err and "terminated" in err


def test_an_escape_in_the_output_path_is_shown_escaped_never_raw(tmp_path, capsys):
    out = tmp_path / "o\x1b[31mred"
    code = main(["solve", "t2-ipfwd-l1-x2", "--out", str(out), "--time-limit", "2", "--workers", "1"])
    printed = capsys.readouterr()
    assert code in (0, 1) and (out / "plan.yaml").is_file()
    text = printed.out + printed.err
    assert "\x1b" not in text
    assert "o\\x1b[31mred" in text.replace("\n", "")  # a long path may wrap
