"""The probe's compiled helper: ``pingpong.c`` built with the system C compiler on first use.

The binary goes to ``$XDG_CACHE_HOME/tasksolve/probe-<hash of the source>/probe`` (``~/.cache``
without the variable); ``$CC`` names the compiler (default ``cc``).  Building never raises: a
missing compiler or a failed build returns ``None`` and the reason, and the probe falls back to
the Python measurement (`simulate.probe.fallback`), saying how coarse it is.  Nothing is built at
install time, so installing never fails for want of a compiler.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

SOURCE = "pingpong.c"
BUILD_TIMEOUT_S = 60


def source_text() -> bytes:
    return resources.files("tasksolve.simulate.probe").joinpath(SOURCE).read_bytes()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tasksolve"


def helper_path() -> Path:
    digest = hashlib.sha256(source_text()).hexdigest()[:16]
    return cache_dir() / f"probe-{digest}" / "probe"


def build_helper() -> tuple[Path | None, str]:
    """The helper's path (built now if needed) and a one-line note; ``(None, reason)`` when it
    cannot be built."""
    target = helper_path()
    if target.is_file() and os.access(target, os.X_OK):
        return target, f"compiled helper {target}"
    compiler = os.environ.get("CC", "cc")
    if shutil.which(compiler) is None:
        return None, f"no C compiler (`{compiler}`) on PATH"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as folder:
            src = Path(folder) / SOURCE
            src.write_bytes(source_text())
            out = Path(folder) / "probe"
            done = subprocess.run(
                [compiler, "-O2", "-pthread", "-o", str(out), str(src)],
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT_S,
            )
            if done.returncode != 0 or not out.is_file():
                tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
                return None, f"`{compiler}` failed to build the helper: {tail[0][:200]}"
            os.replace(out, target)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"the helper could not be built ({exc.__class__.__name__}: {exc})"
    return target, f"compiled helper built now: {target}"
