"""The command line starts without the heavy libraries (issue 22, "Start-up").

`tasksolve --version` and `--help` must parse their arguments before any of OR-Tools, SciPy,
pandas, statsmodels, matplotlib or SimPy is imported: each command module declares its options
from light modules and imports the heavy ones inside the functions that use them.  The timings
live in bench/startup.py; these tests check what is imported, which does not depend on the
machine's load.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_imports import _lazy_exports

HEAVY = ("ortools", "scipy", "pandas", "statsmodels", "matplotlib", "simpy")
ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, sys
from tasksolve.solver.cli import main
code = main({args!r})
sys.stdout.write("\\n@@" + json.dumps({{"code": code, "modules": sorted(sys.modules)}}) + "\\n")
"""


def _modules_after(args: list[str]) -> tuple[int, set[str]]:
    """Run the CLI's main in a fresh interpreter; its exit code and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(args=args)], capture_output=True, text=True, timeout=120, check=True
    )
    found = json.loads(done.stdout.rsplit("@@", 1)[1])
    return found["code"], set(found["modules"])


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["validate", "t2-ipfwd-intadd-x2"]])
def test_version_help_and_validate_import_no_heavy_library(args):
    code, modules = _modules_after(args)
    assert code == 0
    loaded = sorted({name.split(".")[0] for name in modules} & set(HEAVY))
    assert loaded == [], f"`tasksolve {' '.join(args)}` imported {loaded}"
    assert "tasksolve.solver.cli.simulate_command" in modules  # every command was declared


def test_the_probe_sees_heavy_imports():
    """The probe above would notice: a command that runs the simulation does import SimPy."""
    code, modules = _modules_after(["simulate", "t2-ipfwd-intadd-x2", "--oracle", "des", "--packets", "200"])
    assert code == 0
    assert "simpy" in modules


def test_light_copies_of_option_defaults_agree_with_their_sources():
    """Start-up reads these from light modules; they must stay what the heavy modules define."""
    from tasksolve.simulate import registry
    from tasksolve.solver.certify import designs, service
    from tasksolve.solver.cli import options

    assert options.ORACLE_KINDS == registry.KINDS
    assert options.DEFAULT_DESIGN == designs.DEFAULT_DESIGN
    assert set(options.DESIGNS) == set(service.DESIGNS)


def test_allow_outside_references_lasts_one_invocation(capsys):
    from tasksolve.solver.cli import main
    from tasksolve.specs.loader import ALLOW_OUTSIDE

    assert main(["--allow-outside-references", "validate", "t2-ipfwd-intadd-x2"]) == 0
    assert ALLOW_OUTSIDE.get() is False
    capsys.readouterr()


LAZY_PACKAGES = (
    "api",
    "specs",
    "simulate",
    "simulate/des",
    "evt",
    "solver/calibration",
    "solver/makespan",
    "solver/pipeline",
)


def _type_checking_names(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return {alias.asname or alias.name for imp in node.body for alias in imp.names}
    return set()


@pytest.mark.parametrize("folder", LAZY_PACKAGES)
def test_package_exports_are_lazy_and_complete(folder):
    """`__all__`, the TYPE_CHECKING imports (for ruff and editors) and the lazy table agree, and
    every exported name resolves to the object its defining module holds."""
    tree = ast.parse((ROOT / folder / "__init__.py").read_text())
    eager = [
        node
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tasksolve.")
    ]
    assert eager == [], "a package __init__ imports its modules at import time"
    name = "tasksolve" if folder == "api" else "tasksolve." + folder.replace("/", ".")
    package = importlib.import_module(name)
    exports = _lazy_exports(name)
    assert set(package.__all__) - {"__version__"} == set(exports) == _type_checking_names(tree)
    assert sorted(dir(package)) == sorted(package.__all__)
    for export in exports:
        value = getattr(package, export)
        assert getattr(importlib.import_module(exports[export]), export) is value


def test_a_submodule_does_not_hide_the_function_of_its_name():
    import tasksolve.evt.sequential  # noqa: F401  (binds the submodule on the package, normally)
    from tasksolve import evt

    assert callable(evt.sequential) and evt.sequential.__name__ == "sequential"
