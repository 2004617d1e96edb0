"""A library call's error names the settings as the library takes them (``resume=True``,
``force=True``, ``out_dir``); the command line's error names its options (``--resume``,
``--force``, ``--out``): `solver.errors.SolverError.worded`, shown by `solver.cli.errors`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tasksolve
from tasksolve.solver.certify.service import SamplingError
from tasksolve.solver.cli import main
from tasksolve.solver.cli.errors import classify
from tasksolve.solver.errors import BadProblemError

SPEC = "t2-ipfwd-intadd-x2"
OPTIONS = {"oracle_kind": "analytic", "samples": 30, "design": "random", "compare_samples": 0}
CLI = ["--oracle", "analytic", "--samples", "30", "--design", "random", "--compare-samples", "0", "--json"]


def _options_named(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """An output folder holding an earlier run's samples."""
    out = tmp_path_factory.mktemp("finished")
    tasksolve.certify(SPEC, out, **OPTIONS)
    return out


def test_the_library_says_resume_true_or_force_true(finished):
    with pytest.raises(SamplingError) as caught:
        tasksolve.certify(SPEC, finished, **OPTIONS)
    text = str(caught.value)
    assert "already holds 30 measured plans" in text
    assert "continue them with resume=True or discard them with force=True" in text
    assert not _options_named(text)


def test_the_library_says_its_contradiction_in_its_words(finished):
    with pytest.raises(SamplingError, match=r"^resume=True and force=True contradict each other") as caught:
        tasksolve.run(SPEC, finished, resume=True, force=True, **OPTIONS)
    assert not _options_named(str(caught.value))


def test_a_damaged_file_says_force_true(tmp_path, finished):
    out = tmp_path / "damaged"
    out.mkdir()
    lines = (finished / "samples.jsonl").read_text().splitlines(keepends=True)
    (out / "samples.jsonl").write_text("".join(lines[:3]) + '{"index": 2, "contexts": "x", "status": "ok"}\n')
    with pytest.raises(SamplingError, match=r"samples\.jsonl:4: .*start afresh with force=True") as caught:
        tasksolve.certify(SPEC, out, resume=True, **OPTIONS)
    assert not _options_named(str(caught.value))
    assert "start afresh with --force" in classify(caught.value).message


def test_the_command_line_says_resume_and_force(capsys, finished):
    assert main(["certify", SPEC, "--out", str(finished), *CLI]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "continue them with --resume or discard them with --force" in err
    assert "resume=True" not in err and "force=True" not in err
    assert main(["certify", SPEC, "--out", str(finished), "--resume", "--force", *CLI]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--resume and --force contradict each other" in err and "=True" not in err


def test_an_out_that_is_a_file_is_named_in_each_vocabulary(tmp_path, capsys):
    out = tmp_path / "file"
    out.write_text("")
    with pytest.raises(SamplingError, match=r"^out_dir .*file is a regular file, not a directory"):
        tasksolve.certify(SPEC, out, **OPTIONS)
    assert main(["certify", SPEC, "--out", str(out), *CLI]) == 2
    assert "--out " in capsys.readouterr().err


def test_worded_keeps_both_messages_through_a_pickle():
    import pickle

    error = BadProblemError.worded("{path} is held; use {resume} or {force}, or another {out}", path="a{b}")
    assert str(error) == "a{b} is held; use resume=True or force=True, or another out_dir"
    copy = pickle.loads(pickle.dumps(error))
    assert classify(copy).message == "a{b} is held; use --resume or --force, or another --out"
    assert classify(copy).code == 2
