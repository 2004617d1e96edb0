"""One CLI vocabulary (issue 22): one meaning per option name, help that reads as sentences,
plans that remember their spec, SIGTERM 143, progress on stderr only."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tasksolve.solver.cli import app, main
from tasksolve.specs import Plan, load_spec
from tasksolve.specs.loader import builtin_path


def _commands() -> list[list[str]]:
    """Every command and sub-command of the application, as its words."""
    from typer.main import get_command

    found = []
    for name, command in get_command(app).commands.items():
        subcommands = getattr(command, "commands", None)
        found += [[name, sub] for sub in subcommands] if subcommands else [[name]]
    return found


COMMANDS = _commands()


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _help(capsys, monkeypatch, *command: str) -> str:
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(capsys, *command, "--help")
    assert code == 0
    return out


def _cut(text: str) -> list[str]:
    """Lines that end in a word cut short by ``...`` (Click's truncated one-line help)."""
    return [line for line in text.splitlines() if re.search(r"[a-z,]\.\.\.$", line) and "Usage:" not in line]


def _options(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", text.split("Options:", 1)[-1]))


def test_the_list_of_commands_is_complete():
    expected = {"validate", "schema", "examples", "count", "certify", "run", "solve", "simulate", "pipeline"}
    expected |= {"makespan", "evt", "pin", "calibrate", "topology host", "topology import", "topology show"}
    assert expected <= {" ".join(c) for c in COMMANDS}


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_reads_as_sentences(capsys, monkeypatch, command):
    """No type metavar on flags, no line wider than the terminal, no sentence cut by `...`."""
    text = _help(capsys, monkeypatch, *command)
    assert "<bool>" not in text
    assert max(len(line) for line in text.splitlines()) <= 100
    assert not _cut(text)


def test_the_command_list_shows_each_first_paragraph_whole(capsys, monkeypatch):
    text = _help(capsys, monkeypatch)
    assert not _cut(text)
    listing = " ".join(text.split("Commands:", 1)[1].split())
    assert "Group a task graph into pipeline stages, threads and replicas, and map them onto the processor: " in listing


def test_out_always_names_a_directory(capsys, monkeypatch):
    """`--out` is a directory wherever it is shown; a command that writes one file says --output."""
    directories, files = set(), set()
    for command in COMMANDS:
        text = _help(capsys, monkeypatch, *command)
        block = " ".join(text.split("Options:", 1)[-1].split())
        for match in re.finditer(r"--out <path> (.{0,60})", block):
            assert match.group(1).startswith("Directory"), (command, match.group(0))
            directories.add(" ".join(command))
        if "--output" in _options(text):
            assert "--output FILE Write" in block
            files.add(" ".join(command))
    assert {"run", "certify", "solve", "pipeline"} <= directories
    assert {"schema", "pin", "calibrate", "topology host", "topology import"} <= files


@pytest.mark.parametrize("command", [["schema"], ["topology", "host"]])
def test_output_writes_the_file_and_old_out_still_works_with_a_warning(capsys, tmp_path, command):
    if command[0] == "topology" and not Path("/sys/devices/system/cpu").is_dir():
        pytest.skip("no /sys on this machine")
    code, _, err = run(capsys, *command, "--output", str(tmp_path / "a.txt"))
    assert code == 0, err
    assert (tmp_path / "a.txt").stat().st_size > 0 and "deprecated" not in err
    code, _, err = run(capsys, *command, "--out", str(tmp_path / "b.txt"))
    assert code == 0 and (tmp_path / "b.txt").read_text() == (tmp_path / "a.txt").read_text()
    assert "warning: --out FILE is deprecated here; use --output FILE" in err


def test_solve_random_plans_and_the_old_samples_spelling(capsys, monkeypatch):
    """`--samples` is the certificate's size (run, certify); solve's random draw is --random-plans."""
    from tasksolve.solver.binding import compare

    seen = []

    def stop(spec, methods, **kwargs):
        seen.append(kwargs["samples"])
        raise compare.Infeasible("stopped by the test")

    monkeypatch.setattr(compare, "solve", stop)
    assert main(["solve", "t2-ipfwd-intadd-x2", "--random-plans", "123"]) == 2
    assert main(["solve", "t2-ipfwd-intadd-x2"]) == 2
    code, _, err = run(capsys, "solve", "t2-ipfwd-intadd-x2", "--samples", "77")
    assert code == 2 and "`solve --samples` is deprecated here; use --random-plans" in err
    assert seen == [123, 5000, 77]


def test_solve_oracle_help_lists_every_oracle(capsys, monkeypatch):
    from tasksolve.specs.oracles import ORACLES

    text = " ".join(_help(capsys, monkeypatch, "solve").split())
    for kind in ORACLES:
        assert f"{kind}:" in text.split("--oracle", 1)[1].split("--random-plans", 1)[0]
    assert "--random-plans N" in text and "--samples" not in text


# ------------------------------------------------------------------ plans remember their spec
def _spec_in(folder: Path) -> Path:
    folder.mkdir(parents=True)
    text = builtin_path("", "t2-ipfwd-intadd-x2").read_text().replace("name: t2-ipfwd-intadd-x2", "name: mine")
    (folder / "mine.yaml").write_text(text)
    return folder / "mine.yaml"


def test_pin_finds_the_spec_of_a_plan_written_by_solve(capsys, tmp_path, monkeypatch):
    spec_file = _spec_in(tmp_path / "specs")
    out = tmp_path / "results"
    args = ["solve", str(spec_file), "--method", "random", "--oracle", "analytic", "--random-plans", "50"]
    code, _, err = run(capsys, *args, "--workers", "1", "--out", str(out))
    assert code == 0, err
    plan = Plan.model_validate(__import__("yaml").safe_load((out / "plan.yaml").read_text()))
    assert plan.spec == "mine" and plan.spec_file == "../specs/mine.yaml"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # resolved against the plan's folder, not the working directory
    code, text, err = run(capsys, "pin", str(out / "plan.yaml"), "-f", "taskset")
    assert code == 0, err
    threads = len(load_spec(spec_file).threads)  # the launcher's table: one "thread i:" line each
    assert len(re.findall(r"^#   thread \d+: ", text, re.M)) == threads and "taskset -cp" in text


def test_a_plan_of_a_builtin_records_its_name_and_old_plans_still_load(tmp_path):
    spec = load_spec("t2-ipfwd-intadd-x2")
    plan = Plan.from_contexts(spec, spec.usable_contexts[: len(spec.threads)])
    plan.save(tmp_path / "plan.yaml", spec)
    from tasksolve.specs.plan import load_plan

    loaded = load_plan(tmp_path / "plan.yaml", spec)
    assert loaded.spec_file == "t2-ipfwd-intadd-x2"
    assert loaded.resolve_spec_file(tmp_path / "plan.yaml") == "t2-ipfwd-intadd-x2"
    plan.save(tmp_path / "old.yaml")  # without the spec: as plans were written before
    old = load_plan(tmp_path / "old.yaml", spec)
    assert old.spec_file is None and old.resolve_spec_file(tmp_path / "old.yaml") is None
    assert old.bindings == loaded.bindings


# ------------------------------------------------------------------ signals and streams
def _cli(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tasksolve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        **kwargs,
    )


def _wait_for(path: Path, timeout: float = 120.0) -> None:
    """Until the run has written its first measurement (its SIGTERM handler is in place)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and len(path.read_text().splitlines()) >= 2:
            return
        time.sleep(0.2)
    raise AssertionError(f"{path} never got a measurement")


def test_sigterm_exits_143_and_keeps_finished_work(tmp_path):
    out = tmp_path / "out"
    proc = _cli("certify", "t2-ipfwd-intadd-x2", "--samples", "5000", "--workers", "1", "--out", str(out))
    _wait_for(out / "samples.jsonl")
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr and "--resume" in stderr
    assert "sampling" not in stdout  # the progress bar went to stderr
    assert len((out / "samples.jsonl").read_text().splitlines()) >= 2


def test_progress_goes_to_stderr_only_when_not_interactive(tmp_path):
    """Output piped (not a terminal): stdout holds the results, every progress line is on stderr."""
    out = tmp_path / "out"
    args = ["--samples", "60", "--workers", "1", "--compare-samples", "0", "--out", str(out)]
    proc = _cli("certify", "t2-ipfwd-intadd-x2", "--oracle", "analytic", *args)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode in (0, 1), stderr
    assert "sampling" in stderr and "sampling" not in stdout
    proc = _cli("solve", "t2-ipfwd-intadd-x2", "--oracle", "analytic", "--random-plans", "50", "--workers", "1")
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert " s)" in stderr  # the finished phases, with their time
    assert not re.search(r"\(\d+\.\d s\)", stdout)
    json.dumps(stdout)  # plain text
