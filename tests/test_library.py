"""The library is the command line: `tasksolve.run` and ``tasksolve run --deterministic`` give the
same certificate, and the README's example runs as another tool would run it -- from a folder
whose own `specs.py`, `solver.py`, `simulate.py` and `evt.py` must not shadow tasksolve's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import tasksolve
from tasksolve.specs.files import json_text

ROOT = Path(__file__).resolve().parents[1]
SPEC = "t2-ipfwd-intadd-x2"
OPTIONS = {"oracle_kind": "analytic", "samples": 100, "time_limit": 5, "workers": 1, "seed": 3}
SHADOWS = ("specs", "solver", "simulate", "evt")


def _without_timings_and_paths(data):
    """`data` without wall times (``wall_time``, ``*seconds*``) and file paths (``file``)."""
    if isinstance(data, dict):
        return {
            k: _without_timings_and_paths(v)
            for k, v in data.items()
            if k not in ("wall_time", "file") and "seconds" not in k
        }
    if isinstance(data, list):
        return [_without_timings_and_paths(v) for v in data]
    return data


def test_the_library_and_the_command_line_give_the_same_certificate(tmp_path):
    command = [sys.executable, "-m", "tasksolve", "run", SPEC, "--out", str(tmp_path / "cli"), "--deterministic"]
    command += ["--oracle", "analytic", "--samples", "100", "--time-limit", "5", "--workers", "1", "--seed", "3"]
    done = subprocess.run(command + ["--json"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    printed = json.loads(done.stdout)

    result = tasksolve.run(SPEC, tmp_path / "lib", deterministic=True, **OPTIONS)

    cli = json.loads((tmp_path / "cli" / "certificate.json").read_text())
    lib = json.loads((tmp_path / "lib" / "certificate.json").read_text())
    assert cli["samples"]["file"] != lib["samples"]["file"]  # the paths differ, nothing else may
    assert _without_timings_and_paths(cli) == _without_timings_and_paths(lib)
    as_written = json.loads(json_text(result.certificate_dict()))  # strict JSON: infinities as "inf"
    assert _without_timings_and_paths(lib) == _without_timings_and_paths(as_written)
    assert printed["verdict"] == result.verdict == lib["verdict"] and (done.returncode == 0) == result.positive
    assert result.summary().splitlines()[0].startswith(result.verdict.replace("_", " ") + ":")
    assert set(result.to_dict()["files"]) >= {"plan.yaml", "certificate.json", "samples.jsonl", "report.html"}


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Use as a library", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_runs_beside_shadowing_modules(tmp_path):
    example = _readme_example()
    assert example in (ROOT / "docs" / "design.md").read_text()  # the design shows the same code
    for name in SHADOWS:  # each leaves a mark and fails when imported
        (tmp_path / f"{name}.py").write_text(
            f"open({str(tmp_path / (name + '.imported'))!r}, 'w').close()\n"
            f"raise ImportError('the folder of the example shadowed `{name}`')\n"
        )
    check = "\nimport sys as _sys\nprint('TASKSOLVE_FILE=' + tasksolve.__file__)\n"
    check += f"print('SHADOWED=' + ','.join(m for m in {SHADOWS!r} if m in _sys.modules))\n"
    (tmp_path / "example.py").write_text(example + check)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.glob("*.imported"))
    lines = dict(line.split("=", 1) for line in done.stdout.splitlines() if line.startswith(("TASKSOLVE_", "SHADOW")))
    assert lines["SHADOWED"] == ""
    installed = Path(lines["TASKSOLVE_FILE"]).resolve()
    assert tmp_path.resolve() not in installed.parents
    assert installed == Path(tasksolve.__file__).resolve()  # the copy the tests import: installed
    assert installed in {ROOT / "api" / "__init__.py"} or "site-packages" in installed.parts  # editable or not
    verdict = json.loads((tmp_path / "tasksolve-out" / "certificate.json").read_text())["verdict"]
    assert done.stdout.startswith(verdict.replace("_", " ") + ":")
