"""YAML with locations: `yaml.safe_load` semantics, plus the line and column of every field.

`read_yaml` returns the plain Python data (exactly what ``yaml.safe_load`` gives) together with a
`Locations` table that maps a field path such as ``('applications', 'ipfwd', 'tasks', 'P')`` to
its position in the file, so that errors found later (by pydantic or by cross-checks) can name
``file:line:column``.  It also rejects what ``safe_load`` would silently accept or choke on:
duplicate keys, empty files, files over `MAX_BYTES`, and alias bombs (more than `MAX_NODES`
nodes once aliases are expanded).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

import yaml

from tasksolve.specs.errors import Path, Problem, SpecError, shorten

MAX_BYTES = 4 * 1024 * 1024
MAX_NODES = 200_000
_MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass
class Locations:
    """Field path -> (file, line, column), 1-based, of the value and of its mapping key.

    A spec may pull parts from other files (a topology by name, an application by path); their
    positions are grafted under the path where they are used, still naming their own file.
    """

    values: dict[Path, tuple[str, int, int]] = field(default_factory=dict)
    keys: dict[Path, tuple[str, int, int]] = field(default_factory=dict)

    def graft(self, prefix: Path, other: Locations) -> None:
        """Place `other`'s positions under `prefix` (the value at `prefix` keeps its own)."""
        for path, position in other.values.items():
            if path:
                self.values[prefix + path] = position
        for path, position in other.keys.items():
            self.keys[prefix + path] = position

    def find(self, path: Path, key: bool = False) -> tuple[Path, tuple[str, int, int] | None]:
        """The position of `path`, or of its longest prefix that has one."""
        path = tuple(path)
        for end in range(len(path), -1, -1):
            prefix = path[:end]
            table = self.keys if (key and end == len(path)) else self.values
            position = table.get(prefix) or self.values.get(prefix)
            if position is not None:
                return prefix, position
        return (), None


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _position(file: str, node: yaml.Node) -> tuple[str, int, int]:
    return (file, *_mark(node))


def _scalar_key(node: yaml.Node) -> str | int:
    if isinstance(node, yaml.ScalarNode):
        if node.tag == "tag:yaml.org,2002:int":
            try:
                return int(node.value)
            except ValueError:
                return node.value
        return node.value
    return f"<{node.id}>"


def _check_and_locate(root: yaml.Node, file: str) -> Locations:
    """Record positions; reject duplicate keys and alias bombs."""
    locations = Locations()
    sizes: dict[int, int] = {}
    seen: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        sizes[key] = 1  # guards recursive aliases
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        sizes[key] = total
        return total

    def walk(node: yaml.Node, path: Path) -> None:
        locations.values.setdefault(path, _position(file, node))
        if id(node) in seen:  # an alias: its inside was located where it was anchored
            return
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            for index, child in enumerate(node.value):
                walk(child, path + (index,))
        elif isinstance(node, yaml.MappingNode):
            names: dict[str | int, yaml.Node] = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                name = _scalar_key(key_node)
                if name in names:
                    line, col = _mark(key_node)
                    first = _mark(names[name])[0]
                    raise SpecError.at(
                        file, f"duplicate key `{name}` (first given on line {first})", line, col, path + (name,)
                    )
                names[name] = key_node
                locations.keys.setdefault(path + (name,), _position(file, key_node))
                walk(value_node, path + (name,))

    if size(root) > MAX_NODES:
        raise SpecError.at(
            file, f"the document is too large once its aliases are expanded (over {MAX_NODES} nodes)", 1, 1
        )
    walk(root, ())
    return locations


def _syntax_error(file: str, exc: yaml.YAMLError, text: str) -> SpecError:
    """One located message for a YAML syntax error, on the line where the mistake is."""
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
        line = text.count("\n", 0, exc.position) + 1
        col = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        return SpecError.at(
            file, f"character U+{exc.character:04X} is not allowed in YAML (a control character?)", line, col
        )
    if not isinstance(exc, yaml.MarkedYAMLError):
        return SpecError.at(file, f"YAML error: {shorten(str(exc))}")
    mark = exc.problem_mark or exc.context_mark
    # "could not find expected ':'" is found on the line after the key that lacks its colon
    if exc.context_mark is not None and exc.problem and "could not find expected" in exc.problem:
        mark = exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
    what = exc.problem or exc.context or "invalid YAML"
    if exc.context and exc.problem:
        what = f"{exc.context}, {exc.problem}"
    hint = ""
    if "\t" in what or (line is not None and "\t" in _line(text, line)):
        hint = "; YAML does not allow tabs for indentation: indent with spaces"
    return SpecError.at(file, f"YAML syntax error: {shorten(what)}{hint}", line, col)


def _line(text: str, number: int) -> str:
    lines = text.split("\n")
    return lines[number - 1] if 0 < number <= len(lines) else ""


def _compose(text: str, file: str):
    """The node tree of the one document in `text` (SafeLoader), or a located SpecError."""
    try:
        loader = yaml.SafeLoader(text)  # the reader checks every character here
    except yaml.YAMLError as exc:
        raise _syntax_error(file, exc, text) from None
    try:
        root = loader.get_single_node()
        if root is None:
            raise SpecError.at(file, "the file holds no YAML document")
        locations = _check_and_locate(root, file)
        return loader, root, locations
    except yaml.YAMLError as exc:
        loader.dispose()
        raise _syntax_error(file, exc, text) from None
    except RecursionError:
        loader.dispose()
        raise SpecError.at(
            file, "the YAML document is nested too deeply (brackets or indentation hundreds of levels deep)"
        ) from None
    except BaseException:
        loader.dispose()
        raise


def parse_yaml_text(text: str, file: str) -> tuple[Any, Locations]:
    """Parse YAML text with ``safe_load`` semantics; return the data and its locations.

    Every failure of the YAML layer -- syntax, characters YAML forbids, nesting too deep for the
    parser, integers too long to convert, malformed explicit tags -- is one located `SpecError`;
    the file's content is never echoed beyond a short excerpt."""
    if not text.strip():
        raise SpecError.at(file, "the file is empty")
    loader, root, locations = _compose(text, file)
    try:
        data = loader.construct_document(root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise SpecError.at(
            file, f"YAML error: {shorten(exc.problem or exc.context or 'invalid value')}", line, col
        ) from None
    except yaml.YAMLError as exc:
        raise _syntax_error(file, exc, text) from None
    except RecursionError:
        raise SpecError.at(
            file, "the YAML document refers to itself (recursive alias) or is nested too deeply"
        ) from None
    except Exception as exc:
        node = _failing_scalar(loader, root)
        line, col = _mark(node) if node is not None else (None, None)
        raise SpecError.at(file, f"a value YAML cannot convert: {shorten(str(exc), 120)}", line, col) from None
    finally:
        loader.dispose()
    return data, locations


def _failing_scalar(loader: yaml.SafeLoader, root: yaml.Node) -> yaml.Node | None:
    """The first scalar (in file order) the safe constructors cannot convert."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            try:
                loader.construct_object(node, deep=True)
            except Exception:
                return node
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, yaml.MappingNode):
            for key, value in reversed(node.value):
                stack.extend([value, key])
    return None


def read_yaml(path: str | FsPath, shown_as: str | None = None) -> tuple[Any, Locations]:
    """Read a YAML file (at most `MAX_BYTES`, UTF-8) with locations: a regular file, or a pipe
    (``-`` is standard input) whose bytes are counted while reading (`specs.files.read_input`: a
    device such as /dev/zero is refused by name, a FIFO nobody writes to does not hang)."""
    from tasksolve.specs.files import read_input

    file = shown_as or ("<stdin>" if str(path) == "-" else str(path))
    try:
        raw = read_input(path, MAX_BYTES)
    except SpecError as exc:
        message = exc.problems[0][4] if exc.problems else str(exc)
        if message.startswith("is a directory"):
            message = "is a directory, not a spec file"
        raise SpecError.at(file, message.replace("the input is too large", "the file is too large")) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError.at(file, f"the file is not UTF-8 text (byte {exc.start})") from None
    return parse_yaml_text(text, file)


def locate(file: str, locations: Locations, problems: list[Problem]) -> SpecError:
    """Turn path-level problems into a `SpecError` with positions, in file order."""
    located = []
    for problem in problems:
        _, position = locations.find(problem.path, key=problem.key)
        where, line, col = position if position else (file, None, None)
        located.append((where, line, col, tuple(problem.path), problem.message))
    located.sort(key=lambda item: (item[0] != file, item[0], item[1] is None, item[1] or 0, item[2] or 0))
    return SpecError(file, located)
