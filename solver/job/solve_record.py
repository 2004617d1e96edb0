"""The finished solve recorded in the output directory, reused by ``--resume``.

After its solve the main job writes ``solve.pickle`` into its output directory: the key of the
solve -- the record's format, the tasksolve version, the problem kind, the sha256 of the spec's
canonical JSON (every field, the topology and applications it names included) and the settings
the solve reads (`SOLVE_SETTINGS`) -- and what the strategy's solve set (its report; for a pipeline the
instances' spec too).  ``--resume`` (``resume=True``) reads it back instead of solving when the
key is this job's; otherwise, or when the file cannot be read, it solves again and says why.
The bounds, the probe and the certificate are not recorded: the certify phase recomputes them.

The file is input like the samples file: read without following a link (`specs.files`), and
unpickled with only tasksolve's own classes and `fractions.Fraction` allowed (`_Unpickler`,
the "Restricting Globals" recipe of Python's `pickle` documentation), so a file put there cannot
run code; anything else refuses it and the job solves again.
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tasksolve.solver.job.settings import JobSettings
from tasksolve.solver.job.strategy import Strategy
from tasksolve.specs import Spec

RECORD_NAME = "solve.pickle"
FORMAT = 1
#: the `JobSettings` fields a strategy's solve reads: a change in any of them solves again
SOLVE_SETTINGS = (
    "methods",
    "time_limit",
    "top_k",
    "seed",
    "workers",
    "oracle_kind",
    "solve_samples",
    "deterministic",
    "zone",
    "load",
    "certify_budget",
)
#: what a strategy holds that its solve did not set
_NOT_SOLVED = ("spec", "settings")


def solve_key(kind: str, spec: Spec, settings: JobSettings) -> dict[str, Any]:
    """What the recorded solve of a `kind` strategy depends on (module docstring), as JSON-ready
    values."""
    from tasksolve.solver.certify.samples_file import package_version

    text = json.dumps(spec.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    chosen = {name: getattr(settings, name) for name in SOLVE_SETTINGS}
    return {
        "format": FORMAT,
        "version": package_version(),
        "kind": kind,
        "spec": "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
        "settings": json.loads(json.dumps(chosen, default=str)),
    }


def key_changes(found: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """What differs between a recorded key and this job's, in words (empty: the same solve)."""
    changes = [
        f"the {what} changed"
        for name, what in (
            ("format", "record's format"),
            ("version", "tasksolve version"),
            ("kind", "problem kind"),
            ("spec", "spec"),
        )
        if found.get(name) != expected[name]
    ]
    before, after = found.get("settings") or {}, expected["settings"]
    changes += [f"{name}: {before.get(name)!r} -> {after[name]!r}" for name in after if before.get(name) != after[name]]
    return changes


class _Unpickler(pickle.Unpickler):
    """Only tasksolve's classes and `fractions.Fraction` (module docstring)."""

    def find_class(self, module: str, name: str) -> Any:
        if module.split(".")[0] == "tasksolve" or (module, name) == ("fractions", "Fraction"):
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not one of tasksolve's types")


def record(out_dir: Path, strategy: Strategy, key: dict[str, Any], seconds: float) -> None:
    """Write what `strategy`'s solve set, under `key`, into ``out_dir/solve.pickle`` (atomically);
    a solve that cannot be pickled is not recorded (a later ``--resume`` solves again)."""
    from tasksolve.specs.files import write_bytes_atomic

    state = {name: value for name, value in vars(strategy).items() if name not in _NOT_SOLVED}
    try:
        data = pickle.dumps({"key": key, "seconds": seconds, "state": state}, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return
    write_bytes_atomic(out_dir / RECORD_NAME, data)


def recorded(out_dir: Path, key: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The recorded solve's contents when its key is `key`, else None; and a sentence saying
    which and why."""
    from tasksolve.specs.files import read_regular

    path = out_dir / RECORD_NAME
    if not path.exists():
        return None, f"solving: no solve recorded in {path}"
    try:
        found = _Unpickler(io.BytesIO(read_regular(path))).load()
        changes = key_changes(found["key"], key)
    except Exception as exc:  # any damage or foreign content: the job solves again
        return None, f"solving again: the solve recorded in {path} cannot be read ({type(exc).__name__}: {exc})"
    if changes:
        return None, f"solving again: the solve recorded in {path} is another one ({'; '.join(changes)})"
    return found, f"reusing the solve recorded in {path} (it took {found['seconds']:.1f} s): same spec and settings"


def reuse_or_solve(strategy: Strategy, out_dir: Path, say: Callable[[str], None] | None) -> None:
    """The strategy's solve: with ``resume``, the one recorded in `out_dir` when it is this
    job's (`recorded`; restored into the strategy), else solved and recorded (`record`)."""
    key = solve_key(strategy.kind, strategy.spec, strategy.settings)
    if strategy.settings.resume:
        found, why = recorded(out_dir, key)
        if say:
            say(why)
        if found is not None:
            vars(strategy).update(found["state"])
            return
    clock = time.perf_counter()
    strategy.solve(say)
    if strategy.report is not None:
        record(out_dir, strategy, key, time.perf_counter() - clock)
