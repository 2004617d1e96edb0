"""Input files (issue 25): regular files, or pipes read with a byte cap counted while reading; a
device is refused by name, a FIFO without a writer does not hang, references to FIFOs say what
they are, and a deep `base:` chain blames the chain, not a two-line file."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tasksolve.solver.cli import main
from tasksolve.specs import SpecError, files, load_spec
from tasksolve.specs.loader import builtin_path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = builtin_path("", "t2-ipfwd-intadd-x2")


@pytest.mark.parametrize("command", [["validate"], ["certify", "t2-ipfwd-intadd-x2", "--plan"], ["evt"]])
def test_dev_zero_is_refused_by_name_at_once(command, tmp_path, capsys):
    clock = time.monotonic()
    code = main([*command, "/dev/zero", *(["--out", str(tmp_path / "o")] if "certify" in command else [])])
    err = capsys.readouterr()
    assert code == 2 and "/dev/zero" in err.err + err.out and "not a regular file" in err.err + err.out
    assert time.monotonic() - clock < 30


def test_an_endless_pipe_stops_at_the_cap():
    source = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tasksolve.solver.cli", "validate", "-"],
            stdin=source.stdout,
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    finally:
        source.kill()
        source.wait()
    assert done.returncode == 2 and "too large" in done.stdout + done.stderr


def test_a_pipe_is_read(tmp_path):
    with open(EXAMPLE, "rb") as handle:
        done = subprocess.run(
            [sys.executable, "-m", "tasksolve.solver.cli", "validate", "-"],
            stdin=handle,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr


def test_a_fifo_without_a_writer_does_not_hang(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "FIFO_WAIT", 0.5)
    os.mkfifo(tmp_path / "spec.yaml")
    clock = time.monotonic()
    with pytest.raises(SpecError, match="FIFO .* nothing wrote to within 0.5 s"):
        load_spec(tmp_path / "spec.yaml")
    assert time.monotonic() - clock < 10


def test_a_fifo_with_a_writer_is_read(tmp_path):
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(EXAMPLE.read_bytes()))
    writer.start()
    try:
        assert load_spec(fifo).name == "t2-ipfwd-intadd-x2"
    finally:
        writer.join(timeout=10)


def test_a_reference_to_a_fifo_says_what_it_is(tmp_path):
    os.mkfifo(tmp_path / "box.yaml")
    text = EXAMPLE.read_text().replace("topology: ultrasparc-t2", "topology: box.yaml")
    assert "topology: box.yaml" in text
    (tmp_path / "spec.yaml").write_text(text)
    with pytest.raises(SpecError, match=r"`box.yaml` is a FIFO \(named pipe\), not a regular file"):
        load_spec(tmp_path / "spec.yaml")


def test_a_deep_base_chain_blames_the_chain(tmp_path):
    depth = 1499
    top = builtin_path("topologies", "ultrasparc-t2").read_text()
    (tmp_path / f"t{depth}.yaml").write_text(top)
    for i in range(depth):
        (tmp_path / f"t{i}.yaml").write_text(f"base: t{i + 1}.yaml\n")
    (tmp_path / "spec.yaml").write_text(EXAMPLE.read_text().replace("topology: ultrasparc-t2", "topology: t0.yaml"))
    with pytest.raises(SpecError) as caught:
        load_spec(tmp_path / "spec.yaml")
    message = str(caught.value)
    assert "chain of `base:` references" in message and "nested too deeply" not in message
