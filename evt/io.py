"""Reading a sample of numbers from a file: CSV with a header row, JSON lines, or one number
per line. Every problem is one `EVTError` naming the file and line."""

from __future__ import annotations

import csv
import io as _io
import json
import math
import os
import stat
from pathlib import Path

import numpy as np

from tasksolve.evt.errors import EVTError


def _number(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise EVTError(f"{where}: {shown!r} is not a number") from None
    if not math.isfinite(value):
        raise EVTError(f"{where}: value {text.strip()!r} is not finite")
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


#: bytes a samples file may hold (counted while reading: a pipe that never ends stops here)
MAX_BYTES = 256 * 1024 * 1024


def _wait_for_writer(fd: int, path: Path, seconds: float = 10.0) -> None:
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    if not poller.poll(int(seconds * 1000)):
        os.close(fd)
        raise EVTError(f"{path}: is a FIFO (named pipe) that nothing wrote to within {seconds:g} s")


def _read_text(path: Path) -> str:
    """The text of a regular file or a pipe (``-``: standard input), at most `MAX_BYTES`; a
    device, socket or directory is refused by name."""
    shown = "<stdin>" if str(path) == "-" else str(path)
    try:
        if str(path) == "-":
            fd = os.dup(0)
        else:
            mode = os.stat(path).st_mode
            if stat.S_ISDIR(mode):
                raise EVTError(f"{path}: is a directory, not a file of samples")
            if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
                raise EVTError(f"{path}: is not a regular file (a device or socket); give a file of samples")
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO without a writer must not block
            if stat.S_ISFIFO(mode):
                _wait_for_writer(fd, path)
            os.set_blocking(fd, True)
        try:
            parts, total = [], 0
            while part := os.read(fd, 1 << 16):
                total += len(part)
                if total > MAX_BYTES:
                    raise EVTError(f"{shown}: too large (over {MAX_BYTES} bytes)")
                parts.append(part)
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise EVTError(f"{path}: no such file") from None
    except OSError as exc:
        raise EVTError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        return b"".join(parts).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise EVTError(f"{shown}: not a text file (invalid UTF-8)") from None


def _data_lines(text: str) -> list[tuple[int, str]]:
    return [
        (i, line.strip())
        for i, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


HEADER_KEY = "tasksolve_samples"  # the first line of a tasksolve samples file: what produced it


def _read_json_lines(path: Path, lines: list[tuple[int, str]], column: str | None) -> np.ndarray:
    values = []
    for position, (lineno, line) in enumerate(lines):
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EVTError(f"{where}: invalid JSON ({exc.msg})") from None
        if isinstance(obj, dict):
            if position == 0 and HEADER_KEY in obj:
                continue
            if "status" in obj and obj["status"] != "ok":
                continue  # a failed measurement: no value
            if column is None and "value" in obj:
                column = "value"
            if column is None:
                if len(obj) != 1:
                    names = ", ".join(map(str, obj)) or "none"
                    raise EVTError(f"{where}: several keys ({names}); choose one with --column")
                column = next(iter(obj))
            if column not in obj:
                raise EVTError(f"{where}: no key {column!r}")
            obj = obj[column]
        elif column is not None:
            raise EVTError(f"{where}: expected a JSON object with key {column!r}")
        if isinstance(obj, bool) or not isinstance(obj, (int, float)):
            if isinstance(obj, str):
                values.append(_number(obj, where))
                continue
            raise EVTError(f"{where}: {json.dumps(obj)[:40]} is not a number")
        if not math.isfinite(float(obj)):
            raise EVTError(f"{where}: value {obj} is not finite")
        values.append(float(obj))
    return np.asarray(values, dtype=float)


def _read_csv(path: Path, lines: list[tuple[int, str]], column: str | None) -> np.ndarray:
    first = lines[0][1]
    delimiter = max(",;\t", key=first.count) if any(d in first for d in ",;\t") else ","
    rows = list(csv.reader(_io.StringIO("\n".join(line for _, line in lines)), delimiter=delimiter))
    header = [h.strip() for h in rows[0]]
    if all(_is_number(h) for h in header if h):
        raise EVTError(
            f"{path}:{lines[0][0]}: several numbers on a line but no header row; add a header naming the columns"
        )
    if column is None:
        if len(header) != 1:
            raise EVTError(f"{path}: several columns ({', '.join(header)}); choose one with --column")
        index = 0
    else:
        if column not in header:
            raise EVTError(f"{path}: no column {column!r} (columns: {', '.join(header)})")
        index = header.index(column)
    values = []
    for (lineno, _), row in zip(lines[1:], rows[1:]):
        where = f"{path}:{lineno}"
        if index >= len(row) or not row[index].strip():
            raise EVTError(f"{where}: no value in column {header[index]!r}")
        values.append(_number(row[index].strip(), where))
    return np.asarray(values, dtype=float)


def read_samples(path: str | Path, column: str | None = None) -> np.ndarray:
    """Read the numbers of `path` (format detected from the first non-blank, non-# line):

    * JSON lines: a line starting with ``{``; each line an object, `column` names the key (it
      may be omitted when objects have a single key or a ``value`` key).  A first line with the
      key ``tasksolve_samples`` is a header (tasksolve's samples file), not data; objects with a
      ``status`` other than ``"ok"`` (failed measurements) are skipped;
    * one number per line: the first line is a number (`column` must then be None);
    * CSV with a header row (delimiter ``,``, ``;`` or tab): `column` names the column (it may
      be omitted when there is a single column).

    Raises `EVTError` for a missing, unreadable or empty file, a value that is not a number or
    not finite, a missing column, or a file without any value. The values are not otherwise
    validated (see `evt.analyze`).
    """
    path = Path(path)
    text = _read_text(path)
    lines = _data_lines(text)
    if not lines:
        raise EVTError(f"{path}: the file is empty" if not text.strip() else f"{path}: no data (only comments)")
    first = lines[0][1]
    if first.startswith("{"):
        values = _read_json_lines(path, lines, column)
    elif _is_number(first) and not any(d in first for d in ",;\t"):
        if column is not None:
            raise EVTError(f"{path}: no header row, so there is no column {column!r} (one number per line)")
        values = np.asarray([_number(line, f"{path}:{lineno}") for lineno, line in lines])
    else:
        values = _read_csv(path, lines, column)
    if values.size == 0:
        raise EVTError(f"{path}: no values (only a header)")
    return values
