"""`tasksolve evt` through the CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tasksolve.solver.cli import main


@pytest.fixture(scope="module")
def sample_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x = stats.beta(2, 5).rvs(3000, random_state=np.random.default_rng(1))
    path = tmp_path_factory.mktemp("evt") / "throughput.csv"
    lines = ["plan,throughput"] + [f"p{i},{v:.17g}" for i, v in enumerate(x)]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["evt", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_text_output(capsys: pytest.CaptureFixture[str], sample_file: Path) -> None:
    code, out, err = run(capsys, str(sample_file), "--column", "throughput", "--gof-bootstrap", "20")
    assert code == 0 and err == ""
    assert "optimum" in out and "best observed" in out and "95% confidence" in out


def test_json_output(capsys: pytest.CaptureFixture[str], sample_file: Path) -> None:
    code, out, _ = run(
        capsys, str(sample_file), "--column", "throughput", "--json", "--confidence", "0.9", "--gof-bootstrap", "0"
    )
    assert code == 0
    d = json.loads(out)
    assert {"n", "best_observed", "threshold", "exceedances", "xi", "sigma", "optimum", "gap", "gof", "flags"} <= set(d)
    assert d["n"] == 3000 and d["optimum"]["confidence"] == 0.9
    assert d["optimum"]["lower"] <= d["optimum"]["estimate"] <= d["optimum"]["upper"]
    assert {"point", "worst"} <= set(d["gap"])


def test_minimize_and_threshold(capsys: pytest.CaptureFixture[str], sample_file: Path) -> None:
    code, out, _ = run(
        capsys,
        str(sample_file),
        "--column",
        "throughput",
        "--json",
        "--minimize",
        "--threshold",
        "0.05",
        "--gof-bootstrap",
        "0",
    )
    assert code == 0
    d = json.loads(out)
    assert d["minimize"] and d["threshold"] == 0.05
    assert d["optimum"]["upper"] <= d["best_observed"]


def test_infinite_limit_is_null_with_a_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "heavy.txt"
    np.savetxt(path, stats.pareto(2.0).rvs(2000, random_state=np.random.default_rng(0)))
    code, out, _ = run(capsys, str(path), "--json", "--gof-bootstrap", "0")
    assert code == 0
    d = json.loads(out)
    assert d["optimum"]["upper"] is None and "heavy_tail" in d["flags"]
    assert "infinity" in d["optimum"]["nulls"]["upper"]


def test_plots(capsys: pytest.CaptureFixture[str], sample_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "plots"
    code, out, _ = run(
        capsys, str(sample_file), "--column", "throughput", "--plots", str(target), "--gof-bootstrap", "0"
    )
    assert code == 0
    names = sorted(p.name for p in target.iterdir())
    assert len(names) == 8 and {n.rsplit(".", 1)[1] for n in names} == {"png", "svg"}
    assert all((target / n).stat().st_size > 1000 for n in names)


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for option in ("--column", "--minimize", "--confidence", "--threshold", "--max-fraction", "--plots", "--json"):
        assert option in out


BAD_FILES = {
    "empty.txt": "",
    "constant.txt": "3.5\n" * 50,
    "few.txt": "".join(f"{i}\n" for i in range(19)),
    "nan.txt": "".join(f"{i}\n" for i in range(30)) + "nan\n",
    "inf.txt": "".join(f"{i}\n" for i in range(30)) + "inf\n",
    "text.csv": "t\n" + "".join(f"{i}\n" for i in range(30)) + "fast\n",
    "nocolumn.csv": "a,b\n1,2\n",
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_input_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str) -> None:
    """Acceptance: constant samples, < 20 points, NaN/inf, text in the column, an empty file:
    one clear error each, exit code 2."""
    path = tmp_path / name
    path.write_text(BAD_FILES[name])
    code, out, err = run(capsys, str(path))
    assert code == 2
    assert "Traceback" not in err + out
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("error:")


@pytest.mark.parametrize(
    "args",
    [
        ["--confidence", "1.5"],
        ["--confidence", "abc"],
        ["--threshold", "high"],
        ["--max-fraction", "0"],
        ["--gof-bootstrap", "-3"],
        ["--gof-bootstrap", "x"],
        ["--column", "nope"],
        ["--threshold", "1e9"],
    ],
)
def test_bad_options_are_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], sample_file: Path, args: list[str]
) -> None:
    code, out, err = run(capsys, str(sample_file), *(args if "--column" in args else ["--column", "throughput", *args]))
    assert code == 2
    assert "Traceback" not in err + out and len(err.strip().splitlines()) == 1


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, str(tmp_path / "nope.csv"))
    assert code == 2 and "no such file" in err and len(err.strip().splitlines()) == 1
