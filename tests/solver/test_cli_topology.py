"""``tasksolve topology host|import|show`` end to end, and ``topology: host`` in a spec."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tasksolve.solver.cli import main
from tasksolve.specs import load_spec_text, load_topology

DATA = Path(__file__).parent.parent / "data"
LINUX = sys.platform.startswith("linux") and Path("/sys/devices/system/cpu/cpu0/topology").is_dir()


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.skipif(not LINUX or shutil.which("lscpu") is None, reason="needs Linux sysfs and lscpu")
def test_host_agrees_with_lscpu(capsys):
    """CPU, core and socket counts of `topology host --json` are lscpu's."""
    text = subprocess.run(["lscpu", "-p=CPU,CORE,SOCKET,NODE"], capture_output=True, text=True, check=True).stdout
    rows = [line.split(",") for line in text.splitlines() if line and not line.startswith("#")]
    code, out, err = run(capsys, "topology", "host", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["summary"]["cpus"] == len(rows)
    assert result["summary"]["cores"] == len({(r[2], r[1]) for r in rows})
    assert result["summary"]["sockets"] == len({r[2] for r in rows})
    assert result["summary"]["numa_nodes"] == len({r[3] for r in rows if r[3]} or {"0"})
    os_cpus = result["topology"]["os_cpus"]
    assert sorted(os_cpus.values()) == sorted(int(r[0]) for r in rows)
    # every pair of CPUs: same socket / same core per lscpu <=> per the imported tree
    levels = [lv["name"] for lv in result["topology"]["levels"]]
    path = {cpu: context.split(".") for context, cpu in os_cpus.items()}
    where = {int(r[0]): (r[2], r[1]) for r in rows}
    for a in where:
        for b in where:
            for level, same in (("socket", where[a][0] == where[b][0]), ("core", where[a] == where[b])):
                if level in levels:
                    depth = levels.index(level) + 1
                    assert (path[a][:depth] == path[b][:depth]) == same, (a, b, level)


@pytest.mark.skipif(not LINUX, reason="needs Linux sysfs")
def test_host_out_file_loads_back_and_spec_says_host(capsys, tmp_path):
    out = tmp_path / "host.yaml"
    code, _, err = run(capsys, "topology", "host", "--output", str(out), "--capacity", "l3=2.5", "--name", "here")
    assert code == 0, err
    text = out.read_text()
    assert text.startswith("# ") and "is a default" in text
    topo = load_topology(out)
    assert topo.name == "here" and topo.resource("l3").capacity == 2.5
    spec = load_spec_text("""
tasksolve: 1
name: on-this-machine
topology: host
applications:
  a: {tasks: {A: {cycles: 10}}}
workload: [{app: a, instances: 1}]
""")
    assert spec.topology.os_cpus == topo.os_cpus


def test_import_server_xml_json_and_yaml(capsys, tmp_path):
    code, out, err = run(capsys, "topology", "import", str(DATA / "hwloc" / "server-2s.xml"), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert [(lv["name"], lv["count"]) for lv in result["topology"]["levels"]] == [("socket", 2), ("core", 8), ("pu", 2)]
    assert result["summary"] == {"cpus": 32, "cores": 16, "sockets": 2, "numa_nodes": 2}
    code, out, _ = run(capsys, "topology", "import", str(DATA / "hwloc" / "server-2s.xml"), "--clock", "2.4GHz")
    assert code == 0
    data = yaml.safe_load(out)
    assert data["clock"] == "2.4GHz" and data["os_cpus"]["socket0.core0.pu1"] == 16


def test_import_malformed_xml_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<topology>\n  <object type='Machine'>\n</topology>\n")
    code, out, err = run(capsys, "topology", "import", str(bad))
    assert code == 2
    assert f"{bad}:3:" in err and "not well-formed XML" in err and "Traceback" not in err
    code, out, _ = run(capsys, "topology", "import", str(bad), "--json")
    assert code == 2 and json.loads(out)["error"]["exit_code"] == 2


@pytest.mark.parametrize(
    "args,message",
    [
        (["--capacity", "l3"], "expected NAME=VALUE"),
        (["--capacity", "l9=2"], "no resource of"),
        (["--clock", "fast"], "--clock"),
    ],
)
def test_import_bad_options_exit_2(capsys, args, message):
    code, _, err = run(capsys, "topology", "import", str(DATA / "hwloc" / "server-2s.xml"), *args)
    assert code == 2 and message in err


def test_show_builtin_and_xml(capsys):
    code, out, _ = run(capsys, "topology", "show", "ultrasparc-t2")
    assert code == 0
    lines = out.splitlines()
    assert "flat index" in lines[1]
    assert lines[2].startswith("machine") and "l2 4" in lines[2]
    assert sum(1 for line in lines if "(CPU " in line) == 64
    code, out, _ = run(capsys, "topology", "show", str(DATA / "hwloc" / "server-2s.xml"), "--json")
    contexts = json.loads(out)["contexts"]
    assert contexts[1] == {"context": "socket0.core0.pu1", "os_cpu": 16}
    code, _, err = run(capsys, "topology", "show", "ultrasparc-t3")
    assert code == 2 and "did you mean `ultrasparc-t2`" in err


def test_show_large_topology_is_abridged(capsys):
    code, out, _ = run(capsys, "topology", "show", "manycore-2s")
    assert code == 0
    assert "more socket(s) like it" in out and len(out.splitlines()) < 60
