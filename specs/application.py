"""Applications: task graphs (DAGs with one entry) with per-task work and resource demands."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema, field_validator, model_validator

from tasksolve.specs.devices import DeviceUse
from tasksolve.specs.fields import (
    Count,
    Cycles,
    Demand,
    Fraction,
    Name,
    NonNegativeInt,
    Number,
    PositiveNumber,
    Size,
    StrictModel,
    Text,
)
from tasksolve.specs.units import UnitError, parse_fraction


def _part(value):
    """A part of a task's cycles: a plain number of cycles, or a share of them (``25%``)."""
    if isinstance(value, str):
        try:
            parse_fraction(value)
        except UnitError as exc:
            raise ValueError(f"{exc}; give cycles (`120`) or a share of the task's cycles (`25%`)") from None
    return value


Part = Annotated[
    PositiveNumber | str,
    BeforeValidator(_part),
    WithJsonSchema(
        {
            "type": ["string", "number"],
            "description": "cycles (`120`) or a share of the task's cycles (`25%`)",
            "examples": ["25%"],
        }
    ),
]


class Critical(StrictModel):
    """NPIRE §2.4, §2.7: the last `cycles` of the task (a number, or a share of its cycles; all of
    it by default) run inside the critical section of `lock`, one lock per application instance
    (the persistent heap its tasks and their replicas share); at most one thread holds it at a
    time.  With `speculate` (the fraction of executions that fail) the section runs optimistically
    without the lock, and a failed execution costs `rollback` cycles (Table 3: 40) and runs again.

    `conflict` (with `speculate`; default 0) makes failures depend on what the threads touch: an
    execution also fails when one of the executions of the same lock's sections that committed
    while it ran wrote what it read, each with probability `conflict` -- with ``k`` such commits it
    fails with probability ``1 - (1 - speculate) * (1 - conflict)^k`` (the first to commit wins,
    the order NPIRE §2.7 imposes)."""

    lock: Name
    cycles: Part = "100%"
    speculate: Fraction | None = None
    rollback: Annotated[Number, Field(ge=0, le=1e12)] = 40.0
    conflict: Fraction | None = Field(
        default=None,
        description="with `speculate`: the chance that one commit of the same lock's sections during an "
        "execution makes it fail (default 0: failures independent of the other threads)",
    )

    @field_validator("conflict")
    @classmethod
    def _conflict_needs_speculation(cls, value, info):
        if value is not None and info.data.get("speculate") is None:
            raise ValueError(
                "`conflict` applies to an optimistic section: give `speculate` too (its failure fraction "
                "without conflicts, e.g. `speculate: 0`)"
            )
        return value


class Task(StrictModel):
    """A task: `cycles` of work per visit; `demand[r]` is the share of resource r's capacity it
    loads per cycle of progress when alone; `idle_demand[r]` what it loads while waiting for input
    (busy-polling runtimes spin).  `frequency` is how often a packet visits the task on average
    (LATA, DAC'10 §2.4: profiled "average execution time and frequency for each task"), so a packet
    costs it ``cycles * frequency`` (`work`); `code_size` its instructions (DAC'10 §4, Table 1),
    which a thread's instruction cache must hold (`Topology.icache`).

    On a topology with kinds of core (`specs.cpu_kinds`) `cycles` may be given per kind
    (``cycles: {P: 900, E: 1500}``): they go to `cycles_by_kind`, and `cycles` becomes the
    smallest of them (the figure models that do not know kinds read).

    On a resource with a measured capacity (``200GB/s``, ``32MiB``, ``20Mpps``) a demand may be
    measured too: bytes moved per packet (``256B``), a working set (``2MiB``) or packets
    (``1packet``); the spec converts it into the share it is (`specs.measured`).

    `replicas` (binding specs): the task is run by that many threads that share its packets, each
    packet visiting **one** of them (DPDK's RX -> N workers, an acceptor's worker pool, a batcher's
    model replicas): `dispatch` ``round_robin`` sends packet ``k`` to replica ``k mod N``, ``hash``
    to a replica drawn at random for each packet (as RSS spreads flows).  Each replica is a thread
    to place; the messages of a packet go to and come from the one replica that handles it.  In a
    pipeline spec, ``replicas: N`` (N >= 2) fixes the replica count of the stage that runs the
    task (`solver.pipeline.candidates`, "Fixed replicas"), whose replicas take packets in turn.

    `device`: the topology device (`specs.devices`) the task reads or writes per packet; reaching
    it costs a message from the device's domain to the task's context."""

    cycles: Annotated[
        Cycles,
        WithJsonSchema(
            {
                "anyOf": [
                    {"type": "number", "exclusiveMinimum": 0, "maximum": 1e12},
                    {"type": "object", "additionalProperties": {"type": "number", "exclusiveMinimum": 0}},
                ],
                "description": "cycles of work per packet (0 < cycles <= 1e12), or per kind of core: "
                "`{P: 900, E: 1500}`",
            }
        ),
    ]
    cycles_by_kind: Annotated[dict[Name, Cycles], Field(min_length=1, max_length=16)] | None = Field(
        default=None, description="cycles on each kind of core (`cycles: {P: 900, E: 1500}` fills it)"
    )
    demand: dict[str, Demand] = {}
    idle_demand: dict[str, Demand] = {}
    frequency: Annotated[Number, Field(gt=0, le=1e6, description="mean visits per packet (default 1)")] = 1.0
    code_size: NonNegativeInt | None = Field(default=None, description="instructions (LATA i-cache limit)")
    description: Text | None = None
    critical: Critical | None = None  # NPIRE critical section
    signal: Fraction | None = None  # NPIRE §2.6: messages leave after this share of the cycles
    device: DeviceUse | None = Field(
        default=None, description="the topology device it reads or writes (`nic0`, or `{name: nic0, bytes: 2KiB}`)"
    )
    replicas: Annotated[Count, Field(le=4096, description="threads sharing the task's packets (default 1)")] = 1
    dispatch: Literal["round_robin", "hash"] = Field(
        default="round_robin", description="which replica takes a packet: in turn, or at random per packet"
    )

    @model_validator(mode="before")
    @classmethod
    def _cycles_per_kind(cls, data: object) -> object:
        """``cycles: {P: 900, E: 1500}`` -> `cycles_by_kind`, `cycles` the smallest."""
        if isinstance(data, dict) and isinstance(data.get("cycles"), dict):
            given = data["cycles"]
            if "cycles_by_kind" in data:
                raise ValueError("give the cycles per kind in `cycles` or in `cycles_by_kind`, not both")
            data = {**data, "cycles_by_kind": given, "cycles": 1.0}  # the smallest, once checked
        return data

    @model_validator(mode="after")
    def _smallest_cycles(self) -> Task:
        if self.cycles_by_kind:
            object.__setattr__(self, "cycles", min(self.cycles_by_kind.values()))
        return self

    @property
    def critical_cycles(self) -> float:
        """Cycles inside the critical section (0 without one)."""
        if self.critical is None:
            return 0.0
        part = self.critical.cycles
        return self.cycles * parse_fraction(part) if isinstance(part, str) else float(part)

    @property
    def work(self) -> float:
        """Cycles per packet: `cycles` times `frequency`."""
        return self.cycles * self.frequency


class Edge(StrictModel):
    """A message of `bytes` from one task to another, per packet."""

    source: str = Field(alias="from")
    target: str = Field(alias="to")
    bytes: Size = 0


class Application(StrictModel):
    """A task graph: tasks in the order given, edges between them."""

    description: Text | None = None
    tasks: Annotated[dict[Name, Task], Field(min_length=1, max_length=512)]
    edges: list[Edge] = []

    @cached_property
    def task_names(self) -> list[str]:
        return list(self.tasks)

    @cached_property
    def predecessors(self) -> dict[str, list[str]]:
        preds: dict[str, list[str]] = {name: [] for name in self.tasks}
        for edge in self.edges:
            if edge.target in preds:
                preds[edge.target].append(edge.source)
        return preds

    @cached_property
    def successors(self) -> dict[str, list[str]]:
        succs: dict[str, list[str]] = {name: [] for name in self.tasks}
        for edge in self.edges:
            if edge.source in succs:
                succs[edge.source].append(edge.target)
        return succs

    def edge_bytes(self, source: str, target: str) -> int:
        for edge in self.edges:
            if edge.source == source and edge.target == target:
                return edge.bytes
        raise KeyError((source, target))

    @cached_property
    def entries(self) -> list[str]:
        return [name for name, preds in self.predecessors.items() if not preds]

    @cached_property
    def exits(self) -> list[str]:
        return [name for name, succs in self.successors.items() if not succs]

    def find_cycle(self) -> list[str] | None:
        """A directed cycle as a list of task names (first repeated at the end), or None."""
        from tasksolve.specs.graphs import CycleError, topological_order

        try:
            topological_order(list(self.tasks), self.predecessors.__getitem__)
        except CycleError as exc:
            return list(exc.args[1])
        return None

    @cached_property
    def topological_order(self) -> list[str]:
        """Tasks in a topological order, ties broken by the order they are given in."""
        from tasksolve.specs.graphs import topological_order

        return topological_order(list(self.tasks), self.predecessors.__getitem__)

    @property
    def total_cycles(self) -> float:
        return sum(task.work for task in self.tasks.values())
