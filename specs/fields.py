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
    WithJsonSchema,
)

from specs import units

NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"


class StrictModel(BaseModel):
    """Base of every spec model: unknown keys are errors; values are re-validated on assignment."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_assignment=True)


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a number, not true/false")
    return value


def _unit(parse):
    def validate(value: Any) -> Any:
        try:
            return parse(value)
        except units.UnitError as exc:
            raise ValueError(str(exc)) from None

    return validate


Name = Annotated[
    str,
    Field(pattern=NAME_PATTERN, max_length=64,
          description="letters, digits, `_` and `-`, starting with a letter or `_`"),
]
Number = Annotated[float, BeforeValidator(_no_bool)]
Count = Annotated[int, BeforeValidator(_no_bool), Field(ge=1)]
NonNegativeInt = Annotated[int, BeforeValidator(_no_bool), Field(ge=0)]

Frequency = Annotated[
    float,
    BeforeValidator(_unit(units.parse_frequency)),
    PlainSerializer(units.format_frequency, return_type=str),
    WithJsonSchema({"type": ["string", "number"], "description": "a frequency: `1.4GHz`, `800MHz`; a plain number is Hz", "examples": ["1.4GHz"]}),
]
Size = Annotated[
    int,
    BeforeValidator(_unit(units.parse_size)),
    PlainSerializer(units.format_size, return_type=str),
    WithJsonSchema({"type": ["string", "integer"], "description": "a size: `64B`, `8KiB`, `1MB`; a plain number is bytes", "examples": ["64B"]}),
]
Rate = Annotated[
    float,
    BeforeValidator(_unit(units.parse_rate)),
    PlainSerializer(units.format_rate, return_type=str),
    WithJsonSchema({"type": ["string", "number"], "description": "a packet rate: `2Mpps`, `500kpps`; a plain number is packets per second", "examples": ["2Mpps"]}),
]
Duration = Annotated[
    units.Duration,
    BeforeValidator(_unit(units.parse_duration)),
    PlainSerializer(units.format_duration, return_type=str),
    WithJsonSchema({"type": ["string", "number"], "description": "a processor time: `2.5us`, `300ns`; a plain number is cycles", "examples": ["3us"]}),
]
Seconds = Annotated[
    float,
    BeforeValidator(_unit(units.parse_seconds)),
    WithJsonSchema({"type": ["string", "number"], "description": "a wall-clock duration: `30s`, `2min`; a plain number is seconds", "examples": ["30s"]}),
]
Fraction = Annotated[
    float,
    BeforeValidator(_unit(units.parse_fraction)),
    WithJsonSchema({"type": ["string", "number"], "description": "a fraction: `0.95` or `95%`", "examples": ["95%"]}),
]


def _positive(value: float) -> float:
    if not value > 0:
        raise ValueError(f"must be positive, got {value!r}")
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("must be a finite number")
    return value


PositiveNumber = Annotated[Number, AfterValidator(_positive)]
