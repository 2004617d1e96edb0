"""Random streams of the simulation: service-time factors and inter-arrival times.

A task's work for one packet is ``cycles * X`` with ``E[X] = 1``:

* ``deterministic``: ``X = 1``;
* ``exponential``: ``X ~ Exp(1)`` (coefficient of variation 1);
* ``cv``: ``X ~ Gamma(shape = 1/cv^2, scale = cv^2)`` (mean 1, coefficient of variation
  ``cv``; ``cv = 0`` is deterministic).

Streams are keyed by thread and task (not by context), each from its own
``numpy.random.SeedSequence([seed, kind, key...])``: plans that differ by a symmetry of the
hardware see exactly the same random numbers, and the results do not depend on evaluation order.
"""

from __future__ import annotations

import numpy as np

CHUNK = 2048
_SERVICE, _ARRIVAL, _FAILURE, _DISPATCH = 1, 2, 3, 4


class Stream:
    """Draws from one distribution in NumPy chunks, handed out one Python float at a time."""

    __slots__ = ("_draw", "_buffer", "_index")

    def __init__(self, draw) -> None:
        self._draw = draw
        self._buffer: list[float] = []
        self._index = 0

    def next(self) -> float:
        if self._index >= len(self._buffer):
            self._buffer = self._draw(CHUNK).tolist()
            self._index = 0
        value = self._buffer[self._index]
        self._index += 1
        return value


def _generator(seed: int, kind: int, *key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed), kind, *[int(k) for k in key]]))


def conflict_stream(seed: int, thread: int, task: int) -> Stream:
    """Uniform draws in [0, 1), one per commit of an optimistic section with conflicts (NPIRE
    §2.7; `simulate.des.phases`), keyed apart from `failure_stream`'s."""
    rng = _generator(seed, _FAILURE, thread, task, 1)
    return Stream(lambda n: rng.random(n))


def service_stream(seed: int, distribution: str, cv: float | None, thread: int, task: int) -> Stream | None:
    """A stream of work factors, or None when the work is deterministic."""
    if distribution == "deterministic" or (distribution == "cv" and not cv):
        return None
    rng = _generator(seed, _SERVICE, thread, task)
    if distribution == "exponential":
        return Stream(lambda n: rng.exponential(1.0, n))
    if distribution == "cv":
        shape = 1.0 / (cv * cv)
        return Stream(lambda n: rng.gamma(shape, 1.0 / shape, n))
    raise ValueError(f"unknown service distribution `{distribution}`")


def arrival_stream(seed: int, process: str, mean_gap: float, instance: int) -> Stream:
    """Inter-arrival times (cycles) of one instance's source: constant or exponential."""
    if process == "deterministic":
        return Stream(lambda n: np.full(n, mean_gap))
    if process == "poisson":
        rng = _generator(seed, _ARRIVAL, instance)
        return Stream(lambda n: rng.exponential(mean_gap, n))
    raise ValueError(f"unknown arrival process `{process}`")


def failure_stream(seed: int, fail: float, thread: int, task: int) -> Stream:
    """Failed optimistic executions before one succeeds (NPIRE §2.7): geometric, each execution
    failing with probability `fail`, independently."""
    rng = _generator(seed, _FAILURE, thread, task)
    return Stream(lambda n: rng.geometric(1.0 - fail, n) - 1)


def dispatch_generator(seed: int, group: int) -> np.random.Generator:
    """The generator of a ``hash``-dispatching group's replica choices (one per packet)."""
    return _generator(seed, _DISPATCH, group)
