"""What is the problem? The spec language of tasksolve.

pydantic models (`Spec`, `Topology`, `Application`, `Plan`), YAML loading with errors that name
file:line:column (`load_spec`, `SpecError`), units, JSON Schema, hardware symmetry and counting,
and the built-in example library (``specs/examples``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

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

# submodule -> the names it exports, each imported on first access (lazy_loader: PEP 562)
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "application": ["Application", "Edge", "Task"],
        "counting": ["count_distinct", "count_placements"],
        "errors": ["SpecError"],
        "loader": ["builtin_names", "dump_spec", "load_spec", "load_spec_text", "load_topology"],
        "plan": ["Plan", "PlanThread", "check_plan", "load_plan"],
        "spec": ["Spec", "ThreadRef"],
        "symmetry": ["UsableTree"],
        "topology": ["MACHINE", "Topology"],
        "units": ["Duration"],
    },
)
