"""Fuzzing the loader and the CLI with mutated example specs (the CI profile runs a few hundred
cases per test; `HYPOTHESIS_PROFILE=long` or `bench/fuzz_specs.py` runs over 10,000).

The only outcomes allowed: a loaded spec whose figures are finite and within the documented
ranges, or one `SpecsError` whose message names the file and stays short. Through the CLI: an exit
code in {0, 1, 2, 3} and never a traceback."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings

from specs import load_spec
from specs.errors import SpecsError
from tests.fuzz.mutations import any_mutation

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
