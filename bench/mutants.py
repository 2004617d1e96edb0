"""The mutants of one module, generated from its syntax tree (`bench/mutation.py` runs them).

One change each:

* ``compare``: ``>`` <-> ``>=``, ``<`` <-> ``<=``, ``==`` <-> ``!=``, ``is`` <-> ``is not``,
  ``in`` <-> ``not in``;
* ``arith``: ``+`` <-> ``-``, ``*`` <-> ``/``, ``//`` -> ``/``, ``**`` -> ``*`` (also in ``x += y``);
* ``constant``: an int ``c`` -> ``c + 1``, a float ``c`` -> ``c * 1.01`` (0.0 -> 0.01);
* ``sign``: a unary minus removed;
* ``negate``: the condition of an ``if``, ``while``, conditional expression or comprehension filter
  negated, or a ``not`` removed;
* ``boolop``: ``and`` <-> ``or``;
* ``minmax``: ``max(...)`` <-> ``min(...)``;
* ``return``: ``return <value>`` -> ``return None``;
* ``delete``: a statement of a function body replaced by ``pass`` (in the LP modules, dropping a
  constraint-adding call is the mutant that matters).

Not mutated (equivalent by construction): docstrings and other strings, annotations (never evaluated
under ``from __future__ import annotations``), decorators, imports, nested definitions, ``pass``; a
mutant whose syntax tree equals the module's or an earlier mutant's is skipped.

Each mutant is the module's source with only the changed node's text replaced (``ast.unparse`` of
the changed node over the node's own span), so line numbers and the rest of the file are the
module's; where that splice would not parse to the changed tree (operator precedence), the whole
module is unparsed instead.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

_CMP = {
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_ARITH = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Pow: ast.Mult,
}
_SKIP_FIELDS = {"annotation", "returns", "decorator_list", "type_ignores"}
_NO_DELETE = (ast.Return, ast.Pass, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


@dataclass
class Mutant:
    id: int
    line: int
    col: int  # of the changed node: two mutants may read alike on one line (`EQUIVALENT` keys)
    operator: str
    description: str
    source: str

    @property
    def key(self) -> str:
        return key(self.line, self.col, self.description)


def key(line: int, col: int, description: str) -> str:
    """How a mutant is named in the tables of `bench/mutation.py`: ``L<line>:<col> <description>``."""
    return f"L{line}:{col} {description}"


# --------------------------------------------------------------------------- generating mutants
def _short(node: ast.AST | str) -> str:
    text = node if isinstance(node, str) else ast.unparse(node)
    text = " ".join(text.split())
    return text if len(text) <= 70 else text[:67] + "..."


def _docstring(node: ast.AST) -> ast.AST | None:
    body = getattr(node, "body", None)
    if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body:
        first = body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            return first
    return None


def _guard(node: ast.AST) -> bool:
    """``if __name__ == "__main__":`` and ``if TYPE_CHECKING:`` blocks are not the module's behaviour."""
    if not isinstance(node, ast.If):
        return False
    text = ast.unparse(node.test)
    return text in ("__name__ == '__main__'", "TYPE_CHECKING", "typing.TYPE_CHECKING")


Site = tuple[str, ast.AST, Callable[[], tuple[ast.AST | str, Callable[[], None]]]]


def _swap(node: ast.AST, attr: str, new: object) -> Callable[[], tuple[ast.AST, Callable[[], None]]]:
    def apply() -> tuple[ast.AST, Callable[[], None]]:
        old = getattr(node, attr)
        setattr(node, attr, new)
        return node, lambda: setattr(node, attr, old)

    return apply


def _replace(holder: object, attr: str, index: int | None, new: ast.AST, anchor: ast.AST):
    """Put `new` where `anchor` stands (``holder.attr`` or ``holder.attr[index]``)."""

    def apply() -> tuple[ast.AST | str, Callable[[], None]]:
        if index is None:
            setattr(holder, attr, new)
            return new, lambda: setattr(holder, attr, anchor)
        getattr(holder, attr)[index] = new
        return (
            "pass" if isinstance(new, ast.Pass) else new,
            lambda: getattr(holder, attr).__setitem__(index, anchor),
        )

    return apply


def _ops(node: ast.AST, parent: object, attr: str, index: int | None) -> list[Site]:
    """The expression-level sites of one node."""
    sites: list[Site] = []
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in _CMP:
                ops = list(node.ops)
                ops[i] = _CMP[type(op)]()
                sites.append(("compare", node, _swap(node, "ops", ops)))
    elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _ARITH:
        operands = (node.left, node.right) if isinstance(node, ast.BinOp) else (node.target, node.value)
        strings = [n for n in operands if isinstance(n, ast.Constant | ast.JoinedStr)]
        if not any(isinstance(n, ast.JoinedStr) or isinstance(n.value, str) for n in strings):
            sites.append(("arith", node, _swap(node, "op", _ARITH[type(node.op)]())))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Not):
        kind = "sign" if isinstance(node.op, ast.USub) else "negate"
        sites.append((kind, node, _replace(parent, attr, index, node.operand, node)))
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value = node.value + 1 if isinstance(node.value, int) else (node.value * 1.01 if node.value else 0.01)
        sites.append(("constant", node, _swap(node, "value", value)))
    elif isinstance(node, ast.BoolOp):
        sites.append(("boolop", node, _swap(node, "op", ast.Or() if isinstance(node.op, ast.And) else ast.And())))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("max", "min"):
        sites.append(("minmax", node.func, _swap(node.func, "id", "min" if node.func.id == "max" else "max")))
    return sites


def _conditions(node: ast.AST) -> list[Site]:
    """Negated conditions: ``if``/``while``/conditional expressions and comprehension filters."""
    tests: list[tuple[object, str, int | None, ast.AST]] = []
    if isinstance(node, ast.If | ast.While | ast.IfExp):
        tests.append((node, "test", None, node.test))
    elif isinstance(node, ast.comprehension):
        tests += [(node, "ifs", i, t) for i, t in enumerate(node.ifs)]
    sites: list[Site] = []
    for holder, attr, index, test in tests:
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            new = ast.UnaryOp(ast.Not(), test)
            sites.append(("negate", test, _replace(holder, attr, index, new, test)))
    return sites


def _statements(node: ast.AST) -> list[Site]:
    """Deleted statements (``pass`` in their place) and neutral returns, inside a function."""
    sites: list[Site] = []
    doc = _docstring(node)
    for attr in ("body", "orelse", "finalbody"):
        block = getattr(node, attr, None)
        if not isinstance(block, list):
            continue
        for i, stmt in enumerate(block):
            if stmt is doc or not isinstance(stmt, ast.stmt) or isinstance(stmt, _NO_DELETE):
                continue
            if not isinstance(stmt, ast.Global | ast.Nonlocal):
                sites.append(("delete", stmt, _replace(node, attr, i, ast.Pass(), stmt)))
    if isinstance(node, ast.Return) and node.value is not None:
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            sites.append(("return", node.value, _replace(node, "value", None, ast.Constant(None), node.value)))
    return sites


def _sites(tree: ast.Module) -> list[Site]:
    sites: list[Site] = []

    def visit(node: ast.AST, parent: object, attr: str, index: int | None, in_function: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom) or _guard(node):
            return
        sites.extend(_ops(node, parent, attr, index) + _conditions(node))
        inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        if inside:
            sites.extend(_statements(node))
        doc = _docstring(node)
        for field, value in ast.iter_fields(node):
            if field in _SKIP_FIELDS:
                continue
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST) and child is not doc:
                        visit(child, node, field, i, inside)
            elif isinstance(value, ast.AST):
                visit(value, node, field, None, inside)

    visit(tree, None, "", None, False)
    return sites


def _splice(source: bytes, starts: list[int], anchor: ast.AST, text: str) -> str:
    begin = starts[anchor.lineno - 1] + anchor.col_offset
    end = starts[anchor.end_lineno - 1] + anchor.end_col_offset
    return (source[:begin] + text.encode() + source[end:]).decode()


def mutants(source: str) -> list[Mutant]:
    """Every mutant of `source` (module docstring), each with its line and a description."""
    tree = ast.parse(source)
    original = ast.dump(tree)
    raw = source.encode()
    starts = [0]
    for line in raw.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    found: list[Mutant] = []
    seen = {original}
    for kind, anchor, apply in _sites(tree):
        before = _short(anchor)
        line, col = anchor.lineno, anchor.col_offset
        new, undo = apply()
        try:
            expected = ast.dump(tree)
            text = new if isinstance(new, str) else ast.unparse(new)
            mutated = _splice(raw, starts, anchor, text)
            try:
                ok = ast.dump(ast.parse(mutated)) == expected
            except SyntaxError:
                ok = False
            if not ok:  # precedence or layout: the whole module, unparsed, carries the change
                mutated = ast.unparse(tree)
        finally:
            undo()
        if expected in seen:
            continue
        seen.add(expected)
        after = "(deleted)" if kind == "delete" else f"`{_short(text)}`"
        found.append(Mutant(len(found), line, col, kind, f"{kind}: `{before}` -> {after}", mutated))
    return found
