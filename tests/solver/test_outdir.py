"""The output directory is taken before anything is written in it (issue 25): links, FIFOs and
devices inside --out are refused by name and never opened, a refused --resume or a second run
writes nothing, a regular file as --out and a full disk get clear messages."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tasksolve.solver.certify.outdir import take_output_dir
from tasksolve.solver.cli import main
from tasksolve.specs import files
from tests.solver.test_sample_log import HOLDER, ROOT, SPEC_TEXT

FAST = ["--oracle", "analytic", "--samples", "40", "--design", "random", "--workers", "1", "--json"]


@pytest.fixture
def spec_file(tmp_path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(SPEC_TEXT)
    return path


def _run(command, spec_file, out, *extra):
    extra = list(extra) + (["--time-limit", "2"] if command == "run" else [])
    return main([command, str(spec_file), "--out", str(out), *FAST, *extra])


def test_a_refused_resume_leaves_the_finished_run_alone(spec_file, tmp_path, capsys):
    out = tmp_path / "out"
    assert _run("run", spec_file, out) in (0, 1)
    before = {name: (out / name).read_bytes() for name in ("plan.yaml", "pinning.txt", "certificate.json")}
    changed = tmp_path / "changed.yaml"
    changed.write_text(SPEC_TEXT.replace("instances: 2", "instances: 3"))
    capsys.readouterr()
    assert _run("run", changed, out, "--resume") == 2
    assert "the spec changed" in capsys.readouterr().err
    assert {name: (out / name).read_bytes() for name in before} == before


def test_a_second_run_writes_nothing(spec_file, tmp_path, capsys):
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert _run("run", spec_file, out) == 2
        assert f"PID {holder.pid}" in capsys.readouterr().err
        assert sorted(p.name for p in out.iterdir()) == [".tasksolve.lock"]
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("name", [".tasksolve.lock", "samples.jsonl.tmp", "plan.yaml", "samples.jsonl"])
def test_a_link_inside_out_is_refused_and_its_target_untouched(spec_file, tmp_path, capsys, name):
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\nlines\nno newline at the end")
    (out / name).symlink_to(victim)
    for extra in ([], ["--resume"], ["--force"]):
        assert _run("certify", spec_file, out, *extra) == 2
        err = capsys.readouterr().err
        assert f"{name}: is a symbolic link, not a regular file" in err and "Traceback" not in err
    assert victim.read_text() == "precious\nlines\nno newline at the end"


def test_a_fifo_or_device_inside_out_is_refused_without_hanging(spec_file, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "samples.jsonl")
    clock = time.monotonic()
    for extra in ([], ["--resume"], ["--force"]):
        assert _run("certify", spec_file, out, *extra) == 2
        assert "samples.jsonl: is a FIFO (named pipe), not a regular file" in capsys.readouterr().err
    assert time.monotonic() - clock < 30


def test_the_lock_file_is_opened_without_following_a_link_even_unchecked(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / ".tasksolve.lock").symlink_to(victim)
    from tasksolve.solver.certify.service import acquire_lock

    with pytest.raises(files.UnsafePathError, match="symbolic link"):
        acquire_lock(tmp_path / "out")
    assert victim.read_text() == "keep me"


def test_out_naming_a_regular_file_says_so(spec_file, tmp_path, capsys):
    out = tmp_path / "outfile"
    out.write_text("x")
    assert _run("certify", spec_file, out) == 2
    err = capsys.readouterr().err
    assert "is a regular file, not a directory" in err and "File exists" not in err
    assert out.read_text() == "x"


def test_take_output_dir_is_reentrant_and_released(tmp_path):
    with take_output_dir(tmp_path / "o") as taken:
        with take_output_dir(tmp_path / "o"):
            pass
        assert taken.path.is_dir()
    probe = subprocess.run(
        [sys.executable, "-c", HOLDER.replace("time.sleep(60)", ""), str(tmp_path / "o")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "locked" in probe.stdout, probe.stderr


def test_atomic_writes_never_write_through_a_link_nor_into_a_fifo(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "result.json"
    link.symlink_to(victim)
    files.write_text_atomic(link, "new\n")
    assert victim.read_text() == "keep me" and not link.is_symlink() and link.read_text() == "new\n"
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(files.UnsafePathError, match="FIFO"):
        files.write_text_atomic(tmp_path / "fifo", "x")
    with pytest.raises(files.UnsafePathError, match="symbolic link"):
        (tmp_path / "log").symlink_to(victim)
        files.append_text(tmp_path / "log", "x\n")
    assert victim.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "log", "result.json", "victim.txt"]


def test_a_full_disk_names_the_file_and_suggests_resume(spec_file, tmp_path, capsys, monkeypatch):
    real_write = os.write

    def full(fd, data):
        if "samples.jsonl" in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    out = tmp_path / "out"
    assert _run("certify", spec_file, out) == 3
    err = capsys.readouterr().err
    assert "samples.jsonl" in err and "--resume" in err and "Traceback" not in err


def test_a_forked_child_closes_the_held_lock(tmp_path):
    """A worker forked while a job holds the directory's lock closes its copy of the lock's
    descriptor (and forgets the table) without error, so only the job's process holds the lock."""
    from tasksolve.solver.certify import samples_file

    taken = take_output_dir(tmp_path / "out")
    try:
        ((fd, *_),) = samples_file._HELD.values()
        pid = os.fork()
        if pid == 0:  # the child: the fork handler has run
            try:
                os.fstat(fd)
                code = 1  # still open
            except OSError:
                code = 0 if not samples_file._HELD else 2
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        os.fstat(fd)  # the parent's stays open
    finally:
        taken.release()
