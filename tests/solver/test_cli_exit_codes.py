"""The exit code that ``run --help`` and ``certify --help`` (and docs/design.md, "Errors and exit
codes") give each verdict is the one the command returns: the verdict's code in
`solver.certify.verdict.VERDICTS`, through the command's own path to its exit."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from tasksolve.solver.certify.certificate import Certificate
from tasksolve.solver.certify.verdict import VERDICTS
from tasksolve.solver.cli import main
from tasksolve.solver.job import JobResult

ROOT = Path(__file__).resolve().parents[2]
SPEC = "t2-ipfwd-intadd-x2"


def _by_verdict(text: str, positive: str, negative: str) -> dict[str, int]:
    """Each verdict named after `positive` (code 0) and `negative` (code 1) in `text`."""
    found = re.search(
        re.escape(positive) + r" \(([^)]*)\)" + re.escape(negative) + r" \(([^)]*)\)", " ".join(text.split())
    )
    assert found, f"no '{positive} (...){negative} (...)' in the text"
    return {name.strip(" `"): code for code, names in ((0, found[1]), (1, found[2])) for name in names.split(",")}


def _help(capsys, command: str) -> dict[str, int]:
    assert main([command, "--help"]) == 0
    return _by_verdict(capsys.readouterr().out, "Exit code 0 when the verdict is positive", ", 1 when it is negative")


@pytest.mark.parametrize("command", ["run", "certify"])
def test_help_gives_every_verdict_its_exit_code(capsys, command):
    assert _help(capsys, command) == {name: code for name, (_, code) in VERDICTS.items()}


def test_design_md_gives_every_verdict_its_exit_code():
    section = (ROOT / "docs" / "design.md").read_text().split("## Errors and exit codes", 1)[1].split("\n## ", 1)[0]
    documented = {}
    for code, sign in ((0, "positive"), (1, "negative")):
        row = next(line for line in section.splitlines() if line.startswith(f"| {code} |"))
        names = re.search(sign + r" verdict \(([^)]*)\)", row)[1]
        documented.update({name.strip(): code for name in names.split(",")})
    assert documented == {name: code for name, (_, code) in VERDICTS.items()}


class _Certificate:
    """A certificate of `verdict`: `Certificate`'s own `positive`, the rest as little as the commands read."""

    positive = Certificate.positive

    def __init__(self, verdict: str) -> None:
        self.verdict = verdict

    def to_dict(self) -> dict:
        return {"verdict": self.verdict}


@pytest.mark.parametrize("command", ["run", "certify"])
@pytest.mark.parametrize("verdict", sorted(VERDICTS))
def test_the_command_exits_with_the_documented_code(capsys, monkeypatch, tmp_path, command, verdict):
    documented = _help(capsys, command)

    class Job:  # the main job, answering `verdict` at once
        def __init__(self, spec, out, settings, **_):
            self.spec = spec

        def run(self):
            outcome = SimpleNamespace(certificate=_Certificate(verdict), seconds={})
            return JobResult(self.spec.name, "binding", None, outcome)

    monkeypatch.setattr("tasksolve.solver.job.Job", Job)
    code = main([command, SPEC, "--oracle", "analytic", "--out", str(tmp_path), "--json"])
    assert code == documented[verdict]
    assert f'"verdict": "{verdict}"' in capsys.readouterr().out
