"""JSON values without infinities or NaN: the one conversion every certificate part goes through.

A figure that is infinite or not a number becomes ``null`` (the typed parts of
`solver.certify.certificate` say why under ``nulls``); an object with ``to_dict`` (a typed part)
is written through it; NumPy scalars become Python numbers.
"""

from __future__ import annotations

import math
from typing import Any


def plain(value: Any) -> Any:
    """A JSON value without infinities or NaN (each becomes None; typed parts say why)."""
    if hasattr(value, "to_dict") and not isinstance(value, type):
        return value.to_dict()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # NumPy scalars
        return plain(value.item())
    return value
