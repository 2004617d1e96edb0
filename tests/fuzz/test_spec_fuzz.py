"""Fuzzing the loader and the CLI with mutated example specs (the CI profile runs a few hundred
cases per test; `HYPOTHESIS_PROFILE=long` or `bench/fuzz_specs.py` runs over 10,000).

The only outcomes allowed: a loaded spec whose figures are finite and within the documented
ranges, or one `SpecsError` whose message names the file and stays short. Through the CLI: an exit
code in {0, 1, 2, 3} and never a traceback."""

from __future__ import annotations

import contextlib
import io
import math

from hypothesis import HealthCheck, given, settings

from tasksolve.solver.cli import main
from tasksolve.specs import load_spec
from tasksolve.specs.errors import SpecsError
from tests.fuzz.mutations import any_mutation, byte_mutation

MAX_MESSAGE = 20_000


def check_loaded(spec) -> None:
    topo = spec.topology
    assert 1e6 <= topo.clock <= 1e11
    for resource in topo.resources:
        assert math.isfinite(resource.capacity) and resource.capacity > 0
    for app in spec.applications.values():
        for task in app.tasks.values():
            assert math.isfinite(task.cycles) and 0 < task.cycles <= 1e12
            for value in list(task.demand.values()) + list(task.idle_demand.values()):
                assert math.isfinite(value) and 0 <= value <= 1e3
    for name in spec.thread_names:
        assert name.isprintable()


def load_mutated(tmp_path_factory, data: bytes):
    path = tmp_path_factory.mktemp("fuzz") / "spec.yaml"
    path.write_bytes(data)
    try:
        spec = load_spec(path)
    except SpecsError as exc:
        text = str(exc)
        assert str(path) in text or "spec.yaml" in text, text[:300]
        assert len(text) < MAX_MESSAGE
        return None
    check_loaded(spec)
    return spec


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(any_mutation)
def test_the_loader_never_crashes(tmp_path_factory, data):
    load_mutated(tmp_path_factory, data)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(byte_mutation())
def test_byte_mutations_never_crash_the_loader(tmp_path_factory, data):
    """Control characters, NUL, invalid UTF-8, truncation, deep nesting, huge integers, malformed
    and unsafe tags, repeated slices: a located error or a spec within range."""
    load_mutated(tmp_path_factory, data)


def run_cli(args: list[str]) -> tuple[int, str]:
    """`tasksolve ARGS` in this process; the exit code and everything it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue() + err.getvalue()


@settings(
    max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None
)
@given(any_mutation)
def test_the_cli_never_crashes_on_mutated_specs(tmp_path_factory, data):
    """Exit codes 0-3 only: an internal error would be 70 (bench/fuzz_specs.py runs more, and
    simulate and solve too)."""
    folder = tmp_path_factory.mktemp("cli")
    path = folder / "spec.yaml"
    path.write_bytes(data)
    for command in (["validate"], ["count"]):
        code, text = run_cli([command[0], str(path), *command[1:]])
        assert code in (0, 1, 2, 3), text[-2000:]
        assert "Traceback" not in text
