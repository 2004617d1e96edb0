"""An immutable task graph (DAG) with integer durations and optional communication delays.

This is the input of the latency (makespan) scheduling in `solver.makespan`: tasks with an
integer processing time, precedence edges ``pred -> succ`` that each carry a communication delay
(paid only when the two tasks run on different processors, the P|prec,c_ij|Cmax convention), and
the level quantities list scheduling is built on (Adam, Chandy & Dickson 1974):

* the **t-level** (top level, earliest start) of a task: the length of the longest path from an
  entry task to it, its own time excluded;
* the **b-level** (bottom level, "static level" in HLFET): the length of the longest path from it
  to an exit task, its own time included.

Both can be computed with or without the edge delays. The critical-path length is the largest
b-level. Tasks are addressed by name in the public constructor and by their integer index (the
order in which they were given) everywhere else, which keeps the scheduling code fast.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from tasksolve.solver.errors import BadProblemError


class TaskGraphError(BadProblemError):
    """A task graph is malformed (the message says how)."""


class CycleError(TaskGraphError):
    """The precedence edges contain a cycle; ``cycle`` lists its task names in order."""

    def __init__(self, cycle: list[str]) -> None:
        self.cycle = cycle
        super().__init__("the task graph has a cycle: " + " -> ".join(cycle + cycle[:1]))


class UnknownTaskError(TaskGraphError):
    """An edge names a task that does not exist."""


class DuplicateError(TaskGraphError):
    """A task or an edge is given twice."""


@dataclass(frozen=True)
class Edge:
    """A precedence ``pred -> succ`` with a communication delay paid across processors."""

    pred: str
    succ: str
    delay: int = 0


EdgeLike = Edge | tuple[str, str] | tuple[str, str, int]


def _check_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TaskGraphError(f"{what} must be an integer, got {value!r}")
    if value < 0:
        raise TaskGraphError(f"{what} must be >= 0, got {value}")
    return value


class TaskGraph:
    """An immutable DAG of tasks with integer durations and per-edge communication delays.

    ``TaskGraph({"a": 3, "b": 2}, [("a", "b", 1)])`` builds a two-task chain whose edge costs
    1 time unit when ``a`` and ``b`` run on different processors. Raises `TaskGraphError`
    (a `ValueError`) subclasses for negative or non-integer values, unknown tasks, duplicate
    edges, self loops and cycles (`CycleError` names the cycle).
    """

    def __init__(self, durations: Mapping[str, int], edges: Iterable[EdgeLike] = ()) -> None:
        names: list[str] = []
        index: dict[str, int] = {}
        times: list[int] = []
        for name, duration in durations.items():
            if not isinstance(name, str) or not name:
                raise TaskGraphError(f"task names must be non-empty strings, got {name!r}")
            index[name] = len(names)
            names.append(name)
            times.append(_check_int(duration, f"the duration of task {name!r}"))
        preds: list[list[tuple[int, int]]] = [[] for _ in names]
        succs: list[list[tuple[int, int]]] = [[] for _ in names]
        seen: set[tuple[int, int]] = set()
        for raw in edges:
            edge = raw if isinstance(raw, Edge) else Edge(*raw)
            for end in (edge.pred, edge.succ):
                if end not in index:
                    raise UnknownTaskError(f"edge {edge.pred!r} -> {edge.succ!r} names an unknown task {end!r}")
            delay = _check_int(edge.delay, f"the delay of edge {edge.pred!r} -> {edge.succ!r}")
            i, j = index[edge.pred], index[edge.succ]
            if i == j:
                raise CycleError([edge.pred])
            if (i, j) in seen:
                raise DuplicateError(f"edge {edge.pred!r} -> {edge.succ!r} is given twice")
            seen.add((i, j))
            preds[j].append((i, delay))
            succs[i].append((j, delay))
        self._names = tuple(names)
        self._durations = tuple(times)
        self._index = index
        self._preds = tuple(tuple(p) for p in preds)
        self._succs = tuple(tuple(s) for s in succs)
        self.topological_order  # validate now: raises CycleError  # noqa: B018

    @classmethod
    def from_predecessors(
        cls,
        durations: Mapping[str, int],
        predecessors: Mapping[str, Iterable[str | tuple[str, int]]],
    ) -> TaskGraph:
        """Build from ``{task: [pred, (pred, delay), ...]}`` (a pred without delay costs 0)."""
        edges: list[Edge] = []
        for succ, plist in predecessors.items():
            for p in plist:
                if isinstance(p, tuple):
                    edges.append(Edge(p[0], succ, p[1]))
                else:
                    edges.append(Edge(p, succ, 0))
        return cls(durations, edges)

    # -- basic accessors -------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"TaskGraph({len(self)} tasks, {len(self.edges)} edges, work {self.total_work})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TaskGraph):
            return NotImplemented
        return (self._names, self._durations, self._preds) == (other._names, other._durations, other._preds)

    def __hash__(self) -> int:
        return hash((self._names, self._durations, self._preds))

    @property
    def names(self) -> tuple[str, ...]:
        """Task names, in index order."""
        return self._names

    @property
    def durations(self) -> tuple[int, ...]:
        """Task durations, in index order."""
        return self._durations

    def index(self, name: str) -> int:
        """The index of task ``name`` (raises `UnknownTaskError`)."""
        try:
            return self._index[name]
        except KeyError:
            raise UnknownTaskError(f"no task named {name!r}") from None

    def predecessors(self, task: int) -> tuple[tuple[int, int], ...]:
        """``(pred index, delay)`` pairs of task index ``task``."""
        return self._preds[task]

    def successors(self, task: int) -> tuple[tuple[int, int], ...]:
        """``(succ index, delay)`` pairs of task index ``task``."""
        return self._succs[task]

    @cached_property
    def edges(self) -> tuple[Edge, ...]:
        """All edges, grouped by successor in index order."""
        return tuple(Edge(self._names[i], self._names[j], c) for j in range(len(self)) for i, c in self._preds[j])

    @cached_property
    def has_delays(self) -> bool:
        """Whether any edge has a non-zero communication delay."""
        return any(c for plist in self._preds for _, c in plist)

    @cached_property
    def total_work(self) -> int:
        """Sum of all durations."""
        return sum(self._durations)

    def without_delays(self) -> TaskGraph:
        """The same graph with every communication delay set to 0."""
        return TaskGraph(dict(zip(self._names, self._durations)), [Edge(e.pred, e.succ, 0) for e in self.edges])

    def with_uniform_delay(self, delay: int) -> TaskGraph:
        """The same graph with every edge's communication delay set to ``delay``."""
        return TaskGraph(dict(zip(self._names, self._durations)), [Edge(e.pred, e.succ, delay) for e in self.edges])

    # -- order and levels ------------------------------------------------------------------
    @cached_property
    def topological_order(self) -> tuple[int, ...]:
        """Task indices in a topological order (`specs.graphs`: ties by index, so deterministic)."""
        from tasksolve.specs.graphs import CycleError as GraphCycle
        from tasksolve.specs.graphs import topological_order

        try:
            return tuple(topological_order(range(len(self)), lambda j: [i for i, _ in self._preds[j]]))
        except GraphCycle as exc:
            raise CycleError(self._find_cycle(set(exc.args[1]))) from None

    def _find_cycle(self, remaining: set[int]) -> list[str]:
        """Names of one cycle among ``remaining`` (every task there lies on or behind one)."""
        # Walking backwards through predecessors that are still remaining never stops, so it
        # must revisit a task: the walk from that first revisit is a cycle.
        start = min(remaining)
        path: list[int] = []
        position: dict[int, int] = {}
        node = start
        while node not in position:
            position[node] = len(path)
            path.append(node)
            node = min(i for i, _ in self._preds[node] if i in remaining)
        cycle = path[position[node] :]
        cycle.reverse()  # predecessor walk -> edge direction
        return [self._names[i] for i in cycle]

    def t_levels(self, with_delays: bool = False) -> tuple[int, ...]:
        """Earliest start of each task with unlimited processors (longest path to it)."""
        top = [0] * len(self)
        for j in self.topological_order:
            for i, c in self._preds[j]:
                top[j] = max(top[j], top[i] + self._durations[i] + (c if with_delays else 0))
        return tuple(top)

    def b_levels(self, with_delays: bool = False) -> tuple[int, ...]:
        """Longest path from each task to an exit, its own duration included (HLFET level)."""
        bottom = list(self._durations)
        for i in reversed(self.topological_order):
            for j, c in self._succs[i]:
                bottom[i] = max(bottom[i], self._durations[i] + (c if with_delays else 0) + bottom[j])
        return tuple(bottom)

    def critical_path_length(self, with_delays: bool = False) -> int:
        """Length of the longest path (the makespan with unlimited processors when the delays
        are ignored; an upper bound on it when they are included)."""
        return max(self.b_levels(with_delays), default=0)

    def critical_path(self, with_delays: bool = False) -> tuple[str, ...]:
        """Names of the tasks of one longest path, from entry to exit."""
        if not len(self):
            return ()
        bottom = self.b_levels(with_delays)
        node = max((i for i in range(len(self)) if not self._preds[i]), key=lambda i: (bottom[i], -i))
        path = [node]
        while self._succs[node]:
            want = bottom[node] - self._durations[node]
            nxt = [j for j, c in self._succs[node] if bottom[j] + (c if with_delays else 0) == want]
            if not nxt:
                break
            node = min(nxt)
            path.append(node)
        return tuple(self._names[i] for i in path)
