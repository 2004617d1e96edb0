"""``tasksolve pin``: every format checked against its tool's own syntax, CPU numbers against the
machine's numbering (the 2-socket SMT server of tests/data: context socketS.coreC.puT is CPU
8S + C + 16T, as Linux numbers such machines)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tasksolve.solver.cli import main
from tasksolve.specs import Plan, load_spec
from tasksolve.specs.exporters.pinning import FORMATS, pinning_text
from tasksolve.specs.exporters.topology_text import topology_yaml
from tasksolve.specs.importers.sysfs import import_sysfs

DATA = Path(__file__).parent.parent / "data"
CPU_LIST = r"\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*"  # util-linux / likwid / numactl CPU lists


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A spec on the imported server and a plan over scattered contexts; the expected CPUs."""
    folder = tmp_path_factory.mktemp("server")
    (folder / "server.yaml").write_text(topology_yaml(import_sysfs(DATA / "sysfs" / "server-2s").topology))
    (folder / "spec.yaml").write_text("""
tasksolve: 1
name: on-server
topology: server.yaml
applications:
  a: {tasks: {A: {cycles: 10}, B: {cycles: 10}, C: {cycles: 10}}, edges: [{from: A, to: B}, {from: B, to: C}]}
workload: [{app: a, instances: 2}]
""")
    spec = load_spec(folder / "spec.yaml")
    contexts = [1, 0, 7, 16, 31, 20]
    plan = Plan.from_contexts(spec, contexts, method="test")
    plan.save(folder / "plan.yaml")
    expected = []
    for thread, context in plan.bindings.items():
        s, c, t = (int(x) for x in re.findall(r"\d+", context))
        expected.append((thread, 8 * s + c + 16 * t))
    return folder, spec, plan, expected


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_taskset_and_numactl(server):
    _, spec, plan, expected = server
    text = pinning_text(spec, plan, "taskset")
    assert "# CPU numbers: OS CPU numbers from the topology" in text
    got = [re.fullmatch(rf"(\S+): taskset -c ({CPU_LIST})   # \S+", line).groups() for line in _lines(text)]
    assert [(t, int(c)) for t, c in got] == expected
    got = [
        re.fullmatch(rf"(\S+): numactl --physcpubind=({CPU_LIST}) --localalloc   # \S+", line).groups()
        for line in _lines(pinning_text(spec, plan, "numactl"))
    ]
    assert [(t, int(c)) for t, c in got] == expected


def _dpdk_sets(text: str) -> list[int]:
    """DPDK's set grammar: a number, a range a-b, or a parenthesised list of those."""
    text = text[1:-1] if text.startswith("(") else text
    out = []
    for item in text.split(","):
        first, _, last = item.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


def test_dpdk_lcores_grammar(server):
    _, spec, plan, expected = server
    (line,) = _lines(pinning_text(spec, plan, "dpdk"))
    dpdk_set = r"(?:\d+(?:-\d+)?|\((?:\d+(?:-\d+)?)(?:,\d+(?:-\d+)?)*\))"
    item = rf"{dpdk_set}(?:@{dpdk_set})?"
    assert re.fullmatch(rf"--lcores={item}(?:,{item})*", line)
    items = re.findall(rf"({dpdk_set})@({dpdk_set})", line[len("--lcores=") :])
    lcores = [_dpdk_sets(a) for a, _ in items]
    cpus = [_dpdk_sets(b) for _, b in items]
    assert lcores == [[i] for i in range(len(expected))]
    assert cpus == [[cpu] for _, cpu in expected]


def test_likwid_omp_systemd(server):
    _, spec, plan, expected = server
    cpus = [cpu for _, cpu in expected]
    (line,) = _lines(pinning_text(spec, plan, "likwid-pin"))
    match = re.fullmatch(rf"likwid-pin -c ({CPU_LIST})", line)
    assert [int(c) for c in match.group(1).split(",")] == cpus
    (line,) = _lines(pinning_text(spec, plan, "omp"))
    match = re.fullmatch(
        r"OMP_NUM_THREADS=(\d+) OMP_PLACES='(\{\d+(?:,\d+)*\}(?:,\{\d+(?:,\d+)*\})*)' "
        r"OMP_PROC_BIND=close",
        line,
    )
    assert int(match.group(1)) == len(cpus)
    assert [[int(n) for n in place.split(",")] for place in re.findall(r"\{([^}]*)\}", match.group(2))] == [
        [c] for c in cpus
    ]
    section, line = _lines(pinning_text(spec, plan, "systemd"))
    assert section == "[Service]"
    match = re.fullmatch(r"CPUAffinity=((?:\d+(?:-\d+)?)(?:[ ,]\d+(?:-\d+)?)*)", line)
    assert sorted(int(c) for c in re.split("[ ,]", match.group(1))) == sorted(cpus)


def test_json_and_flat_numbers():
    spec = load_spec("t2-ipfwd-intadd-x2")
    plan = Plan.from_contexts(spec, spec.usable_contexts[: len(spec.threads)])
    data = json.loads(pinning_text(spec, plan, "json"))
    assert data["os_cpu_numbers"] is False and "flat context indices" in data["numbering"]
    assert [t["cpu"] for t in data["threads"]] == [spec.topology.parse_context(c) for c in plan.bindings.values()]
    for form in FORMATS:
        if form != "json":
            assert "flat context indices" in pinning_text(spec, plan, form).splitlines()[1]


def test_cli_pin(capsys, server, tmp_path):
    folder, _, _, expected = server
    code, out, err = run(capsys, "pin", str(folder / "plan.yaml"), "--spec", str(folder / "spec.yaml"), "-f", "json")
    assert code == 0, err
    assert [(t["thread"], t["cpu"]) for t in json.loads(out)["threads"]] == expected
    target = tmp_path / "pins.txt"
    code, _, _ = run(
        capsys,
        "pin",
        str(folder / "plan.yaml"),
        "--spec",
        str(folder / "spec.yaml"),
        "-f",
        "taskset",
        "--output",
        str(target),
    )
    assert code == 0 and "taskset -c 16" in target.read_text()
    # without --spec: on-server is not a built-in example
    code, _, err = run(capsys, "pin", str(folder / "plan.yaml"), "-f", "taskset")
    assert code == 2 and "--spec" in err
    code, _, err = run(capsys, "pin", str(folder / "plan.yaml"), "-f", "taskst", "--spec", str(folder / "spec.yaml"))
    assert code == 2 and "did you mean `taskset`" in err


def test_cli_pin_builtin_spec_by_name(capsys, tmp_path):
    spec = load_spec("t2-ipfwd-intadd-x2")
    Plan.from_contexts(spec, spec.usable_contexts[: len(spec.threads)]).save(tmp_path / "plan.yaml")
    code, out, err = run(capsys, "pin", str(tmp_path / "plan.yaml"), "-f", "dpdk")
    assert code == 0, err
    assert out.splitlines()[-1].startswith("--lcores=0@")
    bad = tmp_path / "bad.yaml"
    bad.write_text((tmp_path / "plan.yaml").read_text().replace("core", "kore", 1))
    code, _, err = run(capsys, "pin", str(bad), "-f", "dpdk")
    assert code == 2 and f"{bad}:" in err and "Traceback" not in err


def test_a_plan_written_by_run_pins_with_its_own_spec(tmp_path, capsys):
    """`run` records where its spec is in plan.yaml (as `solve` does): a user's copy of a built-in
    example, under the example's own name, is found again by `pin` -- never the built-in."""
    import yaml

    from tasksolve.specs.loader import EXAMPLES

    mine = tmp_path / "mine.yaml"
    mine.write_text((EXAMPLES / "t2-ipfwd-intadd-x2.yaml").read_text())
    out = tmp_path / "m"
    code = main(["run", str(mine), "--out", str(out), "--samples", "30", "--design", "random",
                 "--oracle", "analytic", "--time-limit", "2", "--json"])  # fmt: skip
    assert code in (0, 1)
    spec_file = yaml.safe_load((out / "plan.yaml").read_text())["spec_file"]
    assert (out / spec_file).resolve() == mine.resolve()
    capsys.readouterr()
    assert main(["pin", str(out / "plan.yaml"), "-f", "taskset"]) == 0
    assert "taskset -c" in capsys.readouterr().out
