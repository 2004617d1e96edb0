"""What `tasksolve run` prints, read as a person at a terminal reads it: the answer first (the
verdict's sentence and the plan's value within the first 12 non-empty lines, at 80 and at 100
columns), `--quiet` prints just the answer, and no figure carries more than four significant digits
(a half-width printed as ``0.00000001174 pps`` or a time limit as ``57.1698s`` widened the table
and said nothing)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

FIGURE = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.]*[/\w]*\.(?:yaml|json|html|txt|jsonl))")


def _run(out, columns: int, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "tasksolve.solver.cli", "run", "t2-ipfwd-l1-x2", "--out", str(out), *extra]
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


def _significant(number: str) -> int:
    return len(number.replace(".", "").lstrip("0"))


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    narrow = _run(out, 80)
    wide = _run(out, 100, "--resume")
    quiet = _run(out, 100, "--resume", "--quiet")
    tight = _run(out, 60, "--resume")
    return narrow, wide, quiet, tight


@pytest.mark.parametrize("which", [0, 1])
def test_the_answer_comes_first(printed, which):
    result = printed[which]
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    head = "\n".join(lines[:12])
    assert re.search(r"^proven: the plan \(\d\.\d{3} Mpps\)", head, re.M), head
    assert re.search(r"^plan: \d\.\d{3} Mpps on the simulation", head, re.M), head
    assert "verdict: proven (exit 0" in head
    # the gain over the pinning a person would otherwise use (the default compares the policies)
    assert re.search(r"^the cpsat plan: \+\d+\.\d% over the best pinning policy, [\w-]+ \(", head, re.M), head
    # the table and the tree come after the answer
    first_table = next(i for i, line in enumerate(lines) if "method" in line and "measured" in line)
    assert first_table > next(i for i, line in enumerate(lines) if line.startswith("verdict:"))


def test_quiet_prints_the_answer_alone(printed):
    quiet, wide = printed[2], printed[1]
    assert quiet.returncode == 0, quiet.stderr
    assert "method" not in quiet.stdout and "chosen plan" not in quiet.stdout
    assert quiet.stdout.splitlines()[0] == wide.stdout.splitlines()[0]
    assert len([line for line in quiet.stdout.splitlines() if line.strip()]) <= 8


def test_a_terminal_narrower_than_the_table_gets_one_line_per_method(printed):
    """At 60 columns the table would cut every figure (``3.966 M…``): the comparison comes as one
    line per method instead, every figure whole."""
    tight = printed[3]
    assert tight.returncode == 0, tight.stderr
    assert "…" not in tight.stdout and "┃" not in tight.stdout
    assert re.search(r"^cpsat top \d+: measured \d\.\d{3} Mpps \(model \d\.\d{3} Mpps\)", tight.stdout, re.M)
    assert max(len(line) for line in tight.stdout.splitlines()) <= 60


@pytest.mark.parametrize("which", [0, 1])
def test_no_figure_has_more_than_four_significant_digits(printed, which):
    text = printed[which].stdout
    noisy = [number for number in FIGURE.findall(text) if _significant(number) > 4]
    assert not noisy, noisy
    assert max(len(line) for line in text.splitlines()) <= (80, 100)[which]
