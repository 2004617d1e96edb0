"""Reading sample files (evt.read_samples)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tasksolve.evt import EVTError, read_samples


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_plain_numbers(tmp_path: Path) -> None:
    p = write(tmp_path, "x.txt", "# comment\n1.5\n\n2\n-3e2\n")
    np.testing.assert_array_equal(read_samples(p), [1.5, 2.0, -300.0])


def test_csv_with_header(tmp_path: Path) -> None:
    p = write(tmp_path, "x.csv", "plan,throughput,latency\na,1.0,5\nb,2.5,6\n")
    np.testing.assert_array_equal(read_samples(p, "throughput"), [1.0, 2.5])
    np.testing.assert_array_equal(read_samples(p, "latency"), [5.0, 6.0])
    single = write(tmp_path, "y.csv", "throughput\n1\n2\n")
    np.testing.assert_array_equal(read_samples(single), [1.0, 2.0])
    semi = write(tmp_path, "z.csv", "a;b\n1;2\n3;4\n")
    np.testing.assert_array_equal(read_samples(semi, "b"), [2.0, 4.0])


def test_json_lines(tmp_path: Path) -> None:
    p = write(tmp_path, "x.jsonl", '{"t": 1.0, "plan": "a"}\n{"t": 2, "plan": "b"}\n')
    np.testing.assert_array_equal(read_samples(p, "t"), [1.0, 2.0])
    one = write(tmp_path, "y.jsonl", '{"t": 1.0}\n{"t": 3}\n')
    np.testing.assert_array_equal(read_samples(one), [1.0, 3.0])


@pytest.mark.parametrize(
    "name,text,column,message",
    [
        ("e.txt", "", None, "empty"),
        ("c.txt", "# only a comment\n", None, "no data"),
        ("t.txt", "1\n2\nabc\n", None, ":3: 'abc' is not a number"),
        ("n.txt", "1\nnan\n", None, ":2: value 'nan' is not finite"),
        ("i.txt", "1\ninf\n", None, "not finite"),
        ("a.csv", "a,b\n1,2\n", None, "several columns"),
        ("m.csv", "a,b\n1,2\n", "c", "no column 'c'"),
        ("v.csv", "a,b\n1,\n", "b", ":2: no value"),
        ("w.csv", "a,b\n1,x\n", "b", ":2: 'x' is not a number"),
        ("h.csv", "a\n", None, "only a header"),
        ("nh.csv", "1,2\n3,4\n", None, "no header"),
        ("k.jsonl", '{"a": 1, "b": 2}\n', None, "several keys"),
        ("j.jsonl", '{"a": 1}\n{"a": "x"}\n', "a", ":2: 'x' is not a number"),
        ("b.jsonl", '{"a": 1}\n{"a": \n', "a", "invalid JSON"),
        ("p.txt", "1\n2\n", "t", "no header row"),
    ],
)
def test_errors(tmp_path: Path, name: str, text: str, column: str | None, message: str) -> None:
    p = write(tmp_path, name, text)
    with pytest.raises(EVTError, match=message.replace("(", r"\(")) as info:
        read_samples(p, column)
    assert "\n" not in str(info.value)


def test_missing_directory_and_binary(tmp_path: Path) -> None:
    with pytest.raises(EVTError, match="no such file"):
        read_samples(tmp_path / "missing.csv")
    with pytest.raises(EVTError, match="directory"):
        read_samples(tmp_path)
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(EVTError, match="not a text file"):
        read_samples(binary)
