"""Mutations of spec files for the fuzz tests: text edits, structure edits and byte edits."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from hypothesis import strategies as st

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "specs" / "examples").glob("*.yaml"))


def _inlined() -> list[str]:
    """The examples with their topology and applications written out, so that mutations reach
    every field (clock, capacities, cycles, demands), not only names of built-ins."""
    from tasksolve.specs import load_spec
    from tasksolve.specs.loader import dump_spec

    return [dump_spec(load_spec(path)) for path in EXAMPLES[:6]]


TEXTS = [path.read_text() for path in EXAMPLES] + _inlined()

NUMBERS = [
    "0",
    "-1",
    "-0.5",
    "1e308",
    "1e-320",
    "nan",
    ".nan",
    ".inf",
    "-.inf",
    "1e300GiB",
    "1e308THz",
    "1e308h",
    "9" * 5000,
    "0x1F",
    "1_000",
    "40%",
    "400%",
    "-5%",
    "1.4",
    "1e9GHz",
    "0ns",
    "1e-30us",
    "2Mpps",
    "0pps",
    "1e400",
    "''",
    "[]",
    "{}",
    "~",
    "true",
    "null",
]
UNITS = ["GHz", "MHz", "Hz", "us", "ns", "ms", "s", "h", "B", "KiB", "GiB", "Mpps", "%", "cycles", "furlongs"]
JUNK = [
    "\t",
    "\x00",
    "\x07",
    "\x1b[31m",
    "\u202e",
    "\ufeff",
    "é",
    "🙂",
    "\r",
    "\x85",
    "\ud7ff",
    ":",
    "- ",
    "{",
    "[",
    "&a ",
    "*a",
    "*zz",
    "!!int x",
    "!!timestamp x",
    "!!python/object:os.system x",
    "!!binary x",
    "<<: *a",
    "? ",
    "%YAML 1.1\n---\n",
    "--- \n",
    "...\n",
    "'",
    '"',
    "#",
    "|",
    ">",
]


@st.composite
def text_mutation(draw) -> str:
    text = draw(st.sampled_from(TEXTS))
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["number", "unit", "delete", "duplicate", "junk", "nest", "key", "truncate"]))
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        line = lines[i] if lines else ""
        if kind == "number":
            numbers = list(re.finditer(r"(?<![\w.])\d+(\.\d+)?([a-zA-Z%]+)?", line))
            if numbers:
                m = draw(st.sampled_from(numbers))
                line = line[: m.start()] + draw(st.sampled_from(NUMBERS)) + line[m.end() :]
        elif kind == "unit":
            line = re.sub(r"(GHz|MHz|us|ns|B|KiB|Mpps|%)", draw(st.sampled_from(UNITS)), line, count=1)
        elif kind == "delete" and lines:
            lines.pop(i)
            continue
        elif kind == "duplicate":
            lines.insert(i, line)
            continue
        elif kind == "junk":
            at = draw(st.integers(0, len(line)))
            line = line[:at] + draw(st.sampled_from(JUNK)) + line[at:]
        elif kind == "nest":
            depth = draw(st.sampled_from([5, 100, 600, 2000]))
            line = line.split(":")[0] + ": " + "[" * depth + "1" + "]" * depth if ":" in line else line
        elif kind == "key":
            line = re.sub(
                r"^(\s*)(\w+)",
                lambda m: (
                    m.group(1)
                    + draw(
                        st.sampled_from(
                            ["x" + m.group(2), m.group(2).upper(), "tasks", "levels", "name", "demand", "cycles", "🙂"]
                        )
                    )
                ),
                line,
            )
        elif kind == "truncate":
            lines = lines[: i + 1]
            line = line[: draw(st.integers(0, len(line)))]
        if i < len(lines):
            lines[i] = line
    return "\n".join(lines)


def _retype(value, draw):
    return draw(
        st.sampled_from(
            [None, -1, 0, 1e308, float("nan"), "x", [], {}, [1, 2], {"a": 1}, True, "1e308GHz", 10**400, "🙂" * 3]
        )
    )


@st.composite
def structure_mutation(draw) -> str:
    data = yaml.safe_load(draw(st.sampled_from(TEXTS)))
    for _ in range(draw(st.integers(1, 3))):
        node = data
        path = []
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            key = draw(st.sampled_from(list(node.keys()) if isinstance(node, dict) else list(range(len(node)))))
            path.append((node, key))
            node = node[key]
        if not path:
            continue
        parent, key = path[-1]
        action = draw(st.sampled_from(["delete", "retype"]))
        if action == "delete":
            del parent[key]
        else:
            parent[key] = _retype(parent[key], draw)
    try:
        return yaml.safe_dump(data, allow_unicode=True)
    except (ValueError, OverflowError):
        return "name: x\n"


# Byte-level inserts: every C0 control character and DEL, NUL, invalid UTF-8, terminal escapes,
# huge integers, deep nesting of each flow and block form, malformed and unsafe tags.
CONTROL = [bytes([c]) for c in list(range(32)) + [127]]
BYTE_JUNK = CONTROL + [
    b"\xff\xfe",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\x1b[2J",
    b"\xef\xbb\xbf",
    b"9" * 4400,
    b"-" + b"9" * 400,
    b"1e99999",
    b"0x" + b"f" * 300,
    b"1" + b"0" * 30,
    b"[" * 700,
    b"{a: " * 300,
    b"- " * 300,
    b"a:\n " * 200,
    b"!!int ",
    b"!!float x",
    b"!<tag:yaml.org,2002:int> ",
    b"!foo ",
    b"!! ",
    b"!<",
    b"!!python/object/apply:os.system ['true'] ",
    b"!!binary ",
    b"!!set ",
    b"&x ",
    b"*x ",
]


@st.composite
def byte_mutation(draw) -> bytes:
    """Edits of the raw bytes: overwrite, insert junk (above), truncate, or repeat a slice."""
    raw = bytearray(draw(st.sampled_from(TEXTS)).encode())
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "insert", "cut", "repeat"]))
        at = draw(st.integers(0, len(raw)))
        if kind == "flip" and at < len(raw):
            raw[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            raw[at:at] = draw(st.sampled_from(BYTE_JUNK))
        elif kind == "repeat":
            raw[at:at] = raw[at : at + draw(st.integers(1, 40))] * draw(st.integers(2, 50))
        else:
            raw = raw[:at]
    return bytes(raw)


any_mutation = st.one_of(text_mutation().map(str.encode), structure_mutation().map(str.encode), byte_mutation())
