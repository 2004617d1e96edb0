"""`topology probe --load` on the public core-to-core latency matrices of six real CPUs
(tests/data/core-to-core-latency, MIT): the structure proposed from the latencies alone is the
one the vendor states, a level of two populations gets both figures, pairs slower than their
level are reported like faster ones, nothing is said about interference that was not measured,
the host's tree is never used without --topology, and hostile files are one located message."""

from __future__ import annotations

import json
import re
import statistics
from functools import cache
from pathlib import Path

import pytest

from tasksolve.simulate.probe.analysis import analyse
from tasksolve.simulate.probe.loading import read_csv
from tasksolve.simulate.probe.report import write_csv
from tasksolve.simulate.probe.structure import propose
from tasksolve.solver.cli import main
from tasksolve.specs.exporters.topology_text import topology_yaml
from tasksolve.specs.importers.sysfs import parse_cpu_list
from tasksolve.specs.loader import load_topology
from tasksolve.specs.topology import Topology

DATA = Path(__file__).resolve().parents[1] / "data" / "core-to-core-latency"


@cache
def proposal(name: str):
    analysis = analyse([read_csv(DATA / f"{name}.csv")])
    return analysis, propose(analysis)


def cpu_sets(level) -> list[set[int]]:
    return sorted((set(g) for g in level.groups), key=min)


def run_cli(capsys, *args):
    code = main(["topology", "probe", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def vendor_topology(tmp_path, name, levels, cpu_of) -> Path:
    """A topology of the vendor's tree with each context's OS CPU (`cpu_of` of its indices)."""
    data = {"name": name, "clock": "2GHz", "levels": [{"name": n, "count": c} for n, c in levels]}
    skeleton = Topology.model_validate(data)
    counts = skeleton.counts
    data["os_cpus"] = {}
    for context, path in enumerate(skeleton.context_names):
        index, rest = [], context
        for count in reversed(counts):
            index.insert(0, rest % count)
            rest //= count
        data["os_cpus"][path] = cpu_of(*index)
    out = tmp_path / f"{name}.yaml"
    out.write_text(topology_yaml(Topology.model_validate(data)))
    return out


# ------------------------------------------------------------------ the proposed structure
def test_ryzen_9_5950x_is_16_smt_pairs_in_2_ccds_of_8_cores():
    _, found = proposal("amd-ryzen9-5950x")
    smt, ccd = found.levels
    assert cpu_sets(smt) == [{i, i + 16} for i in range(16)]  # Linux numbers SMT siblings i, i + cores
    assert cpu_sets(ccd) == [set(range(8)) | set(range(16, 24)), set(range(8, 16)) | set(range(24, 32))]
    assert found.tree and smt.inferred is None and ccd.inferred is None


def test_dual_epyc_7742_is_2_sockets_of_ccxs_of_4_smt_cores():
    _, found = proposal("dual-amd-epyc-7742")
    smt, ccx, socket = found.levels
    assert cpu_sets(smt) == [{i, i + 128} for i in range(128)]
    assert cpu_sets(ccx) == [set(range(4 * k, 4 * k + 4)) | set(range(128 + 4 * k, 132 + 4 * k)) for k in range(32)]
    first = set(range(64)) | set(range(128, 192))
    assert cpu_sets(socket) == [first, set(range(256)) - first] and found.tree
    # one socket's CCXs talk at cross-socket latency: that socket is the rest of the machine, said so
    assert set(socket.inferred) == first


def test_the_epyc_socket_level_is_two_populations_with_both_figures():
    analysis, found = proposal("dual-amd-epyc-7742")
    socket = found.levels[-1]
    latency = analysis.medians
    first = set(range(64)) | set(range(128, 192))

    def ccx(cpu):
        return (cpu % 128) // 4

    inner = {
        name: [v for (a, b), v in latency.items() if a in half and b in half and ccx(a) != ccx(b)]
        for name, half in (("slow", first), ("fast", set(range(256)) - first))
    }
    by_size = sorted(socket.populations, key=lambda p: p.latency_ns)
    assert [p.pairs for p in by_size] == [len(inner["fast"]), len(inner["slow"])] == [7680, 7680]
    assert by_size[0].latency_ns == pytest.approx(statistics.median(inner["fast"]), abs=0.01)
    assert by_size[1].latency_ns == pytest.approx(statistics.median(inner["slow"]), abs=0.01)
    assert by_size[0].latency_ns < 160 < 200 < by_size[1].latency_ns
    # the level's figure is one population's, a figure pairs have -- never the median of both
    assert socket.latency_ns in (by_size[0].latency_ns, by_size[1].latency_ns)


def test_xeon_gold_6242_is_2_sockets_of_16_smt_cores_and_its_slow_smt_pair_is_reported():
    analysis, found = proposal("dual-intel-xeon-gold-6242")
    smt, socket = found.levels
    assert cpu_sets(smt) == [{i, i + 32} for i in range(32)]
    assert cpu_sets(socket) == [set(range(16)) | set(range(32, 48)), set(range(16, 32)) | set(range(48, 64))]
    assert smt.slower == [(0, 32)] and analysis.medians[(0, 32)] > 1.5 * smt.latency_ns


def test_xeon_phi_7210_is_32_tiles_of_2_and_sparc_t4_two_groups_of_8():
    _, phi = proposal("intel-xeon-phi-7210")
    (tiles,) = phi.levels
    assert cpu_sets(tiles) == [{2 * k, 2 * k + 1} for k in range(32)] and phi.tree
    _, sparc = proposal("dual-sparc-t4")
    (cores,) = sparc.levels
    assert cpu_sets(cores) == [set(range(8)), set(range(8, 16))] and sparc.tree


def test_apple_m1_pro_is_hybrid_and_no_uniform_tree_is_made_up():
    _, found = proposal("apple-m1-pro")
    (clusters,) = found.levels
    # 2 efficiency cores and two performance clusters (3 each on this 8-CPU part): never evened out
    assert cpu_sets(clusters) == [{0, 1}, {2, 3, 4}, {5, 6, 7}]
    assert not found.tree and "different sizes" in found.why_not_tree


# ------------------------------------------------------------------ the command
def test_a_latency_only_matrix_is_analysed_flat_with_no_interference_finding(capsys, monkeypatch):
    import tasksolve.solver.probe as command

    monkeypatch.setattr(command, "_topology", lambda name: pytest.fail(f"read a topology ({name})"))
    code, out, _ = run_cli(capsys, "--load", DATA / "amd-ryzen9-5950x.csv", "--json")
    assert code == 0
    data = json.loads(out)
    analysis = data["analysis"]
    assert not any(f.startswith("interference") for f in analysis["findings"])
    assert analysis["interference_measured"] is False and analysis["worst_ratio"] is None
    assert [c["level"] for c in analysis["costs"]] == ["machine"] and analysis["costs"][0]["cycles"] is None
    assert data["topology"] is None and any("flat set" in n for n in data["notes"])
    assert [lv["size"] for lv in data["proposal"]["levels"]] == [2, 16]
    assert data["proposed_topology"]["levels"] == [
        {"name": "domain_a", "count": 2},
        {"name": "domain_b", "count": 8},
        {"name": "cpu", "count": 2},
    ]


def test_the_text_is_compact_and_names_cpu_ranges(capsys):
    code, out, _ = run_cli(capsys, "--load", DATA / "dual-amd-epyc-7742.csv")
    assert code == 0 and len(out.splitlines()) < 40
    assert "CPUs 64-127,192-255 share one domain at ~132" in out
    assert "CPUs 0-63,128-191 share one domain at ~266.9" in out and "inferred" in out
    assert re.search(r"~132\.\d+ ns over 7680 pair\(s\).*\n.*~266\.\d+ ns over 7680 pair\(s\)", out)


def test_with_the_vendor_tree_the_socket_level_reports_both_populations(capsys, tmp_path):
    tree = vendor_topology(
        tmp_path,
        "epyc",
        [("socket", 2), ("ccx", 16), ("core", 4), ("thread", 2)],
        lambda s, x, c, t: 64 * s + 4 * x + c + 128 * t,
    )
    code, out, _ = run_cli(capsys, "--load", DATA / "dual-amd-epyc-7742.csv", "--topology", tree, "--json")
    assert code == 0
    analysis = json.loads(out)["analysis"]
    socket = next(c for c in analysis["costs"] if c["level"] == "socket")
    figures = sorted((p["latency_ns"], p["pairs"], p["cpus"]) for p in socket["populations"])
    assert [(round(f, -1), n, cpus) for f, n, cpus in figures] == [
        (130, 7680, "64-127,192-255"),
        (270, 7680, "0-63,128-191"),
    ]
    (said,) = [f for f in analysis["findings"] if f.startswith("level socket: its pairs form 2 populations")]
    assert "7680 pair(s)" in said and socket["latency_ns"] in (figures[0][0], figures[1][0])


def test_pairs_slower_than_their_level_are_reported_compactly(capsys, tmp_path):
    tree = vendor_topology(
        tmp_path, "xeon", [("socket", 2), ("core", 16), ("thread", 2)], lambda s, c, t: 16 * s + c + 32 * t
    )
    code, out, _ = run_cli(capsys, "--load", DATA / "dual-intel-xeon-gold-6242.csv", "--topology", tree)
    assert code == 0
    (line,) = [line for line in out.splitlines() if "slower than their level" in line]
    assert "pair 0-32 of level core is slower than it: 13 ns" in line
    code, out, _ = run_cli(capsys, "--load", DATA / "dual-intel-xeon-gold-6242.csv", "--topology", tree, "--json")
    assert [r["pair"] for r in json.loads(out)["analysis"]["slower_than_level"]] == [[0, 32]]


def test_the_proposed_structure_is_written_as_a_topology_that_loads_back(capsys, tmp_path):
    out = tmp_path / "ryzen.yaml"
    args = ("--load", DATA / "amd-ryzen9-5950x.csv", "--write-topology", out, "--clock", "3.4GHz")
    code, _, _ = run_cli(capsys, *args)
    assert code == 0
    topo = load_topology(out)
    assert topo.describe().startswith("domain_a: 2 > domain_b: 8 > cpu: 2")
    cpus = topo.os_cpu_list
    pairs = [{cpus[c], cpus[c + 1]} for c in range(0, 32, 2)]
    assert sorted(pairs, key=min) == [{i, i + 16} for i in range(16)]
    analysis, found = proposal("amd-ryzen9-5950x")
    cycles = topo.communication.cycles
    assert cycles["domain_b"] == pytest.approx(found.levels[0].latency_ns * 3.4, abs=0.1)
    assert cycles["machine"] == pytest.approx(found.machine.latency_ns * 3.4, abs=0.1)


def test_no_uniform_tree_is_written_for_a_hybrid(capsys, tmp_path):
    out = tmp_path / "m1.yaml"
    code, _, err = run_cli(capsys, "--load", DATA / "apple-m1-pro.csv", "--write-topology", out)
    assert code == 1 and "not a uniform tree" in err and not out.exists()


def test_output_needs_a_topology_when_loading(capsys, tmp_path):
    code, _, err = run_cli(capsys, "--load", DATA / "dual-sparc-t4.csv", "--output", tmp_path / "t.yaml")
    assert code == 2 and "--topology" in err and not (tmp_path / "t.yaml").exists()


def test_a_latency_only_repetition_round_trips_through_the_probe_csv(tmp_path):
    run = read_csv(DATA / "dual-sparc-t4.csv")
    again = tmp_path / "again.csv"
    again.write_text(write_csv(run))
    assert again.read_text().startswith("cpu_i,cpu_j,latency_ns\n")
    back = read_csv(again)
    assert back.keys() == run.keys() and all(abs(back[p].latency_ns - run[p].latency_ns) < 0.06 for p in run)


# ------------------------------------------------------------------ hostile files
def matrix(cells: list[list[str]]) -> str:
    return "".join(",".join(row) + "\n" for row in cells)


GOOD = [["", "", ""], ["20.5", "", ""], ["80", "81", ""]]


def with_cell(text: str) -> str:
    return matrix([GOOD[0], GOOD[1], ["80", text, ""]])


@pytest.mark.parametrize(
    ("text", "where", "says"),
    [
        (with_cell("NaN"), ":3:4:", "`NaN` is not a latency"),
        (with_cell("inf"), ":3:4:", "`inf` is not a latency"),
        (with_cell("-81"), ":3:4:", "must be positive"),
        (with_cell("1e308"), ":3:4:", "at most 1e+07"),
        (with_cell("0"), ":3:4:", "above 0"),
        (with_cell("9" * 5000), ":3:4:", "a number of 5000 characters"),
        (with_cell("\u0668\u0661"), ":3:4:", "ASCII digits"),
        (with_cell("1_000"), ":3:4:", "ASCII digits"),
        (matrix([GOOD[0], GOOD[1], ["80", "81"]]), ":3:4:", "a ragged row: 2 cell(s)"),
        (matrix(GOOD[:2]), ":2:1:", "not a square matrix: 2 rows of 3 cells"),
        (matrix([GOOD[0], ["20", "", "5"], GOOD[2]]), ":2:5:", "on or above the diagonal"),
        (matrix([["", "", ""], ["nan", "", ""], ["nan", "nan", ""]]), ":2:1:", "`nan` is not a latency"),
        ("", ":1:1:", "the file is empty"),
        ("\n\n", ":1:1:", "the file is empty"),
        ("cpu_i,cpu_j,latency_ns\n0,1,nan\n", ":2:5:", "`nan` is not a latency"),
        ("cpu_i,cpu_j,latency_ns\n0,1,5\n1,0,6\n", ":3:1:", "given twice"),
        ("cpu_i,cpu_j,latency_ns,slowdown_i,slowdown_j\n0,1,5,inf,1\n", ":2:7:", "not a rate ratio"),
        ("cpu_i,cpu_j\n0,1\n", ":1:1:", "missing column(s) latency_ns"),
    ],
)
def test_a_hostile_file_is_one_located_message_and_exit_2(capsys, tmp_path, text, where, says):
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    code, out, err = run_cli(capsys, "--load", bad)
    assert code == 2 and out == "" and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert f"bad.csv{where}" in line and says in line, line


def test_a_file_over_the_byte_cap_is_refused_while_reading(capsys, tmp_path, monkeypatch):
    import tasksolve.simulate.probe.loading as loading

    monkeypatch.setattr(loading, "MOST_BYTES", 100)
    code, _, err = run_cli(capsys, "--load", DATA / "dual-sparc-t4.csv")
    assert code == 2 and "too large" in err


@pytest.mark.parametrize("name", ["amd-ryzen9-5950x", "dual-sparc-t4"])
def test_every_public_cell_parses_to_the_number_written(name):
    rows = (DATA / f"{name}.csv").read_text().splitlines()
    run = read_csv(DATA / f"{name}.csv")
    assert len(run) == len(rows) * (len(rows) - 1) // 2
    for i, row in enumerate(rows):
        for j, cell in enumerate(row.split(",")[:i]):
            assert run[(j, i)].latency_ns == float(cell) and run[(j, i)].ratio is None
    assert parse_cpu_list(f"0-{len(rows) - 1}") == sorted({c for p in run for c in p})
