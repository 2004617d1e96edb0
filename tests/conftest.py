"""Hypothesis profiles: ``ci`` (the default: fast, deterministic) and ``long`` (fuzzing and
property runs of 10,000+ cases, for `bench/fuzz_specs.py` or ``HYPOTHESIS_PROFILE=long``).

Ctrl-C: a shell without job control starts a background command with SIGINT ignored, and an
ignored signal stays ignored in every child, so the tests that send SIGINT to a ``tasksolve``
process would see it swallowed. The test session takes Python's own handler back, so its children
start with the default one, as they do from a terminal.
"""

from __future__ import annotations

import os
import signal

from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile(
    "long", max_examples=10_000, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
