"""Cross-checks of irregular trees and kinds of core (`specs.topology`, `specs.cpu_kinds`).

* a level's list of counts has one count per existing domain of the level above;
* every kind's ``domains`` exist, no context has two kinds, every existing context has one
  (at most one kind leaves out ``domains`` and takes the rest);
* a task's cycles per kind name exactly the topology's kinds.
"""

from __future__ import annotations

from tasksolve.specs.errors import Problem, did_you_mean
from tasksolve.specs.topology import Topology


def check_shape(topo: Topology, prefix: tuple) -> list[Problem]:
    """Each list of counts matches the number of existing domains of the level above."""
    problems: list[Problem] = []
    parents = 1
    for index, level in enumerate(topo.levels):
        if isinstance(level.count, list) and len(level.count) != parents:
            above = topo.levels[index - 1].name if index else "machine"
            problems.append(
                Problem(
                    prefix + ("levels", index, "count"),
                    f"{len(level.count)} counts for {parents} {above} domain(s): give one count per "
                    f"{above} (in order) or a single count for all of them",
                )
            )
            return problems
        parents = level.count * parents if isinstance(level.count, int) else sum(level.count)
    return problems


def check_kinds(topo: Topology, prefix: tuple) -> list[Problem]:
    """Kinds cover every existing context exactly once."""
    if topo.kinds is None:
        return []
    base = prefix + ("kinds",)
    if not topo.kinds:
        return [Problem(base, "no kinds given; leave `kinds` out when every core is alike")]
    problems: list[Problem] = []
    rest = [name for name, kind in topo.kinds.items() if kind.domains is None]
    for name in rest[1:]:
        problems.append(
            Problem(base + (name,), f"kinds `{rest[0]}` and `{name}` both leave out `domains`; only one takes the rest")
        )
    owner: dict[int, str] = {}
    for name, kind in topo.kinds.items():
        for index, text in enumerate(kind.domains or ()):
            try:
                contexts = topo.contexts_of(*topo.parse_domain(text))
            except ValueError as exc:
                problems.append(Problem(base + (name, "domains", index), str(exc)))
                continue
            for context in contexts:
                if context in owner and owner[context] != name:
                    problems.append(
                        Problem(
                            base + (name, "domains", index),
                            f"`{text}` holds {topo.context_name(context)}, which is already of kind `{owner[context]}`",
                        )
                    )
                    break
                owner[context] = name
    if not rest and not problems:
        missing = [c for c in topo.present_contexts if c not in owner]
        if missing:
            problems.append(
                Problem(
                    base,
                    f"{len(missing)} context(s) have no kind, e.g. {topo.context_name(missing[0])}; name them in a "
                    "kind's `domains` or leave `domains` out of one kind to give it the rest",
                )
            )
    return problems


def check_task_kinds(spec) -> list[Problem]:
    """Cycles given per kind name exactly the topology's kinds."""
    kinds = list(spec.topology.kinds or ())
    problems: list[Problem] = []
    for app_name, app in spec.applications.items():
        for task_name, task in app.tasks.items():
            given = task.cycles_by_kind
            if given is None:
                continue
            path = ("applications", app_name, "tasks", task_name, "cycles")
            if not kinds:
                problems.append(
                    Problem(path, "cycles are given per kind of core, but the topology has no `kinds`; give one number")
                )
                continue
            unknown = [name for name in given if name not in kinds]
            missing = [name for name in kinds if name not in given]
            if unknown:
                problems.append(
                    Problem(
                        path + (unknown[0],),
                        f"unknown kind of core `{unknown[0]}`{did_you_mean(unknown[0], kinds)}",
                        key=True,
                    )
                )
            elif missing:
                problems.append(
                    Problem(
                        path, f"no cycles for kind `{missing[0]}`; give the cycles on every kind ({', '.join(kinds)})"
                    )
                )
    return problems
