"""Taking the output directory: the lock and the checks of existing files, before anything is written.

`take_output_dir(out, resume=..., force=...)` is the first thing a job does with ``--out``
(``tasksolve run``, ``tasksolve certify``, `solver.job.Job.take_out_dir`,
`solver.certify.run.certify`):

1. ``--out`` must be a directory (made if missing); a regular file, FIFO or device is refused by
   name.
2. Every file the job may write or read there (`OUTPUT_NAMES`) must be a regular file or absent:
   a symbolic link, FIFO, device, socket or directory is refused by name, never opened (a link
   inside ``--out`` could point anywhere; a FIFO would hang the run).
3. The directory's lock (``.tasksolve.lock``, `solver.certify.service.acquire_lock`: opened with
   ``O_NOFOLLOW``, re-entrant in one process) is taken: a second run into the directory fails at
   once, naming the first one's PID.
4. The samples file is checked (`solver.certify.service.check_start`): a fresh start over
   finished samples without ``--force``, or ``--resume`` with ``--force``, is refused.

Every later write goes through `specs.files` (a temporary file opened with
``O_CREAT|O_EXCL|O_NOFOLLOW`` beside its target, then renamed; appends to a checked regular
file), so a link created inside ``--out`` after the checks is replaced, never written through.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tasksolve.solver.certify.service import LOCK_NAME, SamplingError, acquire_lock, check_start, release_lock
from tasksolve.specs.files import check_regular_or_absent, kind_of

#: the files a job writes or reads in its output directory
OUTPUT_NAMES = (
    LOCK_NAME,
    "samples.jsonl",
    "samples.jsonl.tmp",
    "plan.yaml",
    "pinning.txt",
    "solve.pickle",  # solver.job.solve_record
    "certificate.json",
    "report.html",
)
_HINT = ": remove it or choose another --out"


class OutputDir:
    """A taken output directory (see the module docstring); `release` (or leaving a ``with``
    block) gives the lock back."""

    def __init__(self, path: Path, key: str) -> None:
        self.path = path
        self._key: str | None = key

    def release(self) -> None:
        if self._key is not None:
            release_lock(self._key)
            self._key = None

    def __enter__(self) -> OutputDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def check_out_path(out: Path) -> None:
    """`out` is a directory, or absent and then made; anything else is refused by name."""
    try:
        mode = os.stat(out).st_mode
    except FileNotFoundError:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise SamplingError.worded(
                "{out} {path}: a part of the path is a file, not a directory", path=out
            ) from None
        return
    if not stat.S_ISDIR(mode):
        raise SamplingError.worded(
            "{out} {path} is {kind}, not a directory: the output folder holds several "
            "files; name a directory (made if missing)",
            path=out,
            kind=kind_of(mode),
        )


def take_output_dir(out: str | Path, *, resume: bool = False, force: bool = False) -> OutputDir:
    """Take `out` for one job (the module docstring's four steps), before anything is written."""
    out = Path(out)
    check_out_path(out)
    for name in OUTPUT_NAMES:
        check_regular_or_absent(out / name, hint=_HINT)
    key = acquire_lock(out)
    try:
        check_start(out / "samples.jsonl", resume, force)
    except BaseException:
        release_lock(key)
        raise
    return OutputDir(out, key)
