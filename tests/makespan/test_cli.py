"""`tasksolve makespan`: JSON output, human output, and one-line errors with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasksolve.solver.cli import main

GRAPH = """\
4
0 0 0
1 3 1 0
2 2 1 0
3 4 1 1
4 1 2 2 3
5 0 1 4
"""


@pytest.fixture
def stg(tmp_path: Path) -> Path:
    path = tmp_path / "small.stg"
    path.write_text(GRAPH)
    return path


def test_json_keys(stg: Path, capsys) -> None:
    assert main(["makespan", str(stg), "--processors", "2", "--json", "--time-limit", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("makespan", "lower_bound", "status", "schedule", "processors", "graph", "time_limit"):
        assert key in out
    assert out["makespan"] == 8 and out["status"] == "OPTIMAL" and out["processors"] == 2
    assert out["graph"] == str(stg) and out["time_limit"] == 5
    assert {tuple(sorted(row)) for row in out["schedule"]} == {("end", "processor", "start", "task")}
    assert sorted(row["task"] for row in out["schedule"]) == ["1", "2", "3", "4"]


def test_comm_delay_json(stg: Path, capsys) -> None:
    assert main(["makespan", str(stg), "-P", "2", "--uniform-delay", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # 1 then 3 on one processor, 2 on the other ends at 2, so 4 can start at 2 + 5 = 7
    assert out["comm_delays"] is True and out["makespan"] == 8
    assert main(["makespan", str(stg), "-P", "2", "--uniform-delay", "7", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["makespan"] == 10  # one processor is best


def test_human_output(stg: Path, capsys) -> None:
    assert main(["makespan", str(stg), "-P", "2"]) == 0
    out = capsys.readouterr().out
    assert "makespan 8 OPTIMAL" in out and "P0 |" in out and "P1 |" in out


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("4\n0 0 0\n1 x 1 0\n", [], "bad.stg:3: field 2 is 'x'"),
        ("", [], "bad.stg: empty file"),
        (GRAPH, ["-P", "0"], "--processors must be at least 1"),
        (GRAPH, ["--time-limit", "0"], "'--time-limit': a duration must be positive"),
        (GRAPH, ["--app", "x"], "--app applies only to spec files"),
    ],
)
def test_bad_input_exit_2(tmp_path: Path, capsys, content: str, args: list[str], message: str) -> None:
    path = tmp_path / "bad.stg"
    path.write_text(content)
    argv = ["makespan", str(path)] + (args if "-P" in args else ["-P", "2"] + args)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err.replace("\n", "")
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_missing_file_and_spec(tmp_path: Path, capsys) -> None:
    assert main(["makespan", str(tmp_path / "none.stg"), "-P", "2"]) == 2
    assert "cannot read" in capsys.readouterr().err
    spec = tmp_path / "app.yaml"
    spec.write_text("{}\n")
    code = main(["makespan", str(spec), "-P", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "missing `tasksolve: 1`" in err and "Traceback" not in err


def test_help(capsys) -> None:
    assert main(["makespan", "--help"]) == 0
    assert "--processors" in capsys.readouterr().out


def test_a_builtin_example_name_like_every_command(capsys) -> None:
    from tasksolve.solver.makespan.from_spec import graph_from_spec
    from tasksolve.specs.loader import builtin_path

    assert main(["makespan", "xeon-lata-dag", "--processors", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["graph"] == "xeon-lata-dag" and out["status"] == "OPTIMAL"
    assert out["makespan"] == graph_from_spec(builtin_path("", "xeon-lata-dag")).critical_path_length()
    assert main(["makespan", "xeon-lata-dag", "-P", "1", "--app", "dag", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["makespan"] == 5960  # one processor: all the work


def test_unknown_application_of_an_example(capsys) -> None:
    assert main(["makespan", "xeon-lata-dag", "-P", "2", "--app", "dga"]) == 2
    err = capsys.readouterr().err
    assert "no application `dga`" in err and "did you mean `dag`" in err and "Traceback" not in err


def test_dash_p_is_not_processors(stg: Path, capsys) -> None:
    # -p means --plan elsewhere; here the processors are --processors or -P
    assert main(["makespan", str(stg), "-p", "2"]) == 2
    assert "No such option" in capsys.readouterr().err


def test_seed_and_workers_follow_the_shared_options(stg: Path, capsys) -> None:
    import os

    assert main(["makespan", str(stg), "-P", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["seed"] == 0 and out["workers"] == (os.cpu_count() or 1)  # 0/unset: every core
    assert main(["makespan", str(stg), "-P", "2", "--seed", "-3"]) == 2
    assert "--seed" in capsys.readouterr().err


def test_a_failing_solver_exits_3_without_traceback(stg: Path, capsys, monkeypatch) -> None:
    import tasksolve.solver.makespan as makespan_module

    def broken(*args, **kwargs):
        raise RuntimeError("CP-SAT answered MODEL_INVALID for a feasible model")

    monkeypatch.setattr(makespan_module, "solve_makespan", broken)
    for extra in ([], ["--json"]):
        assert main(["makespan", str(stg), "-P", "2", *extra]) == 3
        captured = capsys.readouterr()
        assert "MODEL_INVALID" in captured.err and "Traceback" not in captured.err
        assert "internal error" not in captured.err
        if extra:
            assert json.loads(captured.out)["error"]["exit_code"] == 3
