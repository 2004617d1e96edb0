"""Every ``--time-limit`` reads seconds or a duration with its unit (`specs.units.parse_seconds`,
as a spec's ``search.time_limit``); bad text is one message naming the option, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.main import get_command

from tasksolve.solver.cli import app, main
from tasksolve.specs.units import parse_seconds


def _time_limits() -> list[tuple[str, object]]:
    """(name, command) for every command and sub-command with a ``--time-limit``."""
    found = []
    for name, command in get_command(app).commands.items():
        for sub_name, sub in (getattr(command, "commands", None) or {name: command}).items():
            if any("--time-limit" in getattr(param, "opts", ()) for param in sub.params):
                found.append((sub_name, sub))
    return found


TIME_LIMITS = _time_limits()


def test_the_commands_with_a_time_limit_are_found():
    assert {"run", "certify", "solve", "pipeline", "makespan"} <= {name for name, _ in TIME_LIMITS}


@pytest.mark.parametrize(("name", "command"), TIME_LIMITS, ids=[name for name, _ in TIME_LIMITS])
@pytest.mark.parametrize("text", ["60", "60s", "2min", "500ms", "1.5", "1h"])
def test_every_time_limit_reads_units(name, command, text):
    ctx = command.make_context(name, ["--time-limit", text], resilient_parsing=True)
    assert ctx.params["time_limit"] == pytest.approx(parse_seconds(text))


@pytest.mark.parametrize("command", ["run", "certify", "solve", "pipeline"])
@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("6x0s", "expected a duration"),
        ("5cycles", "unknown unit `cycles`"),
        ("0", "must be positive"),
        ("50ms", "at least 0.1s"),
    ],
)
def test_bad_text_names_the_option_and_exits_2(capsys, command, text, why):
    assert main([command, "t2-ipfwd-intadd-x2", "--time-limit", text]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "'--time-limit'" in err and why in err and "Traceback" not in err


def test_a_duration_reaches_the_solver(tmp_path: Path, capsys):
    """``--time-limit 500ms`` is CP-SAT's 0.5 s (makespan prints the limit it was given)."""
    graph = tmp_path / "g.stg"
    graph.write_text("2\n0 0 0\n1 3 1 0\n2 2 1 1\n3 0 1 2\n")
    assert main(["makespan", str(graph), "-P", "2", "--time-limit", "500ms", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["time_limit"] == 0.5
