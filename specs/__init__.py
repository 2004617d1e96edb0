"""What is the problem? The spec language of tasksolve.

pydantic models (`Spec`, `Topology`, `Application`, `Plan`), YAML loading with errors that name
file:line:column (`load_spec`, `SpecError`), units, JSON Schema, hardware symmetry and counting,
and the built-in example library (``specs/examples``).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and editors; never executed
    from tasksolve.specs.application import Application, Edge, Task
    from tasksolve.specs.counting import count_distinct, count_placements
    from tasksolve.specs.errors import SpecError
    from tasksolve.specs.loader import builtin_names, dump_spec, load_spec, load_spec_text, load_topology
    from tasksolve.specs.plan import Plan, PlanThread, check_plan, load_plan
    from tasksolve.specs.spec import Spec, ThreadRef
    from tasksolve.specs.symmetry import UsableTree
    from tasksolve.specs.topology import MACHINE, Topology
    from tasksolve.specs.units import Duration

# name -> module that defines it; each is imported on first access only
_EXPORTS: dict[str, str] = {
    "Application": "tasksolve.specs.application",
    "Edge": "tasksolve.specs.application",
    "Task": "tasksolve.specs.application",
    "count_distinct": "tasksolve.specs.counting",
    "count_placements": "tasksolve.specs.counting",
    "SpecError": "tasksolve.specs.errors",
    "builtin_names": "tasksolve.specs.loader",
    "dump_spec": "tasksolve.specs.loader",
    "load_spec": "tasksolve.specs.loader",
    "load_spec_text": "tasksolve.specs.loader",
    "load_topology": "tasksolve.specs.loader",
    "Plan": "tasksolve.specs.plan",
    "PlanThread": "tasksolve.specs.plan",
    "check_plan": "tasksolve.specs.plan",
    "load_plan": "tasksolve.specs.plan",
    "Spec": "tasksolve.specs.spec",
    "ThreadRef": "tasksolve.specs.spec",
    "UsableTree": "tasksolve.specs.symmetry",
    "MACHINE": "tasksolve.specs.topology",
    "Topology": "tasksolve.specs.topology",
    "Duration": "tasksolve.specs.units",
}

__all__ = [
    "Application",
    "Duration",
    "Edge",
    "MACHINE",
    "Plan",
    "PlanThread",
    "Spec",
    "SpecError",
    "Task",
    "ThreadRef",
    "Topology",
    "UsableTree",
    "builtin_names",
    "check_plan",
    "count_distinct",
    "count_placements",
    "dump_spec",
    "load_plan",
    "load_spec",
    "load_spec_text",
    "load_topology",
]


def __getattr__(name: str) -> Any:
    """Import an exported name on first access (PEP 562); later lookups find it in globals()."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
