"""The import contract of docs/design.md ("Layout"): ``specs <- simulate <- solver``, ``evt``
importing nothing of ours, and no cycle between modules.

Every module of the four packages (and the root module in ``api/``) is parsed with `ast`; every
``import`` and ``from ... import`` counts, also the ones inside functions (a cycle through a
function-level import is still a cycle: the two modules cannot be understood, tested or moved
apart).  Imports under ``if TYPE_CHECKING:`` never run: they count for the layers but not for
cycles.  ``from tasksolve.pkg import name`` resolves to the submodule ``pkg.name`` if there is
one, else, for a lazy package ``__init__`` (PEP 562), to the module its ``lazy_loader.attach`` table names.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"tasksolve": "api", "tasksolve.specs": "specs", "tasksolve.simulate": "simulate"}
FOLDERS.update({"tasksolve.evt": "evt", "tasksolve.solver": "solver"})

# What each package may import of ours (docs/design.md, "Layout"); the root module may import all.
ALLOWED = {
    "specs": {"specs"},
    "simulate": {"specs", "simulate"},
    "evt": {"evt"},
    "solver": {"specs", "simulate", "evt", "solver"},
    "": {"specs", "simulate", "evt", "solver", ""},
}

# Cycles that exist today and are being removed by the helper named beside each (issue 22): the
# test fails on any other cycle, and on one of these once it is gone (so the list only shrinks).
KNOWN_CYCLES: dict[frozenset[str], str] = {}


def _modules() -> dict[str, Path]:
    """Module name -> file, for every module of ours."""
    found: dict[str, Path] = {}
    for package, folder in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if package == "tasksolve" and parts != ("__init__",) and parts != ("__main__",):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


MODULES = _modules()


def _lazy_exports(package: str) -> dict[str, str]:
    """The table of a lazy package ``__init__``: name -> defining module, from its
    ``lazy_loader.attach(__name__, submod_attrs={submodule: [names]})`` call."""
    path = MODULES.get(package)
    if path is None or path.name != "__init__.py":
        return {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "lazy_loader.attach":
            table = next(k.value for k in node.keywords if k.arg == "submod_attrs")
            assert isinstance(table, ast.Dict), f"{path}: submod_attrs is not a literal dict"
            return {
                name.value: f"{package}.{sub.value}"
                for sub, names in zip(table.keys, table.values)
                for name in names.elts
            }
    return {}


def _resolve(module: str, names: list[str]) -> Iterator[str]:
    """The modules of ours that ``from module import names`` loads."""
    if not module.startswith("tasksolve"):
        return
    exports = _lazy_exports(module)
    for name in names:
        if f"{module}.{name}" in MODULES:
            yield f"{module}.{name}"
        elif name in exports:
            yield exports[name]
        elif module in MODULES:
            yield module


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
    )


def _imports(name: str, path: Path) -> Iterator[tuple[str, bool]]:
    """(module imported, runs at all) for every import statement of module `name`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def visit(node: ast.AST, runs: bool) -> Iterator[tuple[str, bool]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tasksolve"):
                    yield alias.name, runs
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            for target in _resolve(base, [alias.name for alias in node.names]):
                yield target, runs
        for child in ast.iter_child_nodes(node):
            yield from visit(child, runs and not _is_type_checking(node))

    yield from visit(ast.parse(path.read_text()), True)


def _graph(runtime_only: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for target, runs in _imports(name, path):
            if target != name and target in MODULES and (runs or not runtime_only):
                graph[name].add(target)
    return graph


def _layer(module: str) -> str:
    """The package of ours a module belongs to; "" for the root module (``api/``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] != "__main__" else ""


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components with more than one module (the cycles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def test_the_parser_sees_every_package():
    assert {_layer(m) for m in MODULES} == set(ALLOWED)
    assert "tasksolve.simulate.des.run" in MODULES and "tasksolve.solver.cli" in MODULES


def test_each_package_imports_only_the_packages_below_it():
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in _graph(runtime_only=False).items()
        for target in targets
        if _layer(target) not in ALLOWED[_layer(module)]
    )
    assert wrong == []


def test_no_import_cycles_between_modules():
    cycles = [frozenset(component) for component in strongly_connected(_graph(runtime_only=True))]
    unexpected = [sorted(c) for c in cycles if c not in KNOWN_CYCLES]
    assert unexpected == [], f"import cycles: {unexpected}"
    gone = [f"{sorted(c)} ({who})" for c, who in KNOWN_CYCLES.items() if c not in cycles]
    assert gone == [], f"these cycles are gone: remove them from KNOWN_CYCLES: {gone}"


def test_function_level_imports_count_and_type_checking_ones_do_not_run(tmp_path):
    path = tmp_path / "fake.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "from tasksolve.specs import load_spec\n"
        "if TYPE_CHECKING:\n"
        "    from tasksolve.simulate.oracle import Oracle\n"
        "def later():\n"
        "    from tasksolve.simulate.des import run\n"
    )
    found = set(_imports("tasksolve.specs.fake", path))
    assert found == {
        ("tasksolve.specs.loader", True),  # through the lazy table of specs/__init__.py
        ("tasksolve.simulate.oracle", False),
        ("tasksolve.simulate.des.run", True),
    }


def test_the_cycle_finder_on_known_graphs():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": {"f"}}
    assert sorted(map(sorted, strongly_connected(graph))) == [["a", "b", "c"], ["d", "e"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []
