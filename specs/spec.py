"""A problem spec: topology, applications, workload, constraints, objective, and the settings of
the oracle, the search and the certificate."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, WithJsonSchema, model_validator

from tasksolve.specs.application import Application
from tasksolve.specs.fields import (
    Count,
    Duration,
    Fraction,
    Label,
    Name,
    NonNegativeInt,
    PositiveNumber,
    Rate,
    Seconds,
    Size,
    StrictModel,
    Text,
)
from tasksolve.specs.topology import Topology

FORMAT_VERSION = 1
THREAD_PATTERN = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)#(\d+)\.([A-Za-z_][A-Za-z0-9_-]*)(?:\.r(\d+))?$")


class WorkloadItem(StrictModel):
    """`instances` independent packet streams of one application."""

    app: str
    instances: Annotated[Count, Field(le=4096)] = 1


class Constraints(StrictModel):
    """Placement and latency constraints (all optional)."""

    contexts: list[str] | None = Field(default=None, description="only the contexts inside these domains may be used")
    pin: dict[str, str] = Field(default={}, description="thread -> the context it must run on")
    forbid: dict[str, list[str]] = Field(default={}, description="thread -> domains it must avoid")
    max_threads: dict[str, Annotated[Count, Field(le=65536)]] = Field(
        default={}, description="level -> at most this many threads in each domain of the level"
    )
    latency_max: Duration | None = Field(default=None, description="per-packet latency bound")


class Arrival(StrictModel):
    """Packet sources: saturated (always a packet waiting) or an arrival rate."""

    process: Literal["saturated", "deterministic", "poisson"] = "saturated"
    rate: Rate | None = Field(default=None, description="packets per second per instance (required unless saturated)")

    @model_validator(mode="after")
    def _rate_given(self) -> Arrival:
        if self.process != "saturated" and self.rate is None:
            raise ValueError(f"`process: {self.process}` needs a `rate` (e.g. rate: 2Mpps)")
        return self


class Service(StrictModel):
    """Distribution of a task's work around its `cycles`."""

    distribution: Literal["deterministic", "exponential", "cv"] = "deterministic"
    cv: Annotated[float, Field(ge=0, le=10)] | None = Field(
        default=None, description="coefficient of variation (with distribution: cv)"
    )


class Metric(StrictModel):
    """Where a command's figure is on its standard output: the first group (else the whole match)
    of the last match of `regex`, or the value at `json` (a key, dotted for nested objects) of the
    last line of stdout that is a JSON object."""

    regex: Annotated[str, Field(min_length=1, max_length=1000)] | None = None
    json_key: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(default=None, alias="json")
    instances: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        default=None,
        description="with `json`: the key (dotted) of an object giving each instance's own figure, "
        '{"app#0": ..., ...}; TSBSched and BlackBox profile only with it',
    )

    @model_validator(mode="after")
    def _one_source(self) -> Metric:
        if (self.regex is None) == (self.json_key is None):
            raise ValueError("give exactly one of `regex` (e.g. 'rate=([0-9.]+)') and `json` (a key)")
        if self.instances is not None and self.json_key is None:
            raise ValueError("`instances` reads a JSON object: it goes with `json`, not `regex`")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"`regex` is not a regular expression: {exc}") from None
        return self


def _registered_oracle(kind: str) -> str:
    """`kind` if it is one of the oracle kinds of `specs.oracles`."""
    from tasksolve.specs.oracles import ORACLES, unknown_message

    if kind not in ORACLES:
        raise ValueError(unknown_message(kind))
    return kind


class OracleSettings(StrictModel):
    """How plans are measured."""

    kind: Annotated[
        str,
        AfterValidator(_registered_oracle),
        WithJsonSchema(
            {"type": "string", "description": "the cost oracle (`specs.schema` lists the registered names)"}
        ),
    ] = "des"
    packets: Annotated[Count, Field(le=100_000_000)] = Field(
        default=200_000, description="simulation: stop after this many packets (all instances) at the latest"
    )
    warmup: NonNegativeInt | None = Field(
        default=None,
        description="simulation: at most this many first packets are discarded as warm-up (default 2000; "
        "the cut itself is chosen by the MSER rule); with kind: command, runs of every plan made and "
        "discarded before the measured ones (default 0)",
    )
    arrival: Arrival = Arrival()
    service: Service = Service()
    queue_capacity: Annotated[Count, Field(le=1_000_000)] = 16
    seed: NonNegativeInt = 0
    load: Annotated[Fraction, Field(gt=0, le=1)] = Field(
        default=0.9,
        description="pipelines: latency is measured with arrivals at this share of the plan's maximum "
        "sustainable rate (found by bisection), beside the saturated latency",
    )
    precision: Annotated[Fraction, Field(gt=0)] = Field(
        default=0.01,
        description="simulation: run until the throughput's 95% confidence half-width is below this fraction of it; "
        "with kind: command, runs are added to a plan (up to `budget`) until its Student-t 95% half-width is "
        "below this fraction of its mean",
    )
    time_cap: Seconds = Field(
        default=60.0,
        description="simulation: wall-clock cap per plan (`60s`); a plan "
        "that runs longer fails with a timeout instead of hanging",
    )
    command: (
        Annotated[list[Annotated[str, Field(min_length=1, max_length=4096)]], Field(min_length=1, max_length=1024)]
        | None
    ) = Field(
        default=None,
        description="with kind: command, the program and its arguments (argv, never a shell); "
        "placeholders {cpus}, {lcores}, {omp_places}, {plan_file}, {cpu:APP#I.TASK} are replaced by the plan's",
    )
    metric: Metric | None = Field(default=None, description="with kind: command, where the figure is read on stdout")
    timeout: Seconds = Field(default=30.0, description="with kind: command, wall-clock limit of one run")
    repeats: Annotated[Count, Field(le=100)] = Field(
        default=3,
        description="with kind: command, runs per plan at least (after the warm-up); the figure is their mean "
        "with its Student-t 95% interval",
    )
    budget: Annotated[Count, Field(le=10_000)] | None = Field(
        default=None,
        description="with kind: command, runs per plan at most (default `repeats`: no adaptive runs); "
        "plans compared together are measured in interleaved rounds",
    )
    range: tuple[PositiveNumber, PositiveNumber] | None = Field(
        default=None,
        description="with kind: command, the figures the metric may take, [low, high] (e.g. [1e3, 1e9] "
        "packets/s); a figure outside is an error. Always: a throughput or latency must be positive and finite",
    )
    max_output: Annotated[Size, Field(ge=1024)] = Field(
        default=4 * 1024 * 1024,
        description="with kind: command, bytes of one run's stdout (and of its stderr) kept, the last ones; "
        "more is discarded with a note (`4MiB`)",
    )

    @model_validator(mode="after")
    def _command_given(self) -> OracleSettings:
        if self.range is not None and not self.range[0] < self.range[1]:
            raise ValueError(
                f"oracle.range [{self.range[0]:g}, {self.range[1]:g}]: the low end must be below the high end"
            )
        if self.kind == "command" and (self.command is None or self.metric is None):
            missing = " and ".join(name for name in ("command", "metric") if getattr(self, name) is None)
            raise ValueError(
                f"`kind: command` needs {missing} (e.g. command: [./bench, '--cpus', '{{cpus}}'], "
                "metric: {regex: 'rate=([0-9.]+)'})"
            )
        return self


class SearchSettings(StrictModel):
    """How plans are searched."""

    method: Literal[
        "cpsat",
        "blackbox",
        "tsbsched",
        "random",
        "balanced",
        "compact",
        "compact-cores",
        "scatter",
        "distrib",
        "os",
        "all",
    ] = "cpsat"
    time_limit: Seconds = 30.0
    top_k: Annotated[Count, Field(le=1000)] = 5
    seed: NonNegativeInt = 0
    workers: Annotated[Count, Field(le=256)] | None = None


class CertifySettings(StrictModel):
    """How a plan is certified against the EVT-estimated optimum."""

    samples: Annotated[Count, Field(ge=20)] | None = Field(
        default=None,
        description="fixed sample size; default: 1000 local optima (each one a local search) or 5000 random plans "
        "(ASPLOS'12), by the sampling design",
    )
    target_gap: Fraction | None = None
    confidence: Fraction = 0.95
    n_init: Annotated[Count, Field(ge=20)] = 1000
    n_delta: Count = 500
    max_samples: Annotated[Count, Field(ge=20)] = 10_000


@dataclass(frozen=True)
class ThreadRef:
    """One thread of a binding problem: one task of one instance of an application."""

    app: str
    instance: int
    task: str
    replica: int = 0  # which of the task's `replicas` (docs/design.md, "Replicas")
    replicas: int = 1

    @property
    def task_name(self) -> str:
        """``app#i.task``: the task's name, shared by its replicas."""
        return f"{self.app}#{self.instance}.{self.task}"

    @property
    def type_key(self) -> tuple[str, str]:
        """(app, task) -- (app, ``task.rK``) for a replica: what is the same in every instance."""
        return (self.app, self.task if self.replicas == 1 else f"{self.task}.r{self.replica}")

    @property
    def name(self) -> str:
        """``app#i.task``, or ``app#i.task.rK`` for replica K of a replicated task."""
        return self.task_name if self.replicas == 1 else f"{self.task_name}.r{self.replica}"

    def __str__(self) -> str:
        return self.name


class Spec(StrictModel):
    """A whole problem: what runs (applications, workload), where (topology), under what
    constraints, for which objective."""

    tasksolve: Literal[1] = Field(description="format version")
    name: Label
    description: Text | None = None
    topology: Topology
    applications: Annotated[dict[Name, Application], Field(min_length=1)]
    workload: Annotated[list[WorkloadItem], Field(min_length=1)]
    problem: Literal["binding", "pipeline"] = Field(
        default="binding",
        description="binding: every task of every instance is a thread; pipeline: tasks are grouped "
        "into threads, stages and replicas by the pipeline methods",
    )
    constraints: Constraints = Constraints()
    objective: Literal["total_throughput", "min_throughput", "latency"] = "total_throughput"
    oracle: OracleSettings = OracleSettings()
    search: SearchSettings = SearchSettings()
    certify: CertifySettings = CertifySettings()

    @model_validator(mode="after")
    def _measured_demands(self) -> Spec:
        """Measured demands (``256B``, ``2MiB``, ``1packet``) become shares of their resources'
        measured capacities (`specs.measured`); the applications given are left alone."""
        from tasksolve.specs.measured import convert_applications

        converted = convert_applications(self)
        if converted is not None:
            self.__dict__["applications"] = converted
        return self

    @model_validator(mode="after")
    def _replica_forbids(self) -> Spec:
        """A ``forbid`` entry naming a replicated task (``app#i.task``) applies to each of its
        replicas (``app#i.task.rK``): it becomes one entry per replica."""
        forbid = self.constraints.forbid
        if self.problem != "binding" or not forbid:
            return self
        expanded: dict[str, list[str]] = {}
        for name, domains in forbid.items():
            match = THREAD_PATTERN.match(name)
            app = self.applications.get(match.group(1)) if match and match.group(4) is None else None
            task = app.tasks.get(match.group(3)) if app is not None else None
            keys = [name] if task is None or task.replicas == 1 else [f"{name}.r{k}" for k in range(task.replicas)]
            for key in keys:
                expanded[key] = expanded.get(key, []) + [d for d in domains if d not in expanded.get(key, [])]
        self.constraints.__dict__["forbid"] = expanded
        return self

    @property
    def source(self) -> str | None:
        """The file this spec was loaded from, if any (not part of the spec's value)."""
        return self.__dict__.get("_source_file")

    def set_source(self, file: str) -> None:
        self.__dict__["_source_file"] = file

    @cached_property
    def threads(self) -> list[ThreadRef]:
        """Every thread of the binding problem, in workload order."""
        out = []
        for item in self.workload:
            app = self.applications[item.app]
            for instance in range(item.instances):
                for name, task in app.tasks.items():
                    n = task.replicas if self.problem == "binding" else 1
                    out.extend(ThreadRef(item.app, instance, name, r, n) for r in range(n))
        return out

    @cached_property
    def thread_names(self) -> list[str]:
        return [t.name for t in self.threads]

    @cached_property
    def thread_index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.thread_names)}

    @cached_property
    def instances(self) -> list[tuple[str, int]]:
        """(app, instance) pairs in workload order."""
        return [(item.app, i) for item in self.workload for i in range(item.instances)]

    def instance_count(self, app: str) -> int:
        return sum(item.instances for item in self.workload if item.app == app)

    @cached_property
    def usable_contexts(self) -> list[int]:
        """Context indices inside `constraints.contexts` (all contexts when it is absent) and
        inside the topology's own `usable` domains (an imported host's allowed, online CPUs)."""
        topo = self.topology
        if self.constraints.contexts is None:
            return list(topo.usable_contexts)
        usable: set[int] = set()
        for name in self.constraints.contexts:
            usable.update(topo.contexts_of(*topo.parse_domain(name)))
        return sorted(usable.intersection(topo.usable_contexts))

    @property
    def usable_limits(self) -> str:
        """What keeps contexts from use, for messages: ``constraints.contexts`` and/or the
        topology's ``usable`` list."""
        parts = ["constraints.contexts"] if self.constraints.contexts is not None else []
        if self.topology.usable is not None:
            parts.append("the topology's `usable` list (CPUs the host's process may not use)")
        return " and ".join(parts) or "constraints.contexts"

    def parse_thread(self, name: str) -> ThreadRef:
        """``ipfwd#1.P`` -> ThreadRef; raises ValueError naming what is unknown."""
        from tasksolve.specs.errors import did_you_mean

        match = THREAD_PATTERN.match(name) if isinstance(name, str) else None
        if not match:
            example = self.thread_names[0] if self.thread_names else "app#0.task"
            raise ValueError(f"`{name}` is not a thread name of the form `app#instance.task` (e.g. `{example}`)")
        app, instance, task = match.group(1), int(match.group(2)), match.group(3)
        if app not in self.applications:
            raise ValueError(f"unknown application `{app}` in `{name}`{did_you_mean(app, self.applications)}")
        count = self.instance_count(app)
        if instance >= count:
            raise ValueError(f"`{name}`: {app} has {count} instance(s) in the workload (#0..#{count - 1})")
        if task not in self.applications[app].tasks:
            raise ValueError(f"unknown task `{task}` in `{name}`{did_you_mean(task, self.applications[app].tasks)}")
        replicas = self.applications[app].tasks[task].replicas if self.problem == "binding" else 1
        if match.group(4) is None and replicas > 1:
            raise ValueError(
                f"`{name}` is run by {replicas} replicas: name one, `{name}.r0` .. `{name}.r{replicas - 1}`"
            )
        replica = 0 if match.group(4) is None else int(match.group(4))
        if replica >= replicas:
            which = "is not replicated" if replicas == 1 else f"has {replicas} replicas (.r0 .. .r{replicas - 1})"
            raise ValueError(f"`{name}`: task `{task}` {which}")
        return ThreadRef(app, instance, task, replica, replicas)

    def latency_bound_seconds(self) -> float | None:
        bound = self.constraints.latency_max
        return None if bound is None else bound.to_seconds(self.topology.clock)
