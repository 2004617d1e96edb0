"""Errors a person can act on: file, line, column, field path, what is wrong, a suggestion."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

Path = tuple[str | int, ...]


def format_path(path: Sequence[str | int]) -> str:
    """``('workload', 0, 'app')`` -> ``workload[0].app``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


#: the most characters of a file path a message shows (escaped: `shorten`)
PATH_MOST = 4096


def shorten(text: str, most: int = 200) -> str:
    """`text` cut to `most` characters, control characters shown escaped (messages stay short and
    never carry a file's content or a terminal escape sequence)."""
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text[: most + 1])
    return text if len(text) <= most else text[: most - 3] + "..."


def shown(value: object, most: int = 60) -> str:
    """`repr(value)` for a message, bounded before it is built (a 3 MB value never becomes a 3 GB
    message) and free of control characters."""
    if isinstance(value, str):
        return shorten(repr(value[: most + 1]), most + 2)
    if isinstance(value, (dict, list, tuple, set)):
        return f"a {type(value).__name__} of {len(value)} item(s)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of {len(str(value)) if value.bit_length() < 14000 else 'thousands of'} digits"
    return shorten(repr(value), most)


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``"; did you mean `ifu`?"`` when a candidate is close to `name`, else ``""`` (names over 64
    characters and candidate lists over 1,000 are not compared: difflib is quadratic)."""
    name = str(name)
    pool = [str(c) for c in candidates][:1000]
    if len(name) > 64:
        return ""
    found = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return f"; did you mean `{found[0]}`?" if found else ""


@dataclass
class Problem:
    """One thing wrong in a spec, at a field path (located in the file later)."""

    path: Path
    message: str
    key: bool = False  # point at the mapping key rather than its value


class SpecsError(Exception):
    """The one base of every exception `specs` raises on purpose (docs/design.md, "Errors and exit
    codes"): a problem with the input a person can act on, never a bug."""


@dataclass
class SpecError(SpecsError):
    """A spec that cannot be used: one or more problems, each with file:line:column."""

    file: str
    problems: list[tuple[str, int | None, int | None, Path, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(str(self))

    @property
    def line(self) -> int | None:
        return self.problems[0][1] if self.problems else None

    @property
    def column(self) -> int | None:
        return self.problems[0][2] if self.problems else None

    @property
    def field_path(self) -> str:
        return format_path(self.problems[0][3]) if self.problems else ""

    @classmethod
    def at(cls, file: str, message: str, line: int | None = None, col: int | None = None, path: Path = ()) -> SpecError:
        """A single problem in `file`."""
        return cls(file, [(file, line, col, tuple(path), message)])

    def lines(self) -> list[str]:
        out = []
        for file, line, col, path, message in self.problems:
            where = file
            if line is not None:
                where += f":{line}:{col}"
            where += ":"
            where += f" {shorten(format_path(path), 200)}:" if path else ""
            out.append(shorten(f"{where} {message}", 1000))
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())
