"""Files on disk, safely: atomic writes that never follow a link, inputs read with a byte cap.

Writing.  `write_bytes_atomic` (and its text/JSON forms) opens a fresh temporary file beside the
target with ``O_CREAT | O_EXCL | O_NOFOLLOW`` -- it can be neither an existing file nor a link --
writes, fsyncs and renames it over the target.  ``rename`` replaces a link at the target instead
of writing through it, and a target that is a directory, a FIFO, a device or a socket is refused
by name before anything is written.  `append_text` appends to a regular file opened with
``O_NOFOLLOW`` (checked with ``fstat``).  A full disk is an ``OSError`` naming the file and
suggesting ``--resume`` (the CLI exits 3).

Reading.  `read_input` reads a regular file, or a pipe (``-`` for standard input, a process
substitution, a named FIFO), and counts the bytes *while* reading: a file that grows, a
``/proc`` file that reports size 0, or a pipe that never ends stops at the cap.  A device, a
socket or a directory is refused by name ("not a regular file"), and a named FIFO nobody writes
to is given up after `FIFO_WAIT` seconds instead of blocking forever.
"""

from __future__ import annotations

import errno
import json
import math
import os
import secrets
import select
import stat
from pathlib import Path
from typing import Any

from tasksolve.specs.errors import SpecError, shorten

#: seconds a named FIFO may stay without a writer before reading it is given up
FIFO_WAIT = 10.0
_CHUNK = 1 << 16
_NO_SPACE = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def kind_of(mode: int) -> str:
    """What a file of mode `mode` is, in words ("a regular file", "a FIFO (named pipe)", ...)."""
    for test, words in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return words
    return "not a regular file"


class UnsafePathError(SpecError, ValueError):
    """A path where a file is read or written is a link, FIFO, device, socket or directory."""


def unsafe(path: str | Path, what: str, hint: str = "") -> UnsafePathError:
    return UnsafePathError.at(shorten(str(path), 200), f"is {what}, not a regular file{hint}")


def check_regular_or_absent(path: str | Path, *, links: bool = False, hint: str = "") -> bool:
    """True if `path` is a regular file, False if it does not exist; raises `UnsafePathError`
    for anything else (a symbolic link too, unless `links`, when a link is replaced, not followed)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISREG(mode) or (links and stat.S_ISLNK(mode)):
        return stat.S_ISREG(mode)
    raise unsafe(path, kind_of(mode), hint)


def no_space(path: str | Path, exc: OSError) -> OSError:
    """The disk-full error of writing `path`: names the file and suggests --resume."""
    return OSError(
        exc.errno,
        f"no space left on the device while writing {path}; free some space, then continue the run "
        "with --resume (every finished measurement is kept)",
        str(path),
    )


def write_bytes_atomic(path: str | Path, data: bytes, mode: int = 0o666) -> None:
    """Write `data` to a new temporary file beside `path` (``O_CREAT|O_EXCL|O_NOFOLLOW``), fsync
    it, and rename it over `path` (module docstring).  `mode` is masked by the umask."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    check_regular_or_absent(path, links=True)  # rename replaces a link; a FIFO or device is refused
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temporary, flags, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.errno in _NO_SPACE:
            raise no_space(path, exc) from None
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write `text` (UTF-8) atomically: `write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8"))


def append_text(path: str | Path, text: str, sync: bool = True) -> None:
    """Append `text` to the regular file `path` (created if missing) in one write, fsync'ed
    unless not `sync` (then it is in the file for every reader at once, on the disk when the
    system flushes it); a link, FIFO or device at `path` is refused, never opened for writing."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise unsafe(path, "a symbolic link") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise unsafe(path, kind_of(mode))
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(fd, data) :]
        if sync:
            os.fsync(fd)
    except OSError as exc:
        if exc.errno in _NO_SPACE:
            raise no_space(path, exc) from None
        raise
    finally:
        os.close(fd)


def open_regular(path: str | Path, flags: int = os.O_RDONLY) -> int:
    """A descriptor of the regular file `path` opened without following a link (``O_NOFOLLOW``)
    and without blocking on a FIFO; raises `UnsafePathError` for anything but a regular file."""
    flags |= getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise unsafe(path, "a symbolic link") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise unsafe(path, kind_of(mode))
    os.set_blocking(fd, True)
    return fd


def read_regular(path: str | Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file `path` (no link followed; `open_regular`), at most `limit`."""
    fd = open_regular(path)
    try:
        return _read_capped(fd, path, limit)
    finally:
        os.close(fd)


def read_cut_to_last_line(path: str | Path) -> bytes:
    """The bytes of the regular file `path` (no link followed), after cutting an unfinished last
    line (one a crash or a full disk left without its newline) from the file itself; a missing
    file reads as empty."""
    if not check_regular_or_absent(path):
        return b""
    fd = open_regular(path, os.O_RDWR)
    try:
        raw = _read_capped(fd, path, None)
        if raw and not raw.endswith(b"\n"):
            raw = raw[: raw.rfind(b"\n") + 1]
            os.ftruncate(fd, len(raw))
        return raw
    finally:
        os.close(fd)


# ------------------------------------------------------------------ inputs
class InputTooLarge(SpecError, ValueError):
    """An input holds more than the cap."""


def _read_capped(fd: int, shown: str | Path, limit: int | None) -> bytes:
    parts, total = [], 0
    while True:
        part = os.read(fd, _CHUNK)
        if not part:
            return b"".join(parts)
        total += len(part)
        if limit is not None and total > limit:
            raise InputTooLarge.at(shorten(str(shown), 200), f"the input is too large (over {limit} bytes)")
        parts.append(part)


def _anonymous_pipe(fd: int) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
    except OSError:
        return False


def read_input(path: str | Path, limit: int, *, fifo_wait: float | None = None) -> bytes:
    """The bytes of an input file: a regular file or a pipe (``-``: standard input), at most
    `limit` bytes, counted while reading.  Raises a `SpecError` naming the file: missing, a
    directory, a device or socket ("not a regular file"), over `limit`, or a named FIFO without a
    writer for `fifo_wait` seconds."""
    text = str(path)
    shown = "<stdin>" if text == "-" else shorten(text, 200)
    fifo_wait = FIFO_WAIT if fifo_wait is None else fifo_wait
    if text == "-":
        fd = os.dup(0)
    else:
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            raise SpecError.at(shown, "no such file") from None
        except OSError as exc:
            raise SpecError.at(shown, f"cannot read the file: {exc.strerror}") from None
        if stat.S_ISDIR(mode):
            raise SpecError.at(shown, "is a directory, not a file")
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            raise unsafe(shown, kind_of(mode))
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise SpecError.at(shown, f"cannot read the file: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            raise unsafe(shown, kind_of(mode))
        if stat.S_ISFIFO(mode) and text != "-" and not _anonymous_pipe(fd):
            poller = select.poll()
            poller.register(fd, select.POLLIN | select.POLLHUP)
            if not poller.poll(int(fifo_wait * 1000)):
                raise SpecError.at(shown, f"is a FIFO (named pipe) that nothing wrote to within {fifo_wait:g} s")
        os.set_blocking(fd, True)
        try:
            return _read_capped(fd, shown, limit)
        except OSError as exc:
            raise SpecError.at(shown, f"cannot read the file: {exc.strerror}") from None
    finally:
        os.close(fd)


# ------------------------------------------------------------------ JSON
def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):  # NumPy scalars and arrays
        return value.tolist()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def why_not_finite(value: float) -> str:
    """The reason written under ``nulls`` for a figure that is infinite or not a number."""
    if math.isnan(value):
        return "not a number: the figure could not be computed"
    return ("+" if value > 0 else "-") + "infinity: no finite value"


def finite_or_none(value: Any) -> float | None:
    """`value` as a float where it is a finite number, else None (None, NaN, infinities, text)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def plain(value: Any) -> Any:
    """The one conversion of a value to JSON: an object with ``to_dict`` (a typed part) through it,
    NumPy scalars as Python numbers, every infinity or NaN as None (`json_text` says why in the
    enclosing object's ``nulls``; a typed part's own ``to_dict`` does the same for its fields)."""
    if hasattr(value, "to_dict") and not isinstance(value, type):
        return value.to_dict()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # NumPy scalars
        return plain(value.item())
    return value


def _finite(value: Any) -> Any:
    """`plain`, plus the reason of each null in the enclosing object's ``nulls`` (field ->
    reason; ``field[i]`` for an item of a list field)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        out, nulls = {}, dict(value.get("nulls") or {}) if isinstance(value.get("nulls"), dict) else {}
        for key, item in value.items():
            if isinstance(item, float) and not math.isfinite(item):
                nulls.setdefault(key, why_not_finite(item))
            elif isinstance(item, (list, tuple)):
                for i, x in enumerate(item):
                    if isinstance(x, float) and not math.isfinite(x):
                        nulls.setdefault(f"{key}[{i}]", why_not_finite(x))
            out[key] = _finite(item)
        if nulls:
            out["nulls"] = nulls
        return out
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_text(obj: Any) -> str:
    """`obj` as strict, indented JSON (NumPy values as lists; an infinity or NaN as null, its
    reason in the enclosing object's ``nulls``)."""
    return json.dumps(_finite(json.loads(json.dumps(obj, default=_json_default))), indent=2, allow_nan=False)


def write_json_atomic(path: str | Path, obj: Any) -> None:
    """Write `obj` as `json_text` (plus a newline), atomically."""
    write_text_atomic(path, json_text(obj) + "\n")
