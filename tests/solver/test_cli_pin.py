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


def _node(cpu: int) -> int:
    """The server's NUMA node of a CPU (tests/data/sysfs/server-2s: node0 0-7,16-23, node1 the rest)."""
    return 0 if cpu % 16 < 8 else 1


def test_taskset_script_table_and_numactl(server):
    """The launcher's table pins each thread's 15-byte name to the thread's OS CPU; numactl binds
    the plan's CPUs and the NUMA nodes sysfs gives them."""
    _, spec, plan, expected = server
    text = pinning_text(spec, plan, "taskset")
    assert "# CPU numbers: OS CPU numbers from the topology" in text
    table = re.search(r"^threads='([^']*)'$", text, re.M).group(1).splitlines()
    assert [(name, int(cpu)) for cpu, name in (row.split(" ", 1) for row in table)] == expected
    (_, line) = _lines(pinning_text(spec, plan, "numactl"))
    match = re.fullmatch(rf'exec numactl --physcpubind=({CPU_LIST}) --membind=({CPU_LIST}) -- "\$@"', line)
    assert _expand(match.group(1)) == sorted(cpu for _, cpu in expected)
    assert _expand(match.group(2)) == sorted({_node(cpu) for _, cpu in expected})


def _expand(cpu_list: str) -> list[int]:
    out = []
    for item in cpu_list.split(","):
        first, _, last = item.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


def test_dpdk_lcores_grammar(server):
    _, spec, plan, expected = server
    (line,) = _lines(pinning_text(spec, plan, "dpdk"))
    dpdk_set = r"(?:\d+(?:-\d+)?|\((?:\d+(?:-\d+)?)(?:,\d+(?:-\d+)?)*\))"
    item = rf"{dpdk_set}(?:@{dpdk_set})?"
    match = re.fullmatch(rf"--lcores='({item}(?:,{item})*)'", line)
    items = re.findall(rf"({dpdk_set})@({dpdk_set})", match.group(1))
    lcores = [_expand(a.strip("()")) for a, _ in items]
    cpus = [_expand(b.strip("()")) for _, b in items]
    assert lcores == [[i] for i in range(len(expected))]
    assert cpus == [[cpu] for _, cpu in expected]


def test_likwid_omp_systemd(server):
    _, spec, plan, expected = server
    cpus = [cpu for _, cpu in expected]
    (_, threads, line) = _lines(pinning_text(spec, plan, "likwid-pin"))
    assert threads == f"OMP_NUM_THREADS={len(cpus)}; export OMP_NUM_THREADS"
    match = re.fullmatch(rf'exec likwid-pin -c ({CPU_LIST}) -s 0x0 "\$@"', line)
    assert [int(c) for c in match.group(1).split(",")] == cpus
    lines = _lines(pinning_text(spec, plan, "omp"))
    assert lines[0] == f"OMP_NUM_THREADS={len(cpus)}; export OMP_NUM_THREADS"
    match = re.fullmatch(r"OMP_PLACES='(\{\d+(?:,\d+)*\}(?:,\{\d+(?:,\d+)*\})*)'; export OMP_PLACES", lines[1])
    assert [[int(n) for n in place.split(",")] for place in re.findall(r"\{([^}]*)\}", match.group(1))] == [
        [c] for c in cpus
    ]
    assert lines[2] == "OMP_PROC_BIND=close; export OMP_PROC_BIND"
    section, *settings = _lines(pinning_text(spec, plan, "systemd"))
    assert section == "[Service]"
    values = dict(line.split("=", 1) for line in settings)
    assert _expand(values["CPUAffinity"]) == _expand(values["AllowedCPUs"]) == sorted(cpus)
    assert _expand(values["AllowedMemoryNodes"]) == sorted({_node(cpu) for cpu in cpus})


def test_json_and_flat_numbers():
    spec = load_spec("t2-ipfwd-intadd-x2")
    plan = Plan.from_contexts(spec, spec.usable_contexts[: len(spec.threads)])
    data = json.loads(pinning_text(spec, plan, "json"))
    assert data["os_cpu_numbers"] is False and "flat context indices" in data["numbering"]
    assert [t["cpu"] for t in data["threads"]] == [spec.topology.parse_context(c) for c in plan.bindings.values()]
    for form in FORMATS:
        if form != "json":
            comments = [line for line in pinning_text(spec, plan, form).splitlines() if line.startswith("#")]
            assert any("flat context indices, not Linux CPU numbers" in line for line in comments), form


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
    assert code == 0 and re.search(r"^(?:threads=')?16 \S+$", target.read_text(), re.M)
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
    assert out.splitlines()[-1].startswith("--lcores='0@")
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
    script = capsys.readouterr().out
    assert script.startswith("#!/bin/sh\n") and "ipfwd#0." in script
