"""Readers for the Standard Task Graph set (Tobita & Kasahara, Journal of Scheduling 5(5), 2002).

An ``.stg`` file holds, after optional ``#`` comment lines, the number of real tasks ``n`` on
its first line, then one line per task ``id time npred pred...`` for ids ``0 .. n+1`` in order;
task 0 and task ``n+1`` are zero-time entry and exit dummies and every predecessor id is smaller
than the task's own id (the ids are a topological order). Comment lines (the generator's
parameters, the critical-path length) usually follow the tasks.

`read_stg` returns a `TaskGraph` whose tasks are named by their STG id ("1" .. "n"); the two
dummies are dropped (they carry no work and removing them removes no constraint between real
tasks) unless ``keep_dummies=True``. `read_optimal_csv` reads the set's table of best lower
bounds and best known makespans. Malformed input raises `StgFormatError`, whose message names the
file and the line.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from tasksolve.solver.errors import BadProblemError
from tasksolve.solver.makespan.taskgraph import Edge, TaskGraph, TaskGraphError


class StgFormatError(BadProblemError):
    """A malformed STG or ``optimal.csv`` file; the message reads ``file:line: problem``."""

    def __init__(self, source: str, line: int | None, problem: str) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {problem}")


def _ints(tokens: list[str], source: str, lineno: int, first: int = 1) -> list[int]:
    values = []
    for position, token in enumerate(tokens, start=first):
        try:
            values.append(int(token))
        except ValueError:
            raise StgFormatError(source, lineno, f"field {position} is {token!r}, expected an integer") from None
    return values


def parse_stg(text: str, source: str = "<string>", *, keep_dummies: bool = False) -> TaskGraph:
    """Parse the text of an STG file (``source`` names it in error messages)."""
    lines = [
        (lineno, line.split())
        for lineno, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise StgFormatError(source, None, "empty file: expected the number of tasks on the first line")
    header_line, header = lines[0]
    if len(header) != 1:
        raise StgFormatError(
            source,
            header_line,
            f"the first line must hold only the number of tasks, found {len(header)} fields",
        )
    (n,) = _ints(header, source, header_line)
    if n < 0:
        raise StgFormatError(source, header_line, f"the number of tasks is negative ({n})")
    rows = lines[1:]
    expected = n + 2
    durations: dict[str, int] = {}
    edges: list[Edge] = []
    exit_id = n + 1
    for expected_id, (lineno, tokens) in enumerate(rows):
        if expected_id >= expected:
            raise StgFormatError(
                source,
                lineno,
                f"unexpected data after the last task (task {n + 1}): the header announced n = {n} real tasks",
            )
        if len(tokens) < 3:
            raise StgFormatError(
                source,
                lineno,
                f"a task line needs at least 3 fields (id time npred), found {len(tokens)}",
            )
        task_id, time, npred, *preds = _ints(tokens, source, lineno)
        if task_id != expected_id:
            raise StgFormatError(source, lineno, f"expected task id {expected_id}, found {task_id}")
        if time < 0:
            raise StgFormatError(source, lineno, f"task {task_id} has a negative time ({time})")
        if npred < 0 or npred != len(preds):
            raise StgFormatError(
                source,
                lineno,
                f"task {task_id} announces {npred} predecessors but lists {len(preds)}",
            )
        if task_id in (0, exit_id) and time != 0:
            raise StgFormatError(source, lineno, f"dummy task {task_id} must have time 0, found {time}")
        if task_id == 0 and preds:
            raise StgFormatError(source, lineno, "the entry dummy (task 0) cannot have predecessors")
        if len(set(preds)) != len(preds):
            raise StgFormatError(source, lineno, f"task {task_id} lists a predecessor twice")
        for p in preds:
            if p < 0 or p >= task_id:
                raise StgFormatError(
                    source,
                    lineno,
                    f"task {task_id} has predecessor {p}: predecessors must be earlier tasks (0 to {task_id - 1})",
                )
        if keep_dummies or task_id not in (0, exit_id):
            durations[str(task_id)] = time
            edges.extend(Edge(str(p), str(task_id)) for p in preds if keep_dummies or p != 0)
    if len(rows) < expected:
        last = rows[-1][0] if rows else header_line
        raise StgFormatError(
            source,
            last,
            f"the file ends after {len(rows)} task lines, expected {expected} "
            f"(tasks 0 to {n + 1}, the header announced n = {n})",
        )
    try:
        return TaskGraph(durations, edges)
    except TaskGraphError as exc:  # cannot happen after the checks above; kept for safety
        raise StgFormatError(source, None, str(exc)) from exc


def read_stg(path: str | Path, *, keep_dummies: bool = False) -> TaskGraph:
    """Read an STG file into a `TaskGraph` (tasks named "1".."n"; see the module docstring)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise StgFormatError(str(path), None, "not a text file (invalid UTF-8)") from None
    except OSError as exc:
        raise StgFormatError(str(path), None, f"cannot read: {exc.strerror or exc}") from None
    return parse_stg(text, str(path), keep_dummies=keep_dummies)


@dataclass(frozen=True)
class BestKnown:
    """One row of ``optimal.csv``: the best lower bound and best known makespan."""

    graph: str
    processors: int
    lower_bound: int
    best_known: int

    @property
    def is_optimal(self) -> bool:
        """Whether the optimum is known (the bound meets the best schedule)."""
        return self.lower_bound == self.best_known


OPTIMAL_COLUMNS = ("graph", "processors", "lower_bound", "best_known")


def read_optimal_csv(path: str | Path) -> dict[tuple[str, int], BestKnown]:
    """Read ``optimal.csv`` (columns graph, processors, lower_bound, best_known) into a dict
    keyed by ``(graph file name, processors)``."""
    path = Path(path)
    source = str(path)
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise StgFormatError(source, None, f"cannot read: {exc.strerror or exc}") from None
    table: dict[tuple[str, int], BestKnown] = {}
    with handle:
        reader = csv.reader(handle)
        try:
            header = next(reader)
        except StopIteration:
            raise StgFormatError(source, None, "empty file: expected a header line") from None
        if tuple(h.strip() for h in header) != OPTIMAL_COLUMNS:
            raise StgFormatError(
                source, 1, f"expected the header {','.join(OPTIMAL_COLUMNS)}, found {','.join(header)}"
            )
        for row in reader:
            lineno = reader.line_num
            if not row or all(not cell.strip() for cell in row):
                continue
            if len(row) != len(OPTIMAL_COLUMNS):
                raise StgFormatError(source, lineno, f"expected 4 fields, found {len(row)}")
            graph = row[0].strip()
            processors, lower, best = _ints([c.strip() for c in row[1:]], source, lineno, first=2)
            if processors < 1:
                raise StgFormatError(source, lineno, f"processors must be >= 1, found {processors}")
            if lower > best:
                raise StgFormatError(source, lineno, f"lower_bound {lower} exceeds best_known {best}")
            key = (graph, processors)
            if key in table:
                raise StgFormatError(source, lineno, f"{graph} with {processors} processors is listed twice")
            table[key] = BestKnown(graph, processors, lower, best)
    return table
