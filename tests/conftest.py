"""Hypothesis profiles: ``ci`` (the default: fast, deterministic) and ``long`` (fuzzing and
property runs of 10,000+ cases, for `bench/fuzz_specs.py` or ``HYPOTHESIS_PROFILE=long``)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile(
    "long", max_examples=10_000, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
