"""Load specs, topologies and applications from YAML, with errors that name file:line:column.

References: a spec's ``topology`` is a built-in name (``ultrasparc-t2``), ``host`` (this machine,
imported from /sys when the spec loads), a path relative to the spec, or an inline mapping; an application may be an inline mapping or a built-in/relative file.
A topology may start from another with ``base: NAME`` and override top-level keys.  Reference
chains that come back to a file already on the chain are reported as recursive.

A reference resolves only to a built-in or to a file inside the spec's own directory tree
(symbolic links resolved first), so that a spec handed to the tool cannot make it read -- and
quote in its error messages -- any other file of the machine. ``allow_outside=True`` (the CLI's
``--allow-outside-references``) lifts that rule for specs one trusts.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from importlib import resources
from pathlib import Path as FsPath
from typing import Any

from pydantic import BaseModel, ValidationError

from tasksolve.specs.application import Application
from tasksolve.specs.checks import check_spec, check_topology
from tasksolve.specs.errors import Path, Problem, SpecError, did_you_mean, shorten, shown
from tasksolve.specs.feasibility import check_feasibility
from tasksolve.specs.fields import SPEC_FILE
from tasksolve.specs.spec import FORMAT_VERSION, Spec
from tasksolve.specs.topology import Topology
from tasksolve.specs.yamlio import Locations, locate, parse_yaml_text, read_yaml

EXAMPLES = resources.files("tasksolve.specs") / "examples"
#: topology files a chain of ``base:`` references may pass through
MAX_BASE_CHAIN = 64
HOST = "host"  # `topology: host`: the machine tasksolve runs on, read from /sys at load time
# The directories references may point into while a spec loads (None: anywhere).
_ROOTS: ContextVar[tuple[FsPath, ...] | None] = ContextVar("reference_roots", default=())
ALLOW_OUTSIDE: ContextVar[bool] = ContextVar("allow_outside_references", default=False)


@contextmanager
def _confined(spec_dir: FsPath | None, allow_outside: bool):
    """References may point into `spec_dir`'s tree and the built-ins only (unless allowed)."""
    roots = (
        None
        if (allow_outside or ALLOW_OUTSIDE.get())
        else tuple(p.resolve() for p in ([spec_dir] if spec_dir is not None else []) + [FsPath(str(EXAMPLES))])
    )
    token = _ROOTS.set(roots)
    try:
        yield
    finally:
        _ROOTS.reset(token)


def _inside_roots(candidate: FsPath) -> bool:
    roots = _ROOTS.get()
    if roots is None:
        return True
    real = candidate.resolve()
    return any(real == root or root in real.parents for root in roots)


def builtin_names(kind: str) -> list[str]:
    """Names of the built-in topologies (``kind='topologies'``), applications (``'apps'``) or specs (``''``)."""
    folder = EXAMPLES / kind if kind else EXAMPLES
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


def builtin_path(kind: str, name: str) -> FsPath:
    folder = EXAMPLES / kind if kind else EXAMPLES
    return FsPath(str(folder / f"{name}.yaml"))


# --------------------------------------------------------------------- pydantic errors -> problems
def _strip_tags(loc: tuple, data: Any) -> Path:
    """Drop the union/discriminator tags pydantic inserts into error locations."""
    path: list = []
    current = data
    for position, part in enumerate(loc):
        last = position == len(loc) - 1
        if isinstance(current, dict) and part in current:
            path.append(part)
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and part < len(current):
            path.append(part)
            current = current[part]
        elif isinstance(current, BaseModel):
            path.append(part)
            current = getattr(current, str(part), None)
        elif last or not isinstance(current, (dict, list)):
            path.append(part)
            current = None
        # else: a tag such as 'direct' or 'function-after[...]' -- skip it
    return tuple(path)


def _allowed_fields(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _model_at(root: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    """The model class that owns the mapping at `loc` (for 'unknown field' suggestions)."""
    import types
    import typing

    def options(annotation: Any) -> list[Any]:
        """Unwrap Annotated and Optional/Union into the candidate annotations."""
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            return options(typing.get_args(annotation)[0])
        if origin in (typing.Union, types.UnionType):
            return [o for arg in typing.get_args(annotation) if arg is not type(None) for o in options(arg)]
        return [annotation]

    current: list[Any] = [root]
    for part in loc:
        following: list[Any] = []
        for annotation in (o for c in current for o in options(c)):
            origin = typing.get_origin(annotation)
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                field = annotation.model_fields.get(part) or next(
                    (f for f in annotation.model_fields.values() if f.alias == part), None
                )
                if field is not None:
                    following.append(field.annotation)
            elif origin is dict:
                following.append(typing.get_args(annotation)[1])
            elif origin is list and isinstance(part, int):
                following.append(typing.get_args(annotation)[0])
        if following:
            current = following
        # else: `part` is a union tag pydantic inserted; stay where we are
    models = [o for c in current for o in options(c) if isinstance(o, type) and issubclass(o, BaseModel)]
    return models[0] if len(models) == 1 else None


def _message(error: dict, model: type[BaseModel]) -> tuple[str, bool]:
    kind = error["type"]
    loc = error["loc"]
    msg = error["msg"]
    msg = shorten(msg, 300)
    if kind == "missing":
        return f"missing required field `{shorten(str(loc[-1]), 80)}`", False
    if kind == "extra_forbidden":
        owner = _model_at(model, loc[:-1])
        allowed = _allowed_fields(owner) if owner else []
        listed = f" (allowed: {', '.join(allowed)})" if allowed and len(allowed) <= 12 else ""
        return f"unknown field `{shorten(str(loc[-1]), 80)}`{listed}{did_you_mean(str(loc[-1]), allowed)}", True
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        options = [o.strip().strip("'") for o in expected.replace(" or ", ",").split(",") if o.strip()]
        given = error.get("input")
        return f"{msg}, got {_shown(given)}{did_you_mean(str(given)[:100], options)}", False
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected a mapping (key: value lines), got {_shown(error.get('input'))}", False
    if kind == "list_type":
        return f"expected a list, got {_shown(error.get('input'))}", False
    if kind == "union_tag_invalid":
        return msg.replace("Input tag", "model"), False
    if (
        "input" in error
        and kind not in ("value_error", "assertion_error")
        and not isinstance(error["input"], (dict, list))
    ):
        msg = f"{msg} (got {_shown(error['input'])})"
    return msg, False


def _shown(value: Any) -> str:
    return shown(value)


def validation_problems(exc: ValidationError, data: Any, model: type[BaseModel], prefix: Path = ()) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[Path] = set()
    for error in exc.errors():
        path = prefix + _strip_tags(tuple(error["loc"]), data)
        if path in seen:  # one message per field (unions report once per branch)
            continue
        seen.add(path)
        message, on_key = _message(error, model)
        problems.append(Problem(path, message, key=on_key))
    return problems


def validate_model(model: type[BaseModel], data: Any, file: str, locations: Locations, prefix: Path = ()):
    try:
        return model.model_validate(data, context=SPEC_FILE)
    except ValidationError as exc:
        raise locate(file, locations, validation_problems(exc, data, model, prefix)) from None


# --------------------------------------------------------------------- references
def _resolve(ref: Any, kind: str, relative_to: FsPath | None, file: str, locations: Locations, path: Path) -> FsPath:
    """A built-in name or a path relative to the referring file -> a file path."""
    if not isinstance(ref, str) or not ref.strip():
        raise locate(
            file, locations, [Problem(path, f"expected a built-in name, a file path or a mapping, got {_shown(ref)}")]
        )
    looks_like_path = ref.endswith((".yaml", ".yml")) or "/" in ref or "\\" in ref
    if not looks_like_path:
        names = builtin_names(kind)
        if ref in names:
            return builtin_path(kind, ref)
        what = "topology" if kind == "topologies" else "application"
        raise locate(
            file,
            locations,
            [
                Problem(
                    path,
                    f"unknown built-in {what} `{ref}` (built-in: {', '.join(names)})"
                    f"{did_you_mean(ref, names)}; a file path must end in .yaml",
                )
            ],
        )
    candidate = (relative_to / ref) if relative_to is not None else FsPath(ref)
    try:
        found = candidate.is_file()
        inside = _inside_roots(candidate)
    except OSError as exc:
        raise locate(
            file, locations, [Problem(path, f"cannot use the file `{shorten(ref, 80)}`: {exc.strerror}")]
        ) from None
    if not inside:
        raise locate(
            file,
            locations,
            [
                Problem(
                    path,
                    f"`{shorten(ref, 80)}` is outside the spec's directory: references "
                    "may name built-ins and files under the spec's folder only "
                    "(--allow-outside-references lifts this)",
                )
            ],
        )
    if not found:
        raise locate(file, locations, [Problem(path, _missing(ref, candidate))])
    return candidate


def _missing(ref: str, candidate: FsPath) -> str:
    """Why the reference `ref` (looked for at `candidate`) is not a file that can be read."""
    import os

    from tasksolve.specs.files import kind_of

    try:
        mode = os.stat(candidate).st_mode
    except OSError:
        return f"file `{shorten(ref, 80)}` not found (looked for {shorten(str(candidate), 120)})"
    return f"`{shorten(ref, 80)}` is {kind_of(mode)}, not a regular file (looked at {shorten(str(candidate), 120)})"


def _load_topology_data(
    data: Any, locations: Locations, file: str, relative_to: FsPath | None, chain: tuple[str, ...]
) -> tuple[Any, Locations]:
    """Follow ``base:`` references: the base's keys, overridden by this file's."""
    if not isinstance(data, dict) or "base" not in data:
        return data, locations
    ref = data["base"]
    base_file = _resolve(ref, "topologies", relative_to, file, locations, ("base",))
    key = str(base_file.resolve())
    if key in chain:
        names = " -> ".join(FsPath(c).name for c in chain + (key,))
        raise locate(file, locations, [Problem(("base",), f"recursive topology references: {names}")])
    if len(chain) >= MAX_BASE_CHAIN:  # before Python's recursion limit blames some file for nesting
        first = FsPath(chain[0]).name if chain else file
        raise locate(
            file,
            locations,
            [Problem(("base",), f"the chain of `base:` references from {first} is over {MAX_BASE_CHAIN} files long")],
        )
    base_data, base_locations = read_yaml(base_file, _display(base_file))
    if not isinstance(base_data, dict):
        raise SpecError.at(_display(base_file), "a topology file holds a mapping (name, clock, levels, ...)", 1, 1)
    base_data, base_locations = _load_topology_data(
        base_data, base_locations, _display(base_file), base_file.parent, chain + (key,)
    )
    merged = {k: v for k, v in base_data.items() if k != "base"}
    merged_locations = Locations()
    merged_locations.graft((), base_locations)
    for k, v in data.items():
        if k != "base":
            merged[k] = v
            for table in ("values", "keys"):
                for p, position in getattr(locations, table).items():
                    if p[:1] == (k,):
                        getattr(merged_locations, table)[p] = position
    merged_locations.values[()] = locations.values.get((), (file, 1, 1))
    return merged, merged_locations


def _display(path: FsPath) -> str:
    """How a file is named in messages: built-ins by their package-relative path."""
    text = str(path)
    examples = str(EXAMPLES)
    if text.startswith(examples):
        return "<built-in>/" + text[len(examples) :].lstrip("/\\")
    return text


def _topology_from(
    data: Any, file: str, locations: Locations, relative_to: FsPath | None, chain: tuple[str, ...], prefix: Path = ()
) -> tuple[Topology, Locations]:
    if not isinstance(data, dict):
        raise locate(file, locations, [Problem(prefix, "a topology is a mapping (name, clock, levels, ...)")])
    sub_locations = Locations()
    for table in ("values", "keys"):
        for p, position in getattr(locations, table).items():
            if p[: len(prefix)] == prefix:
                getattr(sub_locations, table)[p[len(prefix) :]] = position
    data, sub_locations = _load_topology_data(data, sub_locations, file, relative_to, chain)
    topology = validate_model(Topology, data, file, sub_locations)
    problems = check_topology(topology)
    if problems:
        raise locate(file, sub_locations, problems)
    return topology, sub_locations


def _host_topology() -> Topology:
    """``topology: host``: this machine, imported from /sys (`specs.importers.sysfs`)."""
    from tasksolve.specs.importers.sysfs import host_topology

    return host_topology().topology


def load_topology(path: str | FsPath) -> Topology:
    """Load a topology file (or a built-in topology by name, or ``host``: this machine)."""
    if str(path) == HOST:
        return _host_topology()
    path = (
        FsPath(path)
        if str(path).endswith((".yaml", ".yml")) or FsPath(path).exists()
        else builtin_path("topologies", str(path))
    )
    data, locations = read_yaml(path, _display(path))
    topology, _ = _topology_from(data, _display(path), locations, path.parent, (str(path.resolve()),))
    return topology


# --------------------------------------------------------------------- specs
def _version_problem(data: dict) -> Problem | None:
    if "tasksolve" not in data:
        return Problem((), f"missing `tasksolve: {FORMAT_VERSION}` (the format version) at the top of the spec")
    version = data["tasksolve"]
    if version != FORMAT_VERSION or isinstance(version, bool):
        return Problem(
            ("tasksolve",), f"unsupported format version {version!r}; this tasksolve reads version {FORMAT_VERSION}"
        )
    return None


def spec_from_data(
    data: Any, locations: Locations, file: str, relative_to: FsPath | None, *, feasibility: bool = True
) -> Spec:
    """Validate parsed YAML as a spec (references resolved, cross-checks run, and with
    `feasibility` the cheap feasibility checks of `specs.feasibility`)."""
    if not isinstance(data, dict):
        raise SpecError.at(
            file, "a spec is a mapping with the keys tasksolve, name, topology, applications, workload, ...", 1, 1
        )
    problem = _version_problem(data)
    if problem:
        raise locate(file, locations, [problem])
    data = dict(data)
    if "topology" in data:
        ref = data["topology"]
        if isinstance(ref, dict):
            topology, _ = _topology_from(ref, file, locations, relative_to, (file,), ("topology",))
        elif ref == HOST:
            topology = _host_topology()
        else:
            topo_file = _resolve(ref, "topologies", relative_to, file, locations, ("topology",))
            topo_data, topo_locations = read_yaml(topo_file, _display(topo_file))
            topology, topo_locations = _topology_from(
                topo_data, _display(topo_file), topo_locations, topo_file.parent, (str(topo_file.resolve()),)
            )
            locations.graft(("topology",), topo_locations)
        data["topology"] = topology
    apps = data.get("applications")
    if isinstance(apps, dict):
        apps = dict(apps)
        for name, value in apps.items():
            if isinstance(value, str):
                app_file = _resolve(value, "apps", relative_to, file, locations, ("applications", name))
                app_data, app_locations = read_yaml(app_file, _display(app_file))
                apps[name] = validate_model(Application, app_data, _display(app_file), app_locations)
                locations.graft(("applications", name), app_locations)
        data["applications"] = apps
    spec = validate_model(Spec, data, file, locations)
    problems = check_spec(spec)
    if not problems and feasibility:
        problems = check_feasibility(spec)
    if problems:
        raise locate(file, locations, problems)
    spec.set_source(file)
    return spec


def resolve_named_file(path: str | FsPath, kind: str = "") -> FsPath:
    """A file path, or the file of a built-in example named without a path; a name that is
    neither gets a located error with the closest built-in names."""
    text = str(path)
    path = FsPath(text)
    if text == "-":  # standard input (`specs.files.read_input`)
        return path
    try:
        exists = path.exists()
    except OSError as exc:  # a name over 255 characters, ...
        raise SpecError.at(shorten(text, 80), f"cannot read the file: {exc.strerror}") from None
    if exists or text.endswith((".yaml", ".yml")) or "/" in text:
        return path
    names = builtin_names(kind)
    if text in names:
        return builtin_path(kind, text)
    what = {"": "example spec", "topologies": "topology", "apps": "application"}[kind]
    raise SpecError.at(
        shorten(text, 80),
        f"no such file, nor a built-in {what}{did_you_mean(text, names)} (`tasksolve examples` lists them)",
    )


def load_spec(path: str | FsPath, *, allow_outside: bool = False, feasibility: bool = True) -> Spec:
    """Load and check a spec file; a built-in example may be named without a path.

    References to other files must stay inside the spec's directory tree unless `allow_outside`
    (module docstring).  ``feasibility=False`` skips the feasibility checks of the constraints
    (`specs.feasibility`) for callers that want the syntax, types and references only."""
    path = resolve_named_file(path)
    data, locations = read_yaml(path, _display(path))
    with _confined(path.parent, allow_outside):
        return spec_from_data(data, locations, _display(path), path.parent, feasibility=feasibility)


def load_spec_text(
    text: str,
    file: str = "<text>",
    relative_to: FsPath | None = None,
    *,
    allow_outside: bool = False,
    feasibility: bool = True,
) -> Spec:
    """Load a spec from YAML text (for tests and tools that build specs in memory)."""
    data, locations = parse_yaml_text(text, file)
    with _confined(relative_to, allow_outside):
        return spec_from_data(data, locations, file, relative_to, feasibility=feasibility)


def dump_spec(spec: Spec) -> str:
    """YAML text of a spec, with every reference inlined, that loads back to an equal spec."""
    import yaml

    data = spec.model_dump(mode="json", by_alias=True, exclude_none=True, context={"units": True})
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
