"""Plans: threads and the hardware context each one is bound to.

A binding plan names the threads of the spec (``app#instance.task``) and needs only
``bindings``.  A pipeline plan also says what each thread runs: ``threads[name]`` gives the
application instance, the ordered group of tasks the thread runs for each packet, its stage and
its replica number (replicas of a stage take packets in turn).  Both are the same `Plan` type,
read and written as YAML or JSON::

    spec: t2-ipfwd-intadd-x2      # the spec's name
    spec_file: ../my-spec.yaml    # where it is: relative to the plan's folder, or a built-in's name
    bindings: {"ipfwd#0.R": "core0.pipe0.strand1", ...}
    threads:                      # pipeline plans only
      "dag#0.s0r0": {app: dag, instance: 0, tasks: [rx, parse], stage: 0, replica: 0}
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path as FsPath
from typing import Annotated, Any

from pydantic import Field

from tasksolve.specs.errors import Problem, SpecError
from tasksolve.specs.fields import Label, NonNegativeInt, StrictModel
from tasksolve.specs.spec import Spec
from tasksolve.specs.symmetry import Form, UsableTree


class PlanThread(StrictModel):
    """What one thread of a pipeline plan runs."""

    app: str
    instance: NonNegativeInt = 0
    tasks: Annotated[list[str], Field(min_length=1)]
    stage: NonNegativeInt = 0
    replica: NonNegativeInt = 0


class Plan(StrictModel):
    """Threads bound to hardware contexts (see the module docstring)."""

    spec: Label | None = Field(default=None, description="name of the spec this plan is for")
    spec_file: str | None = Field(
        default=None,
        description="where that spec is: a file path relative to the plan file's folder (or absolute), or a "
        "built-in example's name; written by `save(path, spec)`, absent from plans written before it",
    )
    method: Label | None = Field(default=None, description="what produced the plan")
    bindings: dict[str, str]
    threads: dict[str, PlanThread] | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_contexts(cls, spec: Spec, contexts: Sequence[int], method: str | None = None) -> Plan:
        """A binding plan from one context index per thread of the spec (in `spec.threads` order)."""
        if len(contexts) != len(spec.threads):
            raise ValueError(f"{len(contexts)} contexts for {len(spec.threads)} threads")
        names = spec.topology.context_names
        return cls(
            spec=spec.name, method=method, bindings={t: names[int(c)] for t, c in zip(spec.thread_names, contexts)}
        )

    @property
    def is_pipeline(self) -> bool:
        return self.threads is not None

    def contexts(self, spec: Spec) -> list[int]:
        """Context index per thread of a binding plan, in `spec.threads` order."""
        topo = spec.topology
        return [topo.parse_context(self.bindings[name]) for name in spec.thread_names]

    def placement(self, spec: Spec) -> dict[int, int]:
        """{context: thread index}: thread indices follow `spec.threads` (binding plans) or the
        order of `threads` (pipeline plans)."""
        topo = spec.topology
        order = spec.thread_names if self.threads is None else list(self.threads)
        return {topo.parse_context(self.bindings[name]): i for i, name in enumerate(order)}

    # ------------------------------------------------------------------ symmetry
    def canonical_form(self, spec: Spec) -> Form:
        return UsableTree.of(spec.topology, spec.usable_contexts).canonical_form(self.placement(spec))

    def equivalent(self, other: Plan, spec: Spec) -> bool:
        """Same plan up to the topology's symmetries."""
        return self.threads == other.threads and self.canonical_form(spec) == other.canonical_form(spec)

    def canonical(self, spec: Spec) -> Plan:
        """The representative of this plan's symmetry class (equal for equivalent plans)."""
        tree = UsableTree.of(spec.topology, spec.usable_contexts)
        order = spec.thread_names if self.threads is None else list(self.threads)
        placement = tree.canonical_placement(self.placement(spec))
        names = spec.topology.context_names
        bindings = {order[t]: names[c] for c, t in sorted(placement.items(), key=lambda kv: kv[1])}
        return self.model_copy(update={"bindings": bindings})

    # ------------------------------------------------------------------ I/O
    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    def to_yaml(self) -> str:
        import yaml

        return yaml.safe_dump(self.to_dict(), sort_keys=False, width=100)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def save(self, path: str | FsPath, spec: Spec | None = None) -> None:
        """Write the plan atomically (YAML, or JSON for a ``.json`` path); with `spec`, the plan
        records where the spec is (`spec_file`), so that `resolve_spec_file` finds it again."""
        from tasksolve.specs.files import write_text_atomic

        path = FsPath(path)
        plan = self if spec is None else self.model_copy(update={"spec_file": spec_file_for(spec, path)})
        write_text_atomic(path, plan.to_json() if path.suffix == ".json" else plan.to_yaml())

    def resolve_spec_file(self, plan_path: str | FsPath) -> str | None:
        """What `load_spec` takes to load this plan's spec: `spec_file` resolved against the plan
        file's folder (a built-in example's name as it is); None when the plan does not say."""
        if self.spec_file is None:
            return None
        candidate = FsPath(plan_path).parent / self.spec_file
        return str(candidate) if candidate.is_file() or _is_path(self.spec_file) else self.spec_file


def _is_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.endswith((".yaml", ".yml", ".json"))


def spec_file_for(spec: Spec, plan_path: str | FsPath) -> str | None:
    """How a plan written at `plan_path` names the file of `spec`: a built-in example by its name,
    a file by its path relative to the plan's folder; None for a spec built in memory."""
    from tasksolve.specs.loader import builtin_names

    source = spec.source
    if source is None:
        return None
    if source.startswith("<built-in>/"):
        name = source.removeprefix("<built-in>/").rsplit(".", 1)[0]
        return name if name in builtin_names("") else None
    target = FsPath(source).resolve()
    if not target.is_file():
        return None
    try:
        return os.path.relpath(target, FsPath(plan_path).resolve().parent)
    except ValueError:  # another drive (Windows): the absolute path
        return str(target)


def check_plan(spec: Spec, plan: Plan) -> list[Problem]:
    """Everything that makes `plan` unusable for `spec`, as located-later problems."""
    from tasksolve.specs.errors import did_you_mean

    problems: list[Problem] = []
    topo = spec.topology
    if plan.threads is None:
        expected = spec.thread_names
        for name in plan.bindings:
            if name not in spec.thread_index:
                problems.append(
                    Problem(("bindings", name), f"unknown thread `{name}`{did_you_mean(name, expected)}", key=True)
                )
        missing = [name for name in expected if name not in plan.bindings]
        if missing:
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            problems.append(Problem(("bindings",), f"{len(missing)} thread(s) of the spec are not bound: {shown}"))
    else:
        problems.extend(_check_pipeline_threads(spec, plan))
        for name in plan.bindings:
            if name not in plan.threads:
                problems.append(
                    Problem(("bindings", name), f"`{name}` is bound but not listed under threads", key=True)
                )
        for name in plan.threads:
            if name not in plan.bindings:
                problems.append(Problem(("threads", name), f"thread `{name}` is not bound to a context", key=True))
    usable = set(spec.usable_contexts)
    used: Counter = Counter()
    for name, context_name in plan.bindings.items():
        try:
            context = topo.parse_context(context_name)
        except ValueError as exc:
            problems.append(Problem(("bindings", name), str(exc)))
            continue
        used[context] += 1
        if used[context] == 2:
            problems.append(Problem(("bindings", name), f"`{context_name}` is bound to more than one thread"))
        if context not in usable:
            problems.append(Problem(("bindings", name), f"`{context_name}` is outside {spec.usable_limits}"))
        for domain in spec.constraints.forbid.get(name, []):
            if context in topo.contexts_of(*topo.parse_domain(domain)):
                problems.append(Problem(("bindings", name), f"`{name}` may not run in `{domain}` (constraints.forbid)"))
        pin = spec.constraints.pin.get(name)
        if pin is not None and topo.parse_context(pin) != context:
            problems.append(Problem(("bindings", name), f"`{name}` is pinned to `{pin}` (constraints.pin)"))
    for level_name, cap in spec.constraints.max_threads.items():
        level = topo.level_index(level_name)
        per_domain = Counter(topo.domain_of(c, level) for c in used.elements())
        for domain, count in per_domain.items():
            if count > cap:
                problems.append(
                    Problem(
                        ("bindings",),
                        f"{count} threads in `{topo.domain_name(level, domain)}`, "
                        f"more than constraints.max_threads.{level_name} = {cap}",
                    )
                )
    return problems


def _check_pipeline_threads(spec: Spec, plan: Plan) -> list[Problem]:
    problems: list[Problem] = []
    assert plan.threads is not None
    for name, thread in plan.threads.items():
        if thread.app not in spec.applications:
            problems.append(Problem(("threads", name, "app"), f"unknown application `{thread.app}`"))
            continue
        app = spec.applications[thread.app]
        if thread.instance >= spec.instance_count(thread.app):
            problems.append(Problem(("threads", name, "instance"), f"{thread.app} has no instance #{thread.instance}"))
        for index, task in enumerate(thread.tasks):
            if task not in app.tasks:
                problems.append(Problem(("threads", name, "tasks", index), f"unknown task `{task}` of `{thread.app}`"))
    return problems


def load_plan(path: str | FsPath, spec: Spec | None = None) -> Plan:
    """Read a plan file (YAML or JSON); with `spec`, check it against the spec."""
    from tasksolve.specs.loader import validate_model
    from tasksolve.specs.yamlio import locate, read_yaml

    path = FsPath(path)
    data, locations = read_yaml(path)  # JSON is YAML
    if not isinstance(data, dict):
        raise SpecError.at(str(path), "a plan is a mapping with `bindings` (thread: context)", 1, 1)
    plan = validate_model(Plan, data, str(path), locations)
    if spec is not None:
        problems = check_plan(spec, plan)
        if problems:
            raise locate(str(path), locations, problems)
    return plan
