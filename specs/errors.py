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


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``"; did you mean `ifu`?"`` when a candidate is close to `name`, else ``""``."""
    found = difflib.get_close_matches(str(name), [str(c) for c in candidates], n=1, cutoff=0.6)
    return f"; did you mean `{found[0]}`?" if found else ""


@dataclass
class Problem:
    """One thing wrong in a spec, at a field path (located in the file later)."""

    path: Path
    message: str
    key: bool = False  # point at the mapping key rather than its value


@dataclass
class SpecError(Exception):
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
    def at(cls, file: str, message: str, line: int | None = None, col: int | None = None,
           path: Path = ()) -> "SpecError":
        """A single problem in `file`."""
        return cls(file, [(file, line, col, tuple(path), message)])

    def lines(self) -> list[str]:
        out = []
        for file, line, col, path, message in self.problems:
            where = file
            if line is not None:
                where += f":{line}:{col}"
            where += ":"
            where += f" {format_path(path)}:" if path else ""
            out.append(f"{where} {message}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())
