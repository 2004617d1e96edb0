"""Programs run only when asked, and are the ones asked (`solver.cli.common.chosen_oracle`,
`simulate.command.resolve_program`, `program_identity`).

A spec whose ``oracle.kind`` is ``command`` names a program; opening such a spec from elsewhere
must not run it: every command that measures (simulate, solve, certify, run, calibrate, pipeline)
refuses with exit 2, naming the program, unless the command line says ``--allow-commands`` or
``--oracle command``.  The program is then the spec's own: a relative argv[0] with a folder part
is taken from the spec's folder, and a samples file's header records its resolved path and the
SHA-256 of its content.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tasksolve.simulate.command import CommandOracle, program_identity, resolve_program
from tasksolve.solver.cli import main
from tasksolve.specs import load_spec
from tests.simulate.test_command import TOPOLOGY

PLAN = 'bindings: {"spin#0.A": core1.strand0, "spin#0.B": core0.strand1}\n'


def _program(folder: Path, marker: Path) -> Path:
    """An executable script in `folder` that leaves `marker` behind and prints a figure."""
    script = folder / "prog"
    script.write_text(f"#!{sys.executable}\nopen({str(marker)!r}, 'w').write('ran')\nprint('rate=250')\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def _spec(folder: Path, command: list[str]) -> Path:
    oracle = {"kind": "command", "command": command, "metric": {"regex": "rate=([-+0-9.eE]+)"}, "repeats": 1}
    path = folder / "spec.yaml"
    path.write_text(TOPOLOGY + "oracle: " + json.dumps(oracle) + "\n")
    (folder / "plan.yaml").write_text(PLAN)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "{spec}", "--plan", "{plan}"],
        ["solve", "{spec}", "--method", "random", "--random-plans", "5"],
        ["certify", "{spec}", "--samples", "20", "--out", "{out}"],
        ["run", "{spec}", "--samples", "20", "--out", "{out}"],
        ["pipeline", "{spec}"],
    ],
    ids=lambda a: a[0],
)
def test_a_spec_s_program_does_not_run_unasked(argv, tmp_path, capsys):
    marker = tmp_path / "ran"
    spec = _spec(tmp_path, [str(_program(tmp_path, marker))])
    filled = [a.format(spec=spec, plan=tmp_path / "plan.yaml", out=tmp_path / "out") for a in argv]
    assert main(filled) == 2
    err = capsys.readouterr().err
    assert "oracle.kind is command" in err and str(tmp_path / "prog") in err and "--allow-commands" in err
    assert not marker.exists()  # nothing ran
    assert not (tmp_path / "out").exists()  # nothing written


def test_asked_on_the_command_line_it_runs(tmp_path, capsys):
    marker = tmp_path / "ran"
    spec = _spec(tmp_path, [str(_program(tmp_path, marker))])
    plan = str(tmp_path / "plan.yaml")
    assert main(["simulate", str(spec), "--plan", plan, "--allow-commands"]) == 0
    assert marker.exists() and "250" in capsys.readouterr().out
    marker.unlink()
    assert main(["simulate", str(spec), "--plan", plan, "--oracle", "command"]) == 0  # said explicitly
    assert marker.exists()


def test_validate_says_which_program_the_spec_would_run(tmp_path, capsys):
    marker = tmp_path / "ran"
    spec = _spec(tmp_path, ["./prog", "--fast"])
    _program(tmp_path, marker)
    assert main(["validate", str(spec)]) == 0
    out = capsys.readouterr().out
    assert f"runs the program {tmp_path / 'prog'}" in out and "--allow-commands" in out
    assert not marker.exists()


def test_a_relative_program_is_the_spec_folder_s_from_anywhere(tmp_path, monkeypatch, capsys):
    """``./prog`` in a spec under spec/ runs spec/prog even when tasksolve starts elsewhere, where a
    ``./prog`` of another folder would otherwise run."""
    home, elsewhere = tmp_path / "spec", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    ours, theirs = home / "ran", elsewhere / "ran"
    _program(home, ours)
    _program(elsewhere, theirs)
    spec = _spec(home, ["./prog"])
    monkeypatch.chdir(elsewhere)
    assert resolve_program(load_spec(spec), "./prog") == str(home / "prog")
    assert main(["simulate", str(spec), "--plan", str(home / "plan.yaml"), "--allow-commands"]) == 0
    assert ours.exists() and not theirs.exists()
    assert resolve_program(load_spec(spec), "python3") == "python3"  # a bare name: PATH, when run
    assert resolve_program(load_spec(spec), "/bin/true") == "/bin/true"


def test_the_samples_header_names_the_program_and_its_content(tmp_path):
    marker = tmp_path / "ran"
    script = _program(tmp_path, marker)
    spec = load_spec(_spec(tmp_path, ["./prog"]))
    first = CommandOracle.identity(spec)["program"]
    assert first["path"] == str(script.resolve()) and len(first["sha256"]) == 64
    script.write_text(script.read_text() + "# another build\n")
    second = program_identity(spec)["program"]
    assert second["path"] == first["path"] and second["sha256"] != first["sha256"]
    os.unlink(script)
    assert program_identity(spec)["program"]["sha256"] is None  # not there (yet): no hash, still named


def test_resume_refuses_the_measurements_of_another_program(tmp_path, capsys):
    marker = tmp_path / "ran"
    script = _program(tmp_path, marker)
    spec = _spec(tmp_path, ["./prog"])
    out = tmp_path / "out"
    args = ["certify", str(spec), "--samples", "20", "--design", "random", "--out", str(out), "--allow-commands"]
    assert main(args) in (0, 1), capsys.readouterr().err
    script.write_text(script.read_text() + "# rebuilt\n")
    assert main([*args, "--resume"]) == 2
    assert "program" in capsys.readouterr().err
