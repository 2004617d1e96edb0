"""Results on disk: atomic writes (a reader never sees half a result) and strict JSON text."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; results are for people to read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):  # NumPy scalars and arrays
        return value.tolist()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _why(value: float) -> str:
    if math.isnan(value):
        return "not a number: the figure could not be computed"
    return ("+" if value > 0 else "-") + "infinity: no finite value"


def _finite(value: Any) -> Any:
    """JSON has no infinities: a non-finite number is written null, and the object holding it
    says why in its ``nulls`` (field -> reason; ``field[i]`` for an item of a list field)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        out, nulls = {}, dict(value.get("nulls") or {}) if isinstance(value.get("nulls"), dict) else {}
        for key, item in value.items():
            if isinstance(item, float) and not math.isfinite(item):
                nulls.setdefault(key, _why(item))
            elif isinstance(item, (list, tuple)):
                for i, x in enumerate(item):
                    if isinstance(x, float) and not math.isfinite(x):
                        nulls.setdefault(f"{key}[{i}]", _why(x))
            out[key] = _finite(item)
        if nulls:
            out["nulls"] = nulls
        return out
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_text(obj: Any) -> str:
    """`obj` as strict, indented JSON (NumPy values as lists; an infinity or NaN as null, its
    reason in the enclosing object's ``nulls``)."""
    return json.dumps(_finite(json.loads(json.dumps(obj, default=_json_default))), indent=2, allow_nan=False)


def write_json_atomic(path: str | Path, obj: Any) -> None:
    """Write `obj` as `json_text` (plus a newline), atomically."""
    write_text_atomic(path, json_text(obj) + "\n")
