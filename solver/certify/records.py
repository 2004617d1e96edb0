"""Samples records read back from disk are input: checked like a spec (file:line, exit 2).

`checked_record` turns one line of a samples file (`solver.certify.service`) into the fields of a
`Record`, or raises `RecordError` naming ``file:line`` and the field:

* the line is a JSON object with the record's keys and no other;
* ``index`` a non-negative integer, ``contexts`` a list of integers, ``attempts`` a positive
  integer, ``status`` ``"ok"`` or ``"failed"`` (an unknown status is an error, never skipped);
* an ``ok`` record's ``value`` is a finite number (not ``null``, a string, ``NaN``) in the
  metric's domain (`in_domain`, `simulate.screening`): a throughput positive, a latency positive
  (the file stores the natural value, `specs.objective`: seconds for a latency), both within ``oracle.range`` when the spec
  gives one, else within the plausible limits;
  ``throughput``, ``half_width``, ``latency`` are finite numbers or ``null``;
* an ``ok`` record agrees with itself (`self_contradiction`): ``value`` is its ``throughput`` for
  the total throughput, at most it for the minimum instance throughput, at least its mean
  ``latency`` for the latency objective (the slowest instance's mean).

A record that agrees with itself can still be forged; `solver.certify.verdict` (rule 0) compares
every measured value with the bounds that apply to its oracle.

`check_spread` then refuses a value `SPREAD` times (three orders of magnitude) or more away from
the median of the file's measured values: no random plan of one problem is a thousand times
faster than the typical one, an edited or damaged file can be.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from tasksolve.simulate.screening import SPREAD, domain_problem, spread_ratio
from tasksolve.solver.errors import BadProblemError, SolverFailed
from tasksolve.specs.objective import Objective

if TYPE_CHECKING:
    from tasksolve.solver.certify.service import Record

STATUSES = ("ok", "failed")
_KEYS = {
    "index",
    "contexts",
    "status",
    "value",
    "throughput",
    "half_width",
    "latency",
    "attempts",
    "error",
    "seed",
    "start",
    "steps",
    "pipeline",
}
_DAMAGED = "the file is damaged or was edited: start afresh with {force}"  # `SolverError.worded`


class RecordError(BadProblemError):
    """A samples record that cannot be used (bad input, exit 2)."""


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _integers(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def in_domain(value: float, objective: str, bounds: tuple[float, float] | None = None) -> str | None:
    """Why `value` (a record's natural figure: the throughput, or the latency) is outside the
    metric's domain (`simulate.screening.domain_problem`), or None when it is inside."""
    return domain_problem(value, Objective.of(objective).minimize, bounds)


def checked_record(
    line: str, path: Path | str, lineno: int, objective: str, bounds: tuple[float, float] | None = None
) -> dict[str, object]:
    """The fields of the record on line `lineno` of `path` (module docstring), checked."""

    def bad(why: str) -> RecordError:
        return RecordError.worded("{path}:{lineno}: {why}; " + _DAMAGED, path=path, lineno=lineno, why=why)

    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise bad(f"not a sample record (invalid JSON: {exc})") from None
    if not isinstance(data, dict):
        raise bad("not a sample record (not a JSON object)")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise bad(f"unknown field(s) {', '.join(repr(k)[:40] for k in unknown[:5])}")
    for key in ("index", "contexts", "status"):
        if key not in data:
            raise bad(f"no `{key}`")
    if not (isinstance(data["index"], int) and not isinstance(data["index"], bool) and data["index"] >= 0):
        raise bad(f"`index` is {str(data['index'])[:40]!r}, not a non-negative integer")
    if not _integers(data["contexts"]):
        raise bad("`contexts` is not a list of integers")
    status = data["status"]
    if status not in STATUSES:
        raise bad(f"unknown status {str(status)[:40]!r} (one of {', '.join(STATUSES)})")
    attempts = data.get("attempts", 1)
    if not (isinstance(attempts, int) and not isinstance(attempts, bool) and attempts >= 1):
        raise bad(f"`attempts` is {str(attempts)[:40]!r}, not a positive integer")
    for key in ("throughput", "half_width", "latency"):
        if data.get(key) is not None and not _number(data[key]):
            raise bad(f"`{key}` is {str(data[key])[:40]!r}, not a finite number")
    if status == "ok":
        value = data.get("value")
        if not _number(value):
            raise bad(f"`value` is {str(value)[:40]!r}, not a finite number")
        why = in_domain(float(value), objective, bounds)
        if why:
            raise bad(f"`value` is {why}")
        why = self_contradiction(data, objective)
        if why:
            raise bad(why)
    return data


SELF_TOLERANCE = 1e-9  # relative: the figures of one measurement, written by one float conversion


def self_contradiction(data: dict[str, object], objective: str) -> str | None:
    """Why an ``ok`` record's `value` disagrees with its own `throughput` or `latency` (module
    docstring), or None."""
    value, throughput, latency = float(data["value"]), data.get("throughput"), data.get("latency")
    slack = SELF_TOLERANCE * max(abs(value), 1e-300)
    if throughput is not None and objective == "total_throughput" and abs(value - throughput) > slack:
        return f"`value` {value:g} is not the record's own `throughput` {throughput:g}"
    if throughput is not None and objective == "min_throughput" and value > throughput + slack:
        return f"`value` {value:g} (the slowest instance) is above the record's total `throughput` {throughput:g}"
    if latency is not None and objective == "latency" and value < latency - slack:
        return f"`value` {value:g} s (the slowest instance's mean latency) is below the record's mean `latency` {latency:g} s"
    return None


def check_spread(path: Path | str, lines: list[str], first: int = 2) -> None:
    """Refuse a measured value `SPREAD` times or more away from the median of the file's measured
    values (`simulate.screening.spread_ratio`); `lines` are the file's record lines (checked by
    `checked_record`), the first on line `first`."""
    values: list[tuple[int, float]] = []
    for lineno, line in enumerate(lines, start=first):
        if line.strip():
            data = json.loads(line)
            if data.get("status") == "ok":
                values.append((lineno, float(data["value"])))
    everything = [v for _, v in values]
    for lineno, value in values:
        ratio = spread_ratio(value, everything)
        if ratio is not None:
            raise RecordError.worded(
                "{path}:{lineno}: `value` {value:g} is {ratio:.3g} times the median of the file's measured "
                "values, over {spread:g} times away; " + _DAMAGED,
                path=path,
                lineno=lineno,
                value=value,
                ratio=ratio,
                spread=SPREAD,
            )


class AllSamplesFailed(SolverFailed):
    """Every measurement of the sample failed: nothing to estimate from (exit 3)."""


def all_failed(failures: list[Record], path: Path | str) -> AllSamplesFailed:
    """The error when every sample failed: how many, grouped by kind of error, the first in full."""
    kinds: dict[str, int] = {}
    for record in failures:
        error = str(record.error or "unknown error")
        kinds[error.split(":", 1)[0]] = kinds.get(error.split(":", 1)[0], 0) + 1
    summary = ", ".join(f"{count} x {kind}" for kind, count in sorted(kinds.items(), key=lambda kv: -kv[1])[:5])
    first = str(failures[0].error) if failures else "no sample was measured"
    if len(first) > 400:
        first = first[:397] + "..."
    return AllSamplesFailed(
        f"all {len(failures)} measurements failed ({summary or 'none'}), so there is nothing to certify from; "
        f"the first: {first}; every failure is recorded in {path}"
    )
