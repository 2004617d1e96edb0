"""Pinning lines: how to run each thread of a plan on its hardware context."""

from __future__ import annotations

from specs.plan import Plan
from specs.spec import Spec


def taskset_lines(spec: Spec, plan: Plan) -> list[str]:
    """How to pin the threads on Linux: the CPU number of each thread's context.

    CPU numbers follow the topology's context order (context i = CPU i); on a real machine map
    them with the numbering of ``lscpu -e`` first.
    """
    topo = spec.topology
    lines = []
    for thread, context in plan.bindings.items():
        lines.append(f"{thread}: taskset -c {topo.parse_context(context)}   # {context}")
    return lines
