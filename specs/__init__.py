"""What is the problem? The spec language of tasksolve.

pydantic models (`Spec`, `Topology`, `Application`, `Plan`), YAML loading with errors that name
file:line:column (`load_spec`, `SpecError`), units, JSON Schema, hardware symmetry and counting,
and the built-in example library (``specs/examples``).
"""

from tasksolve.specs.application import Application, Edge, Task
from tasksolve.specs.counting import count_distinct, count_placements
from tasksolve.specs.errors import SpecError
from tasksolve.specs.loader import builtin_names, dump_spec, load_spec, load_spec_text, load_topology
from tasksolve.specs.plan import Plan, PlanThread, check_plan, load_plan
from tasksolve.specs.spec import Spec, ThreadRef
from tasksolve.specs.symmetry import UsableTree
from tasksolve.specs.topology import MACHINE, Topology
from tasksolve.specs.units import Duration

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
