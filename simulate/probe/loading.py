"""Reading saved probe matrices (``--load``): the probe's own CSV and the public latency matrix.

Both are read through the project's one reader (`specs.files.read_input`: a byte cap counted
while reading, a device or directory refused by name, a FIFO nobody writes to given up), and
every number is parsed strictly: ASCII digits with an optional fraction and exponent, at most
`MOST_DIGITS` characters, finite, positive, and at most `MOST_LATENCY_NS`.  Anything else --
``nan``, ``inf``, ``-3``, ``1e308``, a 5000-digit number, a ragged row, a matrix that is not
square, an empty file -- is one `SpecError` located at file, line and column (exit 2), never a
traceback and never a value silently dropped.

The format is told by the first line:

* **the probe's own** (`report.write_csv`): a header naming ``cpu_i,cpu_j,latency_ns``,
  where interference was measured ``slowdown_i,slowdown_j``, and where the loop's rates alone
  were kept ``alone_i,alone_j`` (iterations per second, at most `MOST_RATE`; files saved before
  they were kept have none) -- any order, each optional pair both or neither; one pair per row;
* **the public core-to-core latency matrix** (nviennot/core-to-core-latency, ``results/``): N
  lines of N comma-separated cells, no header; row i, cell j (j < i) holds the mean one-way
  latency in ns between CPUs i and j; the diagonal and the upper triangle are empty.  CPU i is
  the i-th row.  Nothing about interference is measured: the samples carry no ratio.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from tasksolve.simulate.probe.analysis import PairSample, Repetition
from tasksolve.specs.errors import SpecError, shorten

#: bytes a saved matrix may hold (a 1024-CPU matrix of 18-character cells is about 9.5 MB)
MOST_BYTES = 32 * 1024 * 1024
#: CPUs a matrix may have: the analysis is quadratic in them
MOST_CPUS = 1024
MOST_DIGITS = 40
#: no one-way message between two CPUs takes 10 ms: a larger figure is not a latency
MOST_LATENCY_NS = 1e7
MOST_RATIO = 100.0
#: no compute loop runs a thousand iterations per nanosecond: a larger figure is not a rate
MOST_RATE = 1e12
PROBE_COLUMNS = ("cpu_i", "cpu_j", "latency_ns")
RATIO_COLUMNS = ("slowdown_i", "slowdown_j")
ALONE_COLUMNS = ("alone_i", "alone_j")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[0-9]{1,6}")

Cell = tuple[str, int]  # the text of a cell and its 1-based column in its line


def read_csv(path: str | Path) -> Repetition:
    """One repetition from a saved file of either format (module docstring); a bad file is one
    located `SpecError`."""
    shown = shorten(str(path), 200)
    lines = _lines(path, shown)
    if "cpu_i" in (cell for cell, _ in lines[0][1]):
        return _probe_rows(shown, lines)
    return _matrix(shown, lines)


def _lines(path: str | Path, shown: str) -> list[tuple[int, list[Cell]]]:
    """(line number, cells) of every line, the trailing empty ones left out."""
    from tasksolve.specs.files import read_input

    raw = read_input(path, MOST_BYTES)
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise SpecError.at(shown, f"not a text file (byte {exc.start} is not UTF-8)") from None
    rows = text.split("\n")
    while rows and not rows[-1].strip():
        rows.pop()
    if not rows:
        raise SpecError.at(shown, "the file is empty: no latency to analyse", 1, 1)
    if len(rows) > MOST_CPUS * (MOST_CPUS - 1) // 2 + 1:
        raise SpecError.at(shown, f"{len(rows)} lines: more than the pairs of {MOST_CPUS} CPUs")
    return [(number, _cells(row.removesuffix("\r"))) for number, row in enumerate(rows, start=1)]


def _cells(line: str) -> list[Cell]:
    cells, column = [], 1
    for text in line.split(","):
        cells.append((text.strip(" \t"), column + len(text) - len(text.lstrip(" \t"))))
        column += len(text) + 1
    return cells


def number(shown: str, line: int, cell: Cell, what: str, most: float) -> float:
    """The strictly parsed positive number in `cell` (module docstring), else a located error."""
    text, column = cell
    if not text:
        raise SpecError.at(shown, f"no {what}: the cell is empty", line, column)
    if len(text) > MOST_DIGITS:
        raise SpecError.at(
            shown, f"a number of {len(text)} characters is not a {what} (at most {MOST_DIGITS})", line, column
        )
    if not _NUMBER.fullmatch(text):
        sign = " (it must be positive)" if text.startswith("-") else ""
        raise SpecError.at(
            shown,
            f"`{shorten(text, 40)}` is not a {what}{sign}: expected ASCII digits such as 17.5 or 1.2e2",
            line,
            column,
        )
    value = float(text)
    if not (math.isfinite(value) and 0 < value <= most):
        raise SpecError.at(shown, f"{text} is not a {what}: expected above 0 and at most {most:g}", line, column)
    return value


def _matrix(shown: str, lines: list[tuple[int, list[Cell]]]) -> Repetition:
    """The lower triangle of an N x N matrix (module docstring)."""
    size = len(lines[0][1])
    if size > MOST_CPUS:
        raise SpecError.at(shown, f"{size} cells per row: more than {MOST_CPUS} CPUs", 1, 1)
    found: Repetition = {}
    for i, (line, cells) in enumerate(lines):
        if len(cells) != size:
            raise SpecError.at(
                shown, f"a ragged row: {len(cells)} cell(s) where the first row has {size}", line, cells[-1][1]
            )
        if i >= size:
            break
        for j, cell in enumerate(cells):
            if j < i:
                found[(j, i)] = PairSample(number(shown, line, cell, "latency in ns", MOST_LATENCY_NS))
            elif cell[0]:
                raise SpecError.at(
                    shown,
                    f"cell {j + 1} of row {i + 1} is on or above the diagonal, which this format leaves empty "
                    "(row i holds the latencies to CPUs 0..i-1)",
                    line,
                    cell[1],
                )
    if len(lines) != size:
        raise SpecError.at(shown, f"not a square matrix: {len(lines)} rows of {size} cells", lines[-1][0], 1)
    if size < 2:
        raise SpecError.at(shown, "one CPU: no pair to analyse", 1, 1)
    return found


def _header(shown: str, cells: list[Cell]) -> dict[str, int]:
    names = [cell for cell, _ in cells]
    missing = [c for c in PROBE_COLUMNS if c not in names]
    for optional in (RATIO_COLUMNS, ALONE_COLUMNS):
        if sum(c in names for c in optional) == 1:
            missing += [c for c in optional if c not in names]
    if missing:
        raise SpecError.at(
            shown,
            f"missing column(s) {', '.join(missing)} (expected {', '.join(PROBE_COLUMNS)}, "
            f"{', '.join(RATIO_COLUMNS)} where interference was measured, {', '.join(ALONE_COLUMNS)} where the "
            "rates alone were kept)",
            1,
            1,
        )
    chosen = [c for c in (*PROBE_COLUMNS, *RATIO_COLUMNS, *ALONE_COLUMNS) if c in names]
    return {name: names.index(name) for name in chosen}


def _probe_rows(shown: str, lines: list[tuple[int, list[Cell]]]) -> Repetition:
    """The probe's own CSV: one pair per row (module docstring)."""
    index = _header(shown, lines[0][1])
    width = len(lines[0][1])
    found: Repetition = {}
    for line, cells in lines[1:]:
        if len(cells) != width:
            raise SpecError.at(shown, f"a ragged row: {len(cells)} cell(s) where the header has {width}", line, 1)
        a, b = (_cpu(shown, line, cells[index[name]]) for name in ("cpu_i", "cpu_j"))
        if a == b:
            raise SpecError.at(shown, f"a pair needs two CPUs, got {a} twice", line, 1)
        latency = number(shown, line, cells[index["latency_ns"]], "latency in ns", MOST_LATENCY_NS)
        ratios = [number(shown, line, cells[index[c]], "rate ratio", MOST_RATIO) for c in RATIO_COLUMNS if c in index]
        rates = [number(shown, line, cells[index[c]], "rate alone", MOST_RATE) for c in ALONE_COLUMNS if c in index]
        if a > b:  # each figure follows its CPU
            ratios, rates = ratios[::-1], rates[::-1]
        pair = (min(a, b), max(a, b))
        if pair in found:
            raise SpecError.at(shown, f"the pair {pair[0]}-{pair[1]} is given twice", line, 1)
        found[pair] = PairSample(latency, *(ratios or (None, None)), *(rates or (None, None)))
    if not found:
        raise SpecError.at(shown, "a header and no pair: no latency to analyse", 1, 1)
    _every_pair(shown, found)
    return found


def _every_pair(shown: str, found: Repetition) -> None:
    """Every pair of the file's CPUs must be there: the analysis compares all of them."""
    from tasksolve.specs.importers.cpusets import cpu_list

    cpus = sorted({c for p in found for c in p})
    if len(cpus) > MOST_CPUS:
        raise SpecError.at(shown, f"{len(cpus)} CPUs: more than {MOST_CPUS}", 1, 1)
    missing = [(a, b) for i, a in enumerate(cpus) for b in cpus[i + 1 :] if (a, b) not in found]
    if missing:
        named = ", ".join(f"{a}-{b}" for a, b in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise SpecError.at(
            shown,
            f"{len(missing)} pair(s) of CPUs {cpu_list(cpus)} missing ({named}): every pair is measured",
            1,
            1,
        )


def _cpu(shown: str, line: int, cell: Cell) -> int:
    if not _INTEGER.fullmatch(cell[0]):
        raise SpecError.at(shown, f"`{shorten(cell[0], 40)}` is not a CPU number (0 to 999999)", line, cell[1])
    return int(cell[0])
