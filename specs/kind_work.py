"""A task's cycles on each kind of core (`specs.cpu_kinds`), in cycles of the topology's clock.

Kept apart from the kinds' model so that what converts quantities (`specs.measured`) can read it
without importing the spec's field types.
"""

from __future__ import annotations


def kind_work(task, kinds: list[str], topology) -> tuple[float, ...]:
    """Cycles of `topology.clock` that one packet of `task` takes on each kind (in `kinds`
    order): its cycles on the kind (given per kind, or its reference cycles over the kind's
    `ipc`) times its `frequency`, over the kind's speed."""
    if not topology.kinds:
        return (float(task.work),)
    out = []
    for name, speed in zip(kinds, topology.kind_speeds):
        kind = topology.kinds[name]
        given = (task.cycles_by_kind or {}).get(name)
        cycles = given if given is not None else task.cycles / kind.ipc
        out.append(cycles * task.frequency / speed)
    return tuple(out)
