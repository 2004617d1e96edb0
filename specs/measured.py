"""Measured capacities and demands: GB/s, MiB and Mpps converted into the model's shares.

A resource may give its capacity as people measure it (``capacity: 200GB/s``, ``100Gb/s``,
``32MiB``, ``20Mpps``), and a task its demand on such a resource in bytes or packets
(``demand: {membw: 256B}``, ``{l3: 2MiB}``, ``{nic: 1packet}``).  The model knows only shares: a
demand is the share of the capacity the task loads per cycle of progress when alone
(`specs.application.Task`; docs/design.md, "Semantics every oracle shares"), and a thread alone
on the resource progresses at ``min(1, capacity / demand)``.  So, with the topology's clock ``f``
(cycles per second) and the task's work ``W`` (cycles per packet, on the fastest kind of core):

* **bandwidth** ``C`` bytes/s, demand ``B`` bytes moved per packet: at full rate the task does
  ``f / W`` packets per second, moving ``B * f / W`` bytes per second, so its share is
  ``B * f / (W * C)``;
* **packet rate** ``C`` packets/s, demand ``n`` packets per packet (``1packet``; a task that
  emits two frames per packet ``2packets``): likewise ``n * f / (W * C)``;
* **size** ``C`` bytes (a cache), demand a working set ``S`` bytes: a footprint, held whatever the
  speed, so its share is ``S / C``.

The resource's capacity becomes 1 in the model.  ``W`` is the least work any kind of core does on
a packet (`specs.kind_work`: the task's ``work`` without kinds): the model holds one
demand per task whatever the kind, and the fastest kind moves the bytes fastest, so the share is
the load the task can put on the resource; on a slower kind, and while it pays for incoming
messages (which depend on the plan), it loads the resource less than the model says -- the
conversion never promises more bandwidth than the resource gives.  A share above 1 is refused:
a task whose cycles were measured alone cannot move more than the resource carries.

Idle demands (`Task.idle_demand`) may be a working set on a size resource; a waiting task moves no
packets, so on a bandwidth or a packet rate it is a share.

A measured value is held as its share, a float (`Measured`) that remembers what was written, so
every model reads numbers as before and `specs.loader.dump_spec` writes the units back.  The spec
converts its tasks' demands when it is validated (`convert_applications`); `check_measured` says
which cannot be converted, and `explain` how each was (``tasksolve validate --explain``).
"""

from __future__ import annotations

from dataclasses import dataclass

from tasksolve.specs.units import Measure, format_frequency

TABLES = ("demand", "idle_demand")
KIND_WORDS = {"bandwidth": "bandwidth", "size": "size", "rate": "packet rate"}


class Measured(float):
    """A share (the float's value) converted from a measure as written (`written`); until a spec
    joins it with its resource (`converted` False) the share is 0 and dumps write the measure."""

    written: Measure
    converted: bool

    def __new__(cls, share: float, written: Measure, converted: bool = True) -> Measured:
        self = super().__new__(cls, share)
        self.written = written
        self.converted = converted
        return self

    def __reduce__(self):
        return (Measured, (float(self), self.written, self.converted))


@dataclass(frozen=True)
class Conversion:
    """How one measured demand became a share (`share` None: it cannot be, `problem` says why)."""

    app: str
    task: str
    table: str
    resource: str
    written: Measure
    capacity: Measure | None
    work: float = 0.0  # cycles per packet the conversion used (rates only)
    kind: str = ""  # the kind of core those cycles are on ("" without kinds)
    share: float | None = None
    problem: str | None = None

    @property
    def path(self) -> tuple:
        return ("applications", self.app, "tasks", self.task, self.table, self.resource)


def _fastest_work(task, topology) -> tuple[float, str]:
    """The least cycles of the topology's clock a packet of `task` takes on any kind of core."""
    from tasksolve.specs.kind_work import kind_work

    works = kind_work(task, topology.kind_names, topology)
    best = min(range(len(works)), key=works.__getitem__)
    return float(works[best]), topology.kind_names[best] if topology.kinds else ""


def _mismatch(written: Measure, capacity: Measure, resource: str, table: str) -> str | None:
    """Why `written` cannot load a resource of `capacity` (None: it can)."""
    where = f"`{resource}` has a {KIND_WORDS[capacity.kind]} for capacity ({capacity})"
    if capacity.kind == "size" and written.kind != "size":
        return f"{where}: a demand on it is a working set (`2MiB`) or a share, not `{written}`"
    if capacity.kind == "bandwidth" and written.kind != "size":
        return f"{where}: a demand on it is bytes moved per packet (`256B`) or a share, not `{written}`"
    if capacity.kind == "rate" and written.kind != "packets":
        return f"{where}: a demand on it is packets per packet (`1packet`) or a share, not `{written}`"
    if table == "idle_demand" and capacity.kind != "size":
        return (
            f"{where}: a waiting task moves no packets, so its idle demand on it is a share (`0.1`, `10%`), "
            f"not `{written}`"
        )
    return None


def convert(app: str, task_name: str, task, table: str, resource: str, written: Measure, topology) -> Conversion:
    """The share of one measured demand (module docstring), or why there is none."""
    base = Conversion(app, task_name, table, resource, written, None)
    if resource not in topology.resource_names:
        return base  # an unknown resource: `specs.checks.check_application` says so
    capacity = topology.resource(resource).capacity
    measure = getattr(capacity, "written", None)
    if measure is None:
        return _replace(
            base,
            problem=f"`{written}` is a measured demand, but `{resource}` has a unitless capacity "
            f"({number(float(capacity))}): give a share (`0.25`, `25%`), or give `{resource}` a measured capacity "
            "(`capacity: 200GB/s`, `32MiB`, `20Mpps`)",
        )
    base = _replace(base, capacity=measure)
    problem = _mismatch(written, measure, resource, table)
    if problem:
        return _replace(base, problem=problem)
    if measure.kind == "size":
        share, work, kind = written.value / measure.value, 0.0, ""
    else:
        work, kind = _fastest_work(task, topology)
        share = written.value * topology.clock / (work * measure.value)
    done = _replace(base, share=share, work=work, kind=kind)
    if share > 1:
        return _replace(done, problem=_over(done, topology))
    return done


def number(value: float) -> str:
    """A share or a ratio for reading: three significant digits."""
    return f"{value:.3g}"


def _per_second(value: float, unit: str) -> str:
    """``5.08e8`` B/s -> ``508 MB/s``; packets/s -> ``Mpps``."""
    names = ("GB/s", "MB/s", "kB/s", "B/s") if unit == "B/s" else ("Gpps", "Mpps", "kpps", "pps")
    for name, scale in zip(names, (1e9, 1e6, 1e3, 1.0)):
        if value >= scale or scale == 1.0:
            return f"{value / scale:.3g} {name}"
    raise AssertionError("unreachable")  # pragma: no cover


def _replace(conversion: Conversion, **changes) -> Conversion:
    from dataclasses import replace

    return replace(conversion, **changes)


def _over(c: Conversion, topology) -> str:
    """Why a share above 1 is refused."""
    if c.capacity is not None and c.capacity.kind == "size":
        return (
            f"the working set `{c.written}` is larger than `{c.resource}` ({c.capacity}): "
            f"{number(c.share)} times its capacity; a share is at most 1"
        )
    hint = (
        f"; if `{c.written}` is a working set, it belongs on a size resource (a cache: `capacity: 32MiB`)"
        if c.written.kind == "size"
        else ""
    )
    return (
        f"`{c.written}` per packet of {c.work:g} cycles at {format_frequency(topology.clock)} is "
        f"{number(c.share)} times `{c.resource}`'s {c.capacity}: a task measured alone cannot move more than the "
        f"resource carries -- check its cycles, the capacity, or the unit{hint}"
    )


def conversions(spec) -> list[Conversion]:
    """Every measured demand of `spec`, in application, task and table order."""
    out = []
    for app_name, app in spec.applications.items():
        for task_name, task in app.tasks.items():
            for table in TABLES:
                for resource, value in getattr(task, table).items():
                    if isinstance(value, Measured):
                        out.append(convert(app_name, task_name, task, table, resource, value.written, spec.topology))
    return out


def convert_applications(spec) -> dict | None:
    """`spec`'s applications with every measured demand converted to its share (copies; the
    applications given are left alone), or None when there is none.  A demand that cannot be
    converted stays unconverted (`check_measured` refuses it)."""
    found = conversions(spec)
    if not found:
        return None
    by_task: dict[tuple[str, str], list[Conversion]] = {}
    for c in found:
        by_task.setdefault((c.app, c.task), []).append(c)
    apps = dict(spec.applications)
    for app_name in {c.app for c in found}:
        tasks = dict(apps[app_name].tasks)
        for (owner, task_name), done in by_task.items():
            if owner != app_name:
                continue
            task = tasks[task_name]
            update = {table: dict(getattr(task, table)) for table in TABLES}
            for c in done:
                ok = c.share is not None and c.problem is None
                update[c.table][c.resource] = Measured(c.share if ok else 0.0, c.written, converted=ok)
            tasks[task_name] = task.model_copy(update=update)
        apps[app_name] = apps[app_name].model_copy(update={"tasks": tasks})
    return apps


def check_measured(spec) -> list:
    """Located problems: measured demands on unitless capacities, of the wrong kind, or above 1."""
    from tasksolve.specs.errors import Problem

    return [Problem(c.path, c.problem) for c in conversions(spec) if c.problem]


def explain(spec) -> list[str]:
    """One line per converted demand: what was written and the share it became."""
    lines = []
    for c in conversions(spec):
        if c.problem or c.share is None:
            continue
        owner = f"{c.app}.{c.task}" + (" (idle)" if c.table == "idle_demand" else "")
        if c.capacity.kind == "size":
            what = f"working set {c.written} of {owner}"
        else:
            on = f" on {c.kind} cores" if c.kind else ""
            rate = c.written.value * spec.topology.clock / c.work
            unit = "B/s" if c.capacity.kind == "bandwidth" else "pps"
            what = (
                f"{c.written} per packet of {owner} ({c.work:g} cycles{on} at {format_frequency(spec.topology.clock)}: "
                f"{_per_second(rate, unit)} at full speed)"
            )
        lines.append(f"{c.resource}: {what} = {number(c.share)} of {c.capacity}")
    return lines
