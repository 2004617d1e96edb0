"""Names printed into generated scripts and terminals (issue 25): a line break, an ANSI escape or
a bidi control in a name is refused at load with file:line; pinning outputs cannot be made to run
a command."""

from __future__ import annotations

import json
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tasksolve.solver.cli import main
from tasksolve.specs import Plan, SpecError, load_spec, load_spec_text
from tasksolve.specs.exporters.pinning import FORMATS, pinning_text
from tasksolve.specs.loader import builtin_path

EXAMPLE = builtin_path("", "t2-ipfwd-intadd-x2").read_text()


def _with_name(name: str) -> str:
    lines = [line for line in EXAMPLE.splitlines() if not line.startswith("name:")]
    return "\n".join([lines[0], "name: " + json.dumps(name), *lines[1:]]) + "\n"


@pytest.mark.parametrize(
    "name, words",
    [
        ("x\ntouch /tmp/PWNED #", "line break"),
        ("x\r\ny", "line break"),
        ("red \x1b[31malert", "ESC"),
        ("abc\u202edcba", "bidirectional"),
        ("a\u2028b", "line break"),
        ("nul\x00", "U+0000"),
    ],
)
def test_a_name_with_control_characters_is_refused_with_its_line(name, words):
    with pytest.raises(SpecError) as caught:
        load_spec_text(_with_name(name), "spec.yaml")
    message = str(caught.value)
    assert message.startswith("spec.yaml:2:") and words in message
    assert "\x1b" not in message and "\u202e" not in message and "\n" not in message


def test_validate_never_prints_the_raw_escape(tmp_path, capsys):
    path = tmp_path / "spec.yaml"
    path.write_text(_with_name("ok \x1b[2J\x1b[31mred"))
    assert main(["validate", str(path)]) == 2
    out = capsys.readouterr()
    assert "\x1b" not in out.out + out.err


def test_descriptions_may_span_lines_but_hold_no_escape():
    text = EXAMPLE.replace("name: t2-ipfwd-intadd-x2", "name: t2\ndescription: |\n  two\n  lines")
    assert load_spec_text(text, "spec.yaml").description == "two\nlines\n"
    escaped = EXAMPLE.replace("name: t2-ipfwd-intadd-x2", 'name: t2\ndescription: "two \\e[31m"')
    with pytest.raises(SpecError, match="ESC"):
        load_spec_text(escaped, "spec.yaml")


printable = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Zl", "Zp", "Cs", "Co")), min_size=1)


@given(name=printable, method=printable)
def test_every_format_gives_one_line_per_item_whatever_the_names(name, method):
    """A name changes no format's line count: it never breaks a comment line in two."""
    spec = load_spec("t2-ipfwd-intadd-x2")
    plain = Plan.from_contexts(spec, spec.usable_contexts[: len(spec.threads)], method="m")
    named = spec.model_copy(update={"name": name})
    plan = plain.model_copy(update={"method": method, "spec": None})
    for form in FORMATS:
        text = pinning_text(named, plan, form)
        assert len(text.splitlines()) == len(pinning_text(spec, plain, form).splitlines()), form


def test_an_unchecked_name_built_in_memory_is_escaped_in_every_format(tmp_path):
    spec = load_spec("t2-ipfwd-intadd-x2")
    spec = spec.model_construct(**{**dict(spec), "name": "x\ntouch PWNED #"})  # no validation
    plan = Plan.from_contexts(load_spec("t2-ipfwd-intadd-x2"), spec.usable_contexts[: len(spec.threads)])
    for form in FORMATS:
        text = pinning_text(spec, plan, form)
        assert "\ntouch PWNED" not in text
        if form == "omp":  # the format meant to be sourced: sourcing it runs nothing
            script = tmp_path / "omp.sh"
            script.write_text(text)
            subprocess.run(["sh", "-c", f". {script}; true"], cwd=tmp_path, check=True, timeout=30)
            assert not (tmp_path / "PWNED").exists()
        if form in ("taskset", "numactl", "likwid-pin"):  # launchers: the shell parses every line
            script = tmp_path / "launch.sh"
            script.write_text(text)
            subprocess.run(["sh", "-n", str(script)], cwd=tmp_path, check=True, timeout=30)
