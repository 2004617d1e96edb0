"""The shape of the code (docs/design.md, "Code conventions"): no module over 500 lines, no
function over 80 lines.

A function is counted from its ``def`` to its last line (decorators not included, nested functions
inside it included).  A Typer command -- a function of `solver/cli` whose parameters declare
options as call defaults (``typer.Option(...)``, ``options.seed_option()``) -- is counted from the
end of its signature: the declaration of its options is not logic.  Today's offenders that other
helpers are rewriting are listed below with who removes them; the test fails on any new one, and
on a listed one that has come back under the limit (so the list only shrinks).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("api", "specs", "simulate", "evt", "solver", "bench")
MAX_MODULE = 500
MAX_FUNCTION = 80

# "path" (a module) or "path::qualified.name" (a function) -> who brings it under the limit
KNOWN_OFFENDERS: dict[str, str] = {}


def _files() -> Iterator[Path]:
    for folder in FOLDERS:
        yield from sorted((ROOT / folder).rglob("*.py"))


def _is_command(path: Path, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A Typer command: in solver/cli, with option declarations (calls) as parameter defaults."""
    if not path.is_relative_to(ROOT) or path.relative_to(ROOT).parts[:2] != ("solver", "cli"):
        return False
    defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    return any(isinstance(d, ast.Call) for d in defaults)


def function_lengths(path: Path) -> Iterator[tuple[str, int]]:
    """(qualified name, lines) of every function of a module, nested ones included."""

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                start = child.body[0].lineno if _is_command(path, child) else child.lineno
                yield name, child.end_lineno - start + 1
                yield from visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, prefix + child.name + ".")

    yield from visit(ast.parse(path.read_text()), "")


def offenders() -> dict[str, int]:
    """Every module over `MAX_MODULE` lines and every function over `MAX_FUNCTION`, with its size."""
    found: dict[str, int] = {}
    for path in _files():
        where = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE:
            found[where] = lines
        for name, length in function_lengths(path):
            if length > MAX_FUNCTION:
                found[f"{where}::{name}"] = length
    return found


def test_no_module_or_function_over_the_limits():
    found = offenders()
    new = {where: size for where, size in found.items() if where not in KNOWN_OFFENDERS}
    assert new == {}, f"over {MAX_MODULE} lines a module / {MAX_FUNCTION} a function: {new}"
    fixed = sorted(f"{where} ({who})" for where, who in KNOWN_OFFENDERS.items() if where not in found)
    assert fixed == [], f"under the limits now: remove from KNOWN_OFFENDERS: {fixed}"


def test_lengths_are_counted_as_documented(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(79))
    (tmp_path / "m.py").write_text(
        f"def short():\n{body}\n\nclass K:\n    def long(self):\n{body.replace('    ', '        ')}        y = 1\n"
    )
    assert dict(function_lengths(tmp_path / "m.py")) == {"short": 80, "K.long": 81}


def test_a_command_is_counted_from_the_end_of_its_signature():
    path = ROOT / "solver" / "cli" / "fake_command.py"
    source = "def cmd(\n" + "".join(f"    a{i}: int = typer.Option(0),\n" for i in range(90)) + "):\n    return 1\n"
    tree = ast.parse(source)
    assert _is_command(path, tree.body[0])
    assert tree.body[0].end_lineno - tree.body[0].body[0].lineno + 1 == 1
    assert not _is_command(ROOT / "solver" / "api.py", tree.body[0])
