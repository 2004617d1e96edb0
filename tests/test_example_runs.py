"""The example library run end to end: `tasksolve run` (solve, compare, certify, report) on the
examples of today's machines, then `tasksolve pin` of the plan it wrote, on the OS CPU numbers of
the topology.

The smoke set: a two-socket EPYC-like server with SMT siblings numbered as Linux does, a
Graviton2-like Arm server without SMT, a container's 8 CPUs of a two-socket Xeon server (the
topology's `usable` list) and a hybrid desktop (P-cores with hyper-threads beside E-core clusters:
kinds of core on an irregular tree). Runs are short -- a fixed sample of 20 local-search restarts, CP-SAT for
2 s, one worker, no comparison sample or baselines -- so each takes seconds on the spec's own oracle
(the simulation); `tasksolve run NAME` with the spec's defaults takes 8-35 s (README, "Example
library"). Every other example is simulated on random plans in tests/simulate/test_des_vs_analytic.py.
"""

from __future__ import annotations

import json

import pytest

from tasksolve.solver.cli import main
from tasksolve.specs import load_spec, load_topology

SMOKE = ["epyc-l3fwd-dpi", "graviton2-ids", "xeon-pod8-conntrack", "alderlake-ids"]
FAST = ["--samples", "20", "--time-limit", "2", "--workers", "1", "--compare-samples", "0", "--methods", "cpsat"]
VERDICTS = {"proven", "certified", "best_found", "not_certified", "refuted", "no_finite_optimum"}
POD_CPUS = {4, 5, 6, 7, 36, 37, 38, 39}  # xeon-gold-6242-pod8: the pod's cpuset.cpus, 4-7,36-39
P_CPUS = set(range(16))  # alderlake-12900k: the P-cores' hyper-threads; the E-cores are CPUs 16-23


@pytest.mark.parametrize("name", SMOKE)
def test_example_runs_end_to_end_and_pins_on_os_cpus(name, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["run", name, "--out", str(out), *FAST, "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code in (0, 1), result.get("error")  # a verdict, positive or not; never an error
    for file in ("plan.yaml", "certificate.json", "samples.jsonl", "report.html", "pinning.txt"):
        assert (out / file).is_file(), file
    cert = json.loads((out / "certificate.json").read_text())
    assert cert["verdict"] in VERDICTS and cert["exit_code"] == code and result["verdict"] == cert["verdict"]
    assert cert["sentence"].startswith(cert["verdict"].replace("_", " ") + ":")
    assert cert["samples"]["n"] == 20 and cert["samples"]["failed"] == 0

    assert main(["pin", str(out / "plan.yaml"), "-f", "json"]) == 0  # finds the built-in spec by name
    pins = json.loads(capsys.readouterr().out)
    spec = load_spec(name)
    topo = spec.topology
    assert pins["os_cpu_numbers"] is True and len(pins["threads"]) == len(spec.threads)
    assert [p["thread"] for p in pins["threads"]] == list(spec.thread_names)
    cpus = [p["cpu"] for p in pins["threads"]]
    assert cpus == [topo.os_cpus[p["context"]] for p in pins["threads"]] and len(set(cpus)) == len(cpus)
    usable = {topo.os_cpus[topo.context_names[c]] for c in spec.usable_contexts}
    assert set(cpus) <= usable
    if name == "xeon-pod8-conntrack":
        assert usable == POD_CPUS  # only the container's CPUs, by their host numbers
        # 60 placement classes: the fluid LP bounds every one on the simulation
        assert cert["verdict"] == "proven" and code == 0
    if name == "alderlake-ids":
        # detect, the heavy stage (4300 cycles on a P-core, 8600 at the E-cores' lower clock), on a P-core
        detect = [p for p in pins["threads"] if p["thread"].endswith(".detect")]
        assert len(detect) == 5 and all(p["cpu"] in P_CPUS for p in detect)
        assert {topo.kind_of(topo.context_names.index(p["context"])) for p in detect} == {"P"}
    taskset = (out / "pinning.txt").read_text()
    assert "OS CPU numbers from the topology" in taskset
    assert all(f"taskset -c {cpu} " in taskset for cpu in cpus)


@pytest.mark.parametrize(("name", "siblings"), [("epyc-rome-2s", 32), ("xeon-gold-6242-2s", 32)])
def test_smt_siblings_are_numbered_as_linux_does(name, siblings):
    """CPU i's SMT sibling is CPU i + N (N = cores), cores in order, socket 0's first."""
    topo = load_topology(name)
    cpus = [topo.os_cpu(c) for c in range(topo.n_contexts)]
    assert sorted(cpus) == list(range(topo.n_contexts))
    assert cpus[0::2] == list(range(siblings)) and cpus[1::2] == [c + siblings for c in range(siblings)]


def test_hybrid_desktop_is_numbered_as_linux_does():
    """alderlake-12900k: P-core k's hyper-threads are CPUs 2k and 2k+1, the E-cores CPUs 16-23
    (16-19 in the first cluster); only the 24 contexts that exist are usable."""
    topo = load_topology("alderlake-12900k")
    present = topo.present_contexts
    cpus = [topo.os_cpu(c) for c in present]
    assert cpus == list(range(24))
    assert [topo.kind_of(c) for c in present] == ["P"] * 16 + ["E"] * 8
    names = [topo.context_name(c) for c in present]
    assert names[:2] == ["cluster0.core0.thread0", "cluster0.core0.thread1"]
    assert names[16:20] == [f"cluster8.core{k}.thread0" for k in range(4)]
    assert names[20] == "cluster9.core0.thread0"
