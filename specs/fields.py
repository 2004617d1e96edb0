"""Field types of the spec language: names, numbers that refuse booleans, quantities with units.

Every quantity type parses what the user wrote (`specs.units`) and serialises back to a text that
parses to the same value, so that load -> dump -> load is the identity.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    SerializationInfo,
    ValidationInfo,
    WithJsonSchema,
)

from tasksolve.specs import units

NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"


class StrictModel(BaseModel):
    """Base of every spec model: unknown keys are errors; values are re-validated on assignment."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_assignment=True)


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a number, not true/false")
    if isinstance(value, int) and value.bit_length() > 1000:  # float() would overflow
        raise ValueError("the number is too large")
    return value


def _finite(value: float) -> float:
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("must be a finite number")
    return value


def _unit(parse):
    def validate(value: Any) -> Any:
        try:
            return parse(value)
        except units.UnitError as exc:
            raise ValueError(str(exc)) from None

    return validate


# General categories a name or text printed into scripts and terminals must not hold: control
# characters (line breaks, ESC of ANSI sequences), format characters (bidi overrides and
# isolates, zero-width joiners), line and paragraph separators, surrogates, private use.
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co"}


def unsafe_character(text: str, allowed: str = "") -> tuple[int, str] | None:
    """The first (position, character) of `text` that is unsafe to print (see above), or None."""
    import unicodedata

    for position, ch in enumerate(text):
        if ch not in allowed and unicodedata.category(ch) in _UNSAFE_CATEGORIES:
            return position, ch
    return None


def _character_words(ch: str) -> str:
    import unicodedata

    if ch in "\n\r\v\f\x85\u2028\u2029":
        return "a line break"
    if ch == "\x1b":
        return "ESC, which starts terminal escape sequences"
    if "\u202a" <= ch <= "\u202e" or "\u2066" <= ch <= "\u2069" or ch in "\u200e\u200f\u061c":
        return "a bidirectional-text control"
    return unicodedata.name(ch, "a control character").lower()


def _safe(allowed: str):
    def validate(value: str) -> str:
        found = unsafe_character(value, allowed)
        if found is not None:
            position, ch = found
            raise ValueError(
                f"character U+{ord(ch):04X} ({_character_words(ch)}) at position {position + 1} is not allowed: "
                "names and texts are printed into scripts, pinning files and terminals"
            )
        return value

    return validate


#: a free-form name printed into generated scripts and messages: one line of printable text
Label = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_safe(""))]
#: a description: printable text, line breaks and tabs allowed
Text = Annotated[str, Field(max_length=100_000), AfterValidator(_safe("\n\t"))]

Name = Annotated[
    str,
    Field(
        pattern=NAME_PATTERN, max_length=64, description="letters, digits, `_` and `-`, starting with a letter or `_`"
    ),
]
Number = Annotated[float, BeforeValidator(_no_bool), AfterValidator(_finite)]
Count = Annotated[int, BeforeValidator(_no_bool), Field(ge=1)]
NonNegativeInt = Annotated[int, BeforeValidator(_no_bool), Field(ge=0)]

Frequency = Annotated[
    float,
    BeforeValidator(_unit(units.parse_frequency)),
    PlainSerializer(units.format_frequency, return_type=str),
    WithJsonSchema(
        {
            "type": ["string", "number"],
            "description": "a frequency: `1.4GHz`, `800MHz`; a plain number is Hz",
            "examples": ["1.4GHz"],
        }
    ),
]
Clock = Annotated[
    float,
    BeforeValidator(_unit(units.parse_clock)),
    PlainSerializer(units.format_frequency, return_type=str),
    WithJsonSchema(
        {
            "type": ["string", "number"],
            "description": "a processor clock between 1MHz and 100GHz: "
            "`1.4GHz`, `800MHz` (a plain number is Hz, so give the unit)",
            "examples": ["1.4GHz"],
        }
    ),
]
#: what `specs.loader` passes as the validation context: the spec language's own rules apply
#: (a size needs its unit); Python code building models may give a number of bytes
SPEC_FILE = {"spec_file": True}


def _size(value: Any, info: ValidationInfo) -> Any:
    try:
        if info.context and info.context.get("spec_file"):
            units.size_needs_unit(value)
        return units.parse_size(value)
    except units.UnitError as exc:
        raise ValueError(str(exc)) from None


Size = Annotated[
    int,
    BeforeValidator(_size),
    PlainSerializer(units.format_size, return_type=str),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": r"^\s*[0-9.eE+-]+\s*(B|kB|KB|MB|GB|KiB|MiB|GiB)\s*$"},
                {"const": 0},
            ],
            "description": "a size with its unit: `64B`, `8KiB`, `1MB` (only 0 goes without one)",
            "examples": ["64B"],
        }
    ),
]
Rate = Annotated[
    float,
    BeforeValidator(_unit(units.parse_rate)),
    PlainSerializer(units.format_rate, return_type=str),
    WithJsonSchema(
        {
            "type": ["string", "number"],
            "description": "a packet rate: `2Mpps`, `500kpps`; a plain number is packets per second",
            "examples": ["2Mpps"],
        }
    ),
]
Duration = Annotated[
    units.Duration,
    BeforeValidator(_unit(units.parse_duration)),
    PlainSerializer(units.format_duration, return_type=str),
    WithJsonSchema(
        {
            "type": ["string", "number"],
            "description": "a processor time: `2.5us`, `300ns`; a plain number is cycles",
            "examples": ["3us"],
        }
    ),
]
Seconds = Annotated[
    float,
    BeforeValidator(_unit(units.parse_seconds)),
    WithJsonSchema(
        {
            "type": ["string", "number"],
            "description": "a wall-clock duration: `30s`, `2min`; a plain number is seconds",
            "examples": ["30s"],
        }
    ),
]
Fraction = Annotated[
    float,
    BeforeValidator(_unit(units.parse_fraction)),
    WithJsonSchema({"type": ["string", "number"], "description": "a fraction: `0.95` or `95%`", "examples": ["95%"]}),
]


def _positive(value: float) -> float:
    if not value > 0:
        raise ValueError(f"must be positive, got {value!r}")
    return value


PositiveNumber = Annotated[Number, AfterValidator(_positive)]
# Cycles of work per packet: positive, at most 1e12 (products with slowdowns and counts stay finite).
Cycles = Annotated[PositiveNumber, Field(le=1e12, description="cycles of work per packet (0 < cycles <= 1e12)")]


def _measured_out(value: float, info: SerializationInfo) -> float | str:
    """A measured quantity as written in a spec file (`specs.loader.dump_spec`) or before it is
    converted; as the model's share (a number) otherwise."""
    from tasksolve.specs.measured import Measured

    if isinstance(value, Measured) and (not value.converted or (info.context or {}).get("units")):
        return str(value.written)
    return float(value)


def _capacity(value: Any) -> float:
    from tasksolve.specs.measured import Measured

    try:
        measure = units.parse_measured_capacity(value)
    except units.UnitError as exc:
        raise ValueError(str(exc)) from None
    if measure is not None:
        return Measured(1.0, measure)
    try:  # a plain number; YAML reads `1e-12` (no dot) as text
        number = _finite(float(_no_bool(value))) if isinstance(value, (int, float, str)) else None
    except (ValueError, OverflowError):
        number = None
    if number is None:
        raise ValueError(f"expected a capacity such as `1.0`, `200GB/s`, `32MiB` or `20Mpps`, got {value!r}")
    if not 0 < number <= 1e6:
        raise ValueError(f"a unitless capacity lies in (0, 1e6], got {value!r}")
    return number


#: A resource's capacity: a unitless number (the share every demand is a fraction of) or a measured
#: one (`200GB/s`, `100Gb/s`, `32MiB`, `20Mpps`), which the model holds as 1 (`specs.measured`).
Capacity = Annotated[
    float,
    PlainValidator(_capacity),
    PlainSerializer(_measured_out),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0, "maximum": 1e6},
                {
                    "type": "string",
                    "pattern": r"^\s*[0-9.eE+-]+\s*([kKMGT]?(B|b)/s|[kMGT]?bps|[KMG]iB/s|[kKMGT]?B|[KMG]iB|[kMGT]?pps)\s*$",
                },
            ],
            "description": "a unitless capacity (default 1) or a measured one: a bandwidth `200GB/s`, "
            "`100Gb/s`, a size `32MiB` (a cache), a packet rate `20Mpps`",
            "examples": [1.0, "200GB/s", "32MiB"],
        }
    ),
]


def _demand(value: Any) -> float:
    from tasksolve.specs.measured import Measured

    try:
        measure = units.parse_measured_demand(value)
        return Measured(0.0, measure, converted=False) if measure is not None else units.parse_fraction(value)
    except units.UnitError as exc:
        raise ValueError(str(exc)) from None


#: A task's demand on a resource: a share of its capacity per cycle of progress (`0.4`, `40%`), or
#: for a measured capacity bytes per packet (`256B`), a working set (`2MiB`) or packets (`1packet`).
Demand = Annotated[
    float,
    PlainValidator(_demand),
    PlainSerializer(_measured_out),
    WithJsonSchema(
        {
            "type": ["string", "number"],
            "description": "a share between 0 and 1 (`0.4`, `40%`); on a resource with a measured capacity also "
            "bytes per packet (`256B`, bandwidth), a working set (`2MiB`, size) or packets per packet "
            "(`1packet`, packet rate)",
            "examples": ["40%", "256B"],
        }
    ),
]

# A share of a resource's capacity per cycle: `0.4` or `40%`.
Share = Annotated[
    float,
    BeforeValidator(_unit(units.parse_fraction)),
    WithJsonSchema(
        {"type": ["string", "number"], "description": "a share between 0 and 1: `0.4` or `40%`", "examples": ["40%"]}
    ),
]
