"""What a YAML file of the spec language holds -- a problem spec, a topology or an application --
and loading any of them with located errors (docs/design.md, "Spec language").

The kind is read from the top-level keys: a spec carries its format version (``tasksolve:``) or
the sections only a spec has (``workload``, ``applications``); a topology has ``levels`` or a
``base``; an application has ``tasks``.  A topology is checked as a spec's topology is; an
application on its own is checked except for the resources its demands name, which only a
topology knows.  Built-ins of every kind are found by name (`find_builtin`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any, Literal

from tasksolve.specs.errors import SpecError, did_you_mean, shorten

Kind = Literal["spec", "topology", "application"]
# The folder of each kind under specs/examples (`specs.loader.builtin_names`).
FOLDERS: dict[str, str] = {"spec": "", "topology": "topologies", "application": "apps"}


def detect_kind(data: Any) -> Kind | None:
    """The kind of parsed YAML from its top-level keys (module docstring), or None."""
    if not isinstance(data, dict):
        return None
    if "tasksolve" in data or "workload" in data or "applications" in data:
        return "spec"
    if "levels" in data or "base" in data:
        return "topology"
    if "tasks" in data:
        return "application"
    return None


def all_builtins() -> dict[str, list[str]]:
    """Built-in names per kind."""
    from tasksolve.specs.loader import builtin_names

    return {kind: builtin_names(folder) for kind, folder in FOLDERS.items()}


def find_builtin(name: str) -> tuple[Kind, FsPath] | None:
    """The kind and file of a built-in example named `name` (specs first), or None."""
    from tasksolve.specs.loader import builtin_path

    for kind, names in all_builtins().items():
        if name in names:
            return kind, builtin_path(FOLDERS[kind], name)  # type: ignore[return-value]
    return None


def unknown_builtin(name: str) -> str:
    """The message for a name that is no built-in, with the closest name of any kind."""
    pool = [n for names in all_builtins().values() for n in names]
    return f"no built-in example, topology or application `{shorten(name, 80)}`{did_you_mean(name, pool)}"


@dataclass
class Loaded:
    """A checked file: its kind and the model it holds (`Spec`, `Topology` or `Application`)."""

    kind: Kind
    value: Any
    file: str


def _load_application(data: Any, locations, file: str):
    from tasksolve.specs.application import Application
    from tasksolve.specs.checks import check_application
    from tasksolve.specs.loader import validate_model
    from tasksolve.specs.yamlio import locate

    app = validate_model(Application, data, file, locations)
    problems = check_application(FsPath(file).stem, app, None)
    if problems:
        raise locate(file, locations, problems)
    return app


def load_any(path: str | FsPath, *, allow_outside: bool = False, feasibility: bool = True) -> Loaded:
    """Load and check a spec, topology or application file (or a built-in of any kind by name)."""
    from tasksolve.specs.loader import _confined, _display, _topology_from, spec_from_data
    from tasksolve.specs.yamlio import read_yaml

    text = str(path)
    try:
        is_file = text == "-" or FsPath(text).exists() or text.endswith((".yaml", ".yml")) or "/" in text
    except OSError as exc:  # a name over 255 characters, ...
        raise SpecError.at(shorten(text, 80), f"cannot read the file: {exc.strerror}") from None
    if is_file:
        file_path = FsPath(text)
    else:
        found = find_builtin(text)
        if found is None:
            raise SpecError.at(
                shorten(text, 80), f"no such file; {unknown_builtin(text)} (`tasksolve examples` lists them)"
            )
        file_path = found[1]
    data, locations = read_yaml(file_path, _display(file_path))
    shown_as = _display(file_path)
    kind = detect_kind(data)
    if kind is None:
        raise SpecError.at(
            shown_as,
            "not a spec, a topology or an application: a spec starts with `tasksolve: 1`, "
            "a topology has `levels`, an application has `tasks`",
            1,
            1,
        )
    with _confined(file_path.parent, allow_outside):
        if kind == "spec":
            value = spec_from_data(data, locations, shown_as, file_path.parent, feasibility=feasibility)
        elif kind == "topology":
            value, _ = _topology_from(data, shown_as, locations, file_path.parent, (str(file_path.resolve()),))
        else:
            value = _load_application(data, locations, shown_as)
    return Loaded(kind, value, shown_as)
