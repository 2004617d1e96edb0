"""The samples file's identity and the output directory's lock, for `solver.certify.service`.

* What identifies a sample (the samples file's header): the hash of the spec's problem
  (`spec_hash`), the oracle's kind and settings (`oracle_identity`); `header_changes` says in words
  what differs between a file's header and this run's, and `check_start` refuses a fresh start
  over finished samples without ``force`` (``--force``).  Messages name the settings in the
  library's words and the command line's (`solver.errors.SolverError.worded`).
* The output directory's lock (``.tasksolve.lock``): `acquire_lock` (re-entrant in the thread of one job,
  naming the other holder's PID; the lock file opened with ``O_NOFOLLOW``), `release_lock`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

from tasksolve.solver.errors import COMMAND_LINE_WORDS, LIBRARY_WORDS, BadProblemError
from tasksolve.specs import Spec
from tasksolve.specs.files import open_regular, read_regular

LOCK_NAME = ".tasksolve.lock"


class SamplingError(BadProblemError):
    """The samples file cannot be used as asked (another run's, damaged, locked): bad input."""


class SamplingInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) while sampling: `kept` finished measurements are in `path`, each
    written there as its chunk finished; the message says how many and how to continue, in the
    library's words (``command_line``: the command line's, `solver.errors.SolverError.worded`)."""

    def __init__(self, kept: int, path: Path) -> None:
        from tasksolve.specs.display import count

        template = "interrupted: {kept} in {path}; continue them with {resume}"
        values = {"kept": count(kept, "finished measurement"), "path": path}
        super().__init__(template.format(**values, **LIBRARY_WORDS._asdict()))
        self.kept, self.path = kept, path
        self.command_line = template.format(**values, **COMMAND_LINE_WORDS._asdict())


# ------------------------------------------------------------------ what identifies a sample
_PROBLEM_FIELDS = {"tasksolve", "topology", "applications", "workload", "problem", "constraints", "objective"}


def _without_descriptions(data: object) -> object:
    if isinstance(data, dict):
        return {
            k: _without_descriptions(v)
            for k, v in data.items()
            if not (k == "description" and (v is None or isinstance(v, str)))
        }
    if isinstance(data, list):
        return [_without_descriptions(v) for v in data]
    return data


def spec_hash(spec: Spec) -> str:
    """sha256 of the canonical JSON of what the measured values depend on: the topology, the
    applications, the workload, the constraints and the objective (not the name, descriptions,
    file locations, nor the oracle/search/certify sections, which the header records apart)."""
    data = _without_descriptions(spec.model_dump(mode="json", include=_PROBLEM_FIELDS))
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def oracle_identity(spec: Spec, kind: str, factory: Callable[[Spec], object] | None = None) -> dict[str, object]:
    """The oracle's kind and the settings that change its figures (JSON-ready): the registered
    oracle's ``identity(spec)`` (`simulate.registry`), empty for an oracle without one."""
    if factory is not None:
        return {"kind": f"{factory.__module__}.{factory.__qualname__}", "settings": {}}
    from tasksolve.simulate import registry

    identity = getattr(registry.factory(kind), "identity", None)
    settings = identity(spec) if identity is not None else {}
    return {"kind": kind, "settings": json.loads(json.dumps(settings))}


def package_version() -> str:
    """The installed tasksolve's version (the samples header records it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tasksolve")
    except PackageNotFoundError:
        return "unknown"


def _short(digest: object) -> str:
    return str(digest)[:19] + "..." if isinstance(digest, str) and len(digest) > 22 else repr(digest)


def header_changes(found: dict[str, object], expected: dict[str, object]) -> list[str]:
    """What differs between a file's header and this run's, in words (empty: resumable)."""
    if found.get("tasksolve_samples") != expected["tasksolve_samples"]:
        return [
            f"the file's format is {found.get('tasksolve_samples')!r}, this version writes "
            f"{expected['tasksolve_samples']}"
        ]
    changes = []
    if found.get("spec_hash") != expected["spec_hash"]:
        changes.append(
            f"the spec changed (`{found.get('spec_name')}` {_short(found.get('spec_hash'))} in the file, "
            f"`{expected['spec_name']}` {_short(expected['spec_hash'])} now)"
        )
    old, new = found.get("oracle") or {}, expected["oracle"]
    if old.get("kind") != new["kind"]:
        changes.append(f"the oracle changed ({old.get('kind')} in the file, {new['kind']} now)")
    elif old.get("settings") != new["settings"]:
        before, after = old.get("settings") or {}, new["settings"]
        names = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        changes.append(
            "the oracle's settings changed ("
            + ", ".join(f"{k}: {before.get(k)!r} -> {after.get(k)!r}" for k in names)
            + ")"
        )
    for key, what in (("design", "design"), ("plans", "plan stream"), ("seed", "seed")):
        if found.get(key) != expected[key]:
            changes.append(f"the {what} changed ({found.get(key)!r} in the file, {expected[key]!r} now)")
    return changes


def _finished_lines(path: Path) -> int:
    if not path.exists():
        return 0
    lines = [line for line in read_regular(path).splitlines(keepends=True) if line.endswith(b"\n") and line.strip()]
    header = bool(lines) and lines[0].lstrip().startswith(b'{"tasksolve_samples"')
    return len(lines) - 1 if header else len(lines)


def check_start(path: Path, resume: bool, force: bool) -> None:
    """Refuse contradictory options, and a fresh start (no `resume`) over finished samples
    unless `force` (callers that run long before sampling check this first)."""
    if resume and force:
        raise SamplingError.worded(
            "{resume} and {force} contradict each other: {resume} continues the samples "
            "in the file, {force} discards them"
        )
    finished = 0 if resume else _finished_lines(Path(path))
    if finished and not force:
        raise SamplingError.worded(
            "{path} already holds {finished} measured plans; continue them with {resume} or discard them with {force}",
            path=path,
            finished=finished,
        )


# ------------------------------------------------------------------ the output directory's lock
_HELD: dict[str, list] = {}  # real path of the lock file -> [fd, count, thread]; closed in forked children
_HELD_GUARD = threading.Lock()


def _close_in_child() -> None:
    for held in _HELD.values():
        try:
            os.close(held[0])
        except OSError:
            pass
    _HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)


def acquire_lock(directory: Path) -> str:
    """Lock `directory` for this job: re-entrant in the thread that holds it (a job's nested
    steps), refused to another thread of the process (another job: two jobs in one folder would
    interleave their records) and to another process; the `SamplingError` names the holder.
    Returns the key to `release_lock`."""
    directory.mkdir(parents=True, exist_ok=True)
    key = os.path.join(os.path.realpath(directory), LOCK_NAME)  # the directory's link followed, never the lock's
    with _HELD_GUARD:
        return _acquire(directory, key)


def _acquire(directory: Path, key: str) -> str:
    held = _HELD.get(key)
    if held is not None:
        if held[2] != threading.get_ident():
            raise SamplingError.worded(
                "{directory} is in use by another tasksolve job in this process (thread {thread}); wait for "
                "it to finish or choose another {out}",
                directory=directory,
                thread=held[2],
            )
        held[1] += 1
        return key
    fd = open_regular(key, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise SamplingError.worded(
            "{directory} is in use by another tasksolve run (PID {holder}); wait for it to "
            "finish or choose another {out}",
            directory=directory,
            holder=holder,
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD[key] = [fd, 1, threading.get_ident()]
    return key


def release_lock(key: str) -> None:
    with _HELD_GUARD:
        held = _HELD.get(key)
        if held is None:
            return
        held[1] -= 1
        if held[1] == 0:
            del _HELD[key]
            os.close(held[0])  # closing the descriptor releases the flock
