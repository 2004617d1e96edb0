"""docs/design.md's "Layout" is true to the code: every room of `solver/` has its bullet, every
module of a room is named in it (a new module is placed in the design when it is written), and the
top-level modules of `solver/` are named in the package table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "docs" / "design.md").read_text()
LAYOUT = TEXT[TEXT.index("## Layout") : TEXT.index("## Vocabulary")]
ROOMS = dict(re.findall(r"^- `(\w+)/` -- (.*?)(?=^- |^\S|\Z)", LAYOUT, re.S | re.M))
FOLDERS = sorted(p.name for p in (ROOT / "solver").iterdir() if (p / "__init__.py").is_file())


def _named(text: str) -> set[str]:
    return set(re.findall(r"`([a-z_][a-z0-9_]*)(?:\.py)?`", text))


def test_every_room_of_the_solver_has_its_bullet():
    assert sorted(ROOMS) == FOLDERS


@pytest.mark.parametrize("room", FOLDERS)
def test_every_module_of_a_room_is_named_in_its_bullet(room):
    modules = {p.stem for p in (ROOT / "solver" / room).glob("*.py")} - {"__init__"}
    assert sorted(modules - _named(ROOMS.get(room, ""))) == []


def test_the_solver_top_level_modules_are_named():
    row = next(line for line in LAYOUT.splitlines() if line.startswith("| `solver/`"))
    modules = {p.stem for p in (ROOT / "solver").glob("*.py")} - {"__init__"}
    assert sorted(modules - _named(row) - _named(LAYOUT)) == []
