"""TaskGraph validation and levels; STG and optimal.csv parsing, including malformed files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasksolve.solver.makespan.stg import BestKnown, StgFormatError, parse_stg, read_optimal_csv, read_stg
from tasksolve.solver.makespan.taskgraph import CycleError, DuplicateError, TaskGraph, TaskGraphError, UnknownTaskError

#: the STG subset ships with the tests: a missing file is a failure, never a skip
DATA = Path(__file__).resolve().parents[1] / "data" / "stg"


def test_levels_and_critical_path() -> None:
    g = TaskGraph({"a": 3, "b": 2, "c": 4, "d": 1}, [("a", "b", 1), ("a", "c"), ("b", "d", 5), ("c", "d")])
    assert g.topological_order == (0, 1, 2, 3)
    assert g.t_levels() == (0, 3, 3, 7)
    assert g.b_levels() == (8, 3, 5, 1)
    assert g.b_levels(with_delays=True) == (12, 8, 5, 1)
    assert g.t_levels(with_delays=True) == (0, 4, 3, 11)
    assert g.critical_path_length() == 8
    assert g.critical_path() == ("a", "c", "d")
    assert g.critical_path(with_delays=True) == ("a", "b", "d")
    assert g.total_work == 10 and g.has_delays
    assert not g.without_delays().has_delays
    assert g.with_uniform_delay(2).edges[0].delay == 2
    assert g == TaskGraph.from_predecessors(
        {"a": 3, "b": 2, "c": 4, "d": 1}, {"b": [("a", 1)], "c": ["a"], "d": [("b", 5), "c"]}
    )


def test_cycle_is_named() -> None:
    with pytest.raises(CycleError, match=r"cycle: (b -> c -> d -> b|c -> d -> b -> c)") as info:
        TaskGraph(
            {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1}, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "b"), ("d", "e")]
        )
    assert sorted(info.value.cycle) == ["b", "c", "d"]
    with pytest.raises(CycleError, match="a -> a"):
        TaskGraph({"a": 1}, [("a", "a")])


@pytest.mark.parametrize(
    ("durations", "edges", "error", "text"),
    [
        ({"a": -1}, [], TaskGraphError, "duration of task 'a' must be >= 0"),
        ({"a": 1.5}, [], TaskGraphError, "must be an integer"),
        ({"a": 1}, [("a", "zz")], UnknownTaskError, "unknown task 'zz'"),
        ({"a": 1, "b": 1}, [("a", "b"), ("a", "b", 2)], DuplicateError, "given twice"),
        ({"a": 1, "b": 1}, [("a", "b", -3)], TaskGraphError, "delay of edge"),
    ],
)
def test_bad_graphs(durations, edges, error, text) -> None:
    with pytest.raises(error, match=text):
        TaskGraph(durations, edges)
    assert issubclass(error, ValueError)


GOOD = """\
3
0 0 0
1 4 1 0
2 2 1 0
3 5 2 1 2
4 0 1 3
# a comment
"""


def test_parse_small_stg() -> None:
    g = parse_stg(GOOD)
    assert g.names == ("1", "2", "3")
    assert g.durations == (4, 2, 5)
    assert [(e.pred, e.succ) for e in g.edges] == [("1", "3"), ("2", "3")]
    full = parse_stg(GOOD, keep_dummies=True)
    assert full.names == ("0", "1", "2", "3", "4") and full.critical_path_length() == 9


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("", None, "empty file"),
        ("# only a comment\n\n", None, "empty file"),
        ("x\n", 1, "field 1 is 'x', expected an integer"),
        ("2 3\n", 1, "only the number of tasks"),
        ("2\n0 0 0\n1 3 1 0\n", 3, "ends after 2 task lines, expected 4"),
        ("1\n0 0 0\n1 3 2 0\n2 0 1 1\n", 3, "announces 2 predecessors but lists 1"),
        ("1\n0 0 0\n1 3 1 2\n2 0 1 1\n", 3, "predecessor 2: predecessors must be earlier"),
        ("1\n0 0 0\n1 3.5 1 0\n2 0 1 1\n", 3, "field 2 is '3.5'"),
        ("1\n0 0 0\n2 3 1 0\n2 0 1 1\n", 3, "expected task id 1, found 2"),
        ("1\n0 0 0\n1 -3 1 0\n2 0 1 1\n", 3, "negative time"),
        ("1\n0 0 0\n1 3\n2 0 1 1\n", 3, "at least 3 fields"),
        ("1\n0 1 0\n1 3 1 0\n2 0 1 1\n", 2, "dummy task 0 must have time 0"),
        ("1\n0 0 0\n1 3 2 0 0\n2 0 1 1\n", 3, "lists a predecessor twice"),
        ("1\n0 0 0\n1 3 1 0\n2 0 1 1\n3 1 1 2\n", 5, "unexpected data after the last task"),
    ],
)
def test_malformed_stg(text: str, line: int | None, problem: str) -> None:
    with pytest.raises(StgFormatError) as info:
        parse_stg(text, "bad.stg")
    assert info.value.line == line
    assert problem in str(info.value)
    assert str(info.value).startswith(f"bad.stg:{line}:" if line else "bad.stg:")


def test_read_stg_file_errors(tmp_path: Path) -> None:
    with pytest.raises(StgFormatError, match="missing.stg: cannot read"):
        read_stg(tmp_path / "missing.stg")
    binary = tmp_path / "b.stg"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(StgFormatError, match="not a text file"):
        read_stg(binary)


def test_optimal_csv(tmp_path: Path) -> None:
    path = tmp_path / "optimal.csv"
    path.write_text("graph,processors,lower_bound,best_known\na.stg,2,10,12\nb.stg,4,7,7\n")
    table = read_optimal_csv(path)
    assert table[("a.stg", 2)] == BestKnown("a.stg", 2, 10, 12)
    assert table[("b.stg", 4)].is_optimal and not table[("a.stg", 2)].is_optimal
    path.write_text("graph,processors,lower_bound,best_known\na.stg,2,ten,12\n")
    with pytest.raises(StgFormatError, match=r"optimal.csv:2: field 3 is 'ten'"):
        read_optimal_csv(path)
    path.write_text("graph,procs\n")
    with pytest.raises(StgFormatError, match=r"optimal.csv:1: expected the header"):
        read_optimal_csv(path)
    path.write_text("graph,processors,lower_bound,best_known\na.stg,2,13,12\n")
    with pytest.raises(StgFormatError, match=r":2: lower_bound 13 exceeds best_known 12"):
        read_optimal_csv(path)


def test_real_stg_set_reads() -> None:
    table = read_optimal_csv(DATA / "optimal.csv")
    assert len(table) == 720
    g = read_stg(DATA / "rand0000.stg")
    assert len(g) == 50 and g.critical_path_length() == 55  # the file's "CP Length"
    assert g.total_work == 262
