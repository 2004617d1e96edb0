"""``tasksolve pin``'s formats run against real processes on this machine.

The plans are made on a 2-context topology whose OS CPUs are 0 and 1 (so the CPUs exist on any
machine with two), each thread on the CPU its creation order would not give it. A small Python
program starts threads named with prctl(PR_SET_NAME); the launcher runs it and each thread's
``Cpus_allowed_list`` is read back from /proc/PID/task/TID/status.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tasksolve.solver.cli import main
from tasksolve.specs import Plan, load_spec
from tasksolve.specs.exporters.pinning import FORMATS, pinning_text

TOPOLOGY = """
name: two-cpus
clock: 1GHz
levels: [{name: core, count: 2}]
resources: [{name: mem, level: machine, capacity: 1.0}]
os_cpus: {core0: 0, core1: 1}
"""
PROGRAM = """
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
stop, pidfile, names = sys.argv[1], sys.argv[2], sys.argv[3:]
def work(name):
    libc.prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME: the calling thread's name
    deadline = time.monotonic() + 60
    while not os.path.exists(stop) and time.monotonic() < deadline:
        time.sleep(0.02)
with open(pidfile + ".tmp", "w") as handle:
    handle.write(str(os.getpid()))
os.replace(pidfile + ".tmp", pidfile)
threads = [threading.Thread(target=work, args=(name,)) for name in names]
for thread in threads:
    thread.start()
    time.sleep(0.05)  # creation order is TID order
for thread in threads:
    thread.join()
sys.exit(7)
"""
LINUX = sys.platform.startswith("linux") and Path("/proc/self/task").is_dir()
needs_two_cpus = pytest.mark.skipif(
    not LINUX or not {0, 1} <= os.sched_getaffinity(0) or shutil.which("taskset") is None,
    reason="needs Linux /proc, taskset (util-linux) and CPUs 0 and 1 allowed to this process",
)


def _spec(folder: Path, app: str, tasks: tuple[str, str]):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "two.yaml").write_text(TOPOLOGY)
    (folder / "spec.yaml").write_text(f"""
tasksolve: 1
name: two
topology: two.yaml
applications:
  {app}: {{tasks: {{{tasks[0]}: {{cycles: 10}}, {tasks[1]}: {{cycles: 10}}}}, edges: [{{from: {tasks[0]}, to: {tasks[1]}}}]}}
workload: [{{app: {app}, instances: 1}}]
""")
    spec = load_spec(folder / "spec.yaml")
    plan = Plan.from_contexts(spec, [1, 0], method="test")  # thread 0 on CPU 1, thread 1 on CPU 0
    plan.save(folder / "plan.yaml", spec)
    return spec, plan


@pytest.fixture
def short(tmp_path):
    return (tmp_path, *_spec(tmp_path, "a", ("R", "W")))


def _threads(pid: int) -> list[tuple[int, str, str]]:
    """(TID, name, Cpus_allowed_list) of every thread of `pid`, lowest TID first."""
    found = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:  # the program has ended
        return []
    for task in tasks:
        try:
            name = (task / "comm").read_text().rstrip("\n")
            status = (task / "status").read_text()
        except OSError:
            continue
        found.append((int(task.name), name, re.search(r"^Cpus_allowed_list:\s*(\S+)", status, re.M).group(1)))
    return sorted(found)


def _launch(folder: Path, script: str, names: list[str], env: dict | None = None, settle=None):
    """Run `script` on the test program; `settle(threads)` says when the pinning is done (the
    threads of the program, read until then or 20 s). The launcher's exit code, stderr and the
    last threads read."""
    (folder / "pin.sh").write_text(script)
    (folder / "program.py").write_text(PROGRAM)
    stop, pidfile = folder / "stop", folder / "pid"
    command = ["sh", str(folder / "pin.sh"), sys.executable, str(folder / "program.py"), str(stop), str(pidfile)]
    launcher = subprocess.Popen(
        command + names, env={**os.environ, **(env or {})}, stderr=subprocess.PIPE, text=True, cwd=folder
    )
    threads: list = []
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and launcher.poll() is None:
            if pidfile.exists():
                threads = _threads(int(pidfile.read_text()))
                if settle is None or settle(threads):
                    break
            time.sleep(0.05)
        stop.touch()
        _, err = launcher.communicate(timeout=30)
    finally:
        launcher.kill() if launcher.poll() is None else None
    return launcher.returncode, err, threads


def _pinned_by_name(plan: Plan, spec) -> dict[str, str]:
    return {thread: str(spec.topology.os_cpu(spec.topology.parse_context(c))) for thread, c in plan.bindings.items()}


@needs_two_cpus
def test_taskset_launcher_pins_each_named_thread_and_passes_the_exit_status(short):
    folder, spec, plan = short
    expected = _pinned_by_name(plan, spec)
    code, err, threads = _launch(
        folder,
        pinning_text(spec, plan, "taskset"),
        list(expected),
        settle=lambda ts: {n: cpus for _, n, cpus in ts if n in expected} == expected,
    )
    assert {name: cpus for _, name, cpus in threads if name in expected} == expected, err
    assert code == 7, err  # the program's own status


@needs_two_cpus
def test_taskset_launcher_tells_names_cut_to_15_bytes_apart_by_creation_order(tmp_path):
    spec, plan = _spec(tmp_path, "stage_pipeline_app", ("first", "second"))
    names = list(plan.bindings)  # stage_pipeline_app#0.first, ...: both `stage_pipeline_` in /proc
    assert len({name.encode()[:15] for name in names}) == 1
    cpus = list(_pinned_by_name(plan, spec).values())
    code, err, threads = _launch(
        tmp_path,
        pinning_text(spec, plan, "taskset"),
        names,
        settle=lambda ts: [c for _, n, c in ts if n == "stage_pipeline_"] == cpus,
    )
    assert [cpus_ for _, name, cpus_ in threads if name == "stage_pipeline_"] == cpus, err
    assert code == 7, err


@needs_two_cpus
def test_taskset_launcher_by_creation_order(short):
    folder, spec, plan = short
    cpus = list(_pinned_by_name(plan, spec).values())
    code, err, threads = _launch(
        folder,
        pinning_text(spec, plan, "taskset"),
        ["unnamed-one", "unnamed-two"],
        env={"TASKSOLVE_PIN_BY": "order"},
        settle=lambda ts: [c for _, n, c in ts if n.startswith("unnamed")] == cpus,
    )
    assert [c for _, name, c in threads if name.startswith("unnamed")] == cpus, err
    assert code == 7, err


@needs_two_cpus
def test_taskset_launcher_times_out_on_a_thread_that_never_appears(short):
    folder, spec, plan = short
    started = time.monotonic()
    code, err, _ = _launch(
        folder,
        pinning_text(spec, plan, "taskset"),
        ["a#0.R", "misnamed"],
        env={"TASKSOLVE_PIN_TIMEOUT": "2"},
        settle=lambda _: False,  # until the launcher gives up
    )
    assert code == 124 and "1 of 2 threads not found" in err and "a#0.W" in err
    assert time.monotonic() - started < 15
    pid = int((folder / "pid").read_text())
    assert not Path(f"/proc/{pid}").exists()  # the program was stopped, not left running


@needs_two_cpus
def test_taskset_launcher_passes_on_the_status_of_a_program_that_ends_first(short, tmp_path):
    folder, spec, plan = short
    (folder / "pin.sh").write_text(pinning_text(spec, plan, "taskset"))
    done = subprocess.run(["sh", str(folder / "pin.sh"), "sh", "-c", "exit 3"], capture_output=True, text=True)
    assert done.returncode == 3 and "ended with 0 of 2 threads pinned" in done.stderr
    done = subprocess.run(["sh", str(folder / "pin.sh")], capture_output=True, text=True)
    assert done.returncode == 2 and "usage:" in done.stderr


@needs_two_cpus
def test_a_thread_name_cannot_run_a_command(short):
    folder, spec, plan = short
    evil = "a'; touch PWNED; '\n$(touch PWNED)"
    crafted = Plan.model_construct(**{**dict(plan), "bindings": {evil: "core0", "a#0.W": "core1"}})
    (folder / "pin.sh").write_text(pinning_text(spec, crafted, "taskset"))
    env = {**os.environ, "TASKSOLVE_PIN_TIMEOUT": "0"}
    subprocess.run(["sh", str(folder / "pin.sh"), "sleep", "1"], cwd=folder, env=env, capture_output=True)
    assert not (folder / "PWNED").exists()


@pytest.mark.skipif(shutil.which("numactl") is None, reason="numactl is not installed on this machine")
@needs_two_cpus
def test_numactl_launcher_runs_the_program_on_the_plan_cpus(short):
    folder, spec, plan = short
    (folder / "numactl.sh").write_text(pinning_text(spec, plan, "numactl"))
    probe = "import os; print(sorted(os.sched_getaffinity(0)))"
    done = subprocess.run(
        ["sh", str(folder / "numactl.sh"), sys.executable, "-c", probe], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == sorted(int(c) for c in _pinned_by_name(plan, spec).values())


def test_numactl_binds_memory_only_where_the_topology_knows_its_nodes(short, tmp_path):
    folder, spec, plan = short
    line = pinning_text(spec, plan, "numactl").splitlines()[-1]
    assert line == 'exec numactl --physcpubind=0-1 --membind=0 -- "$@"'
    bare = tmp_path / "bare"
    bare.mkdir()
    spec_text = (folder / "spec.yaml").read_text()
    (bare / "two.yaml").write_text(TOPOLOGY.replace("resources: [{name: mem, level: machine, capacity: 1.0}]\n", ""))
    (bare / "spec.yaml").write_text(spec_text)
    spec = load_spec(bare / "spec.yaml")
    text = pinning_text(spec, plan, "numactl")
    assert text.splitlines()[-1] == 'exec numactl --physcpubind=0-1 -- "$@"'
    assert "# the topology has no NUMA information (no `mem` resource): --membind left out" in text
    systemd = pinning_text(spec, plan, "systemd")
    assert "AllowedMemoryNodes" not in systemd.replace("# ", "").split("[Service]")[1]


def _omp_program(folder: Path) -> Path | None:
    """An OpenMP program printing each thread's number and Cpus_allowed_list, or None without a
    compiler that knows -fopenmp."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        return None
    source = folder / "omp.c"
    source.write_text(r"""
#include <omp.h>
#include <stdio.h>
#include <string.h>
int main(void) {
#pragma omp parallel
  {
    char line[256], found[256] = "?";
    FILE *status = fopen("/proc/thread-self/status", "r");
    while (status && fgets(line, sizeof line, status))
      if (sscanf(line, "Cpus_allowed_list: %255s", found) == 1) break;
    if (status) fclose(status);
#pragma omp critical
    printf("%d %s\n", omp_get_thread_num(), found);
  }
  return 0;
}
""")
    built = subprocess.run([compiler, "-fopenmp", str(source), "-o", str(folder / "omp")], capture_output=True)
    return folder / "omp" if built.returncode == 0 else None


@needs_two_cpus
def test_omp_places_put_thread_i_on_the_plan_cpu_i(short):
    """Run as a launcher: the variables reach the program (checked from Python); with an OpenMP
    compiler, OpenMP thread i runs on place i, read back from /proc."""
    folder, spec, plan = short
    cpus = list(_pinned_by_name(plan, spec).values())
    (folder / "omp.sh").write_text(pinning_text(spec, plan, "omp"))
    probe = "import json, os; print(json.dumps({k: v for k, v in os.environ.items() if k.startswith('OMP_')}))"
    done = subprocess.run(["sh", str(folder / "omp.sh"), sys.executable, "-c", probe], capture_output=True, text=True)
    env = json.loads(done.stdout)
    assert re.findall(r"\{(\d+)\}", env["OMP_PLACES"]) == cpus and env["OMP_PROC_BIND"] == "close"
    assert env["OMP_NUM_THREADS"] == str(len(cpus))
    sourced = subprocess.run(
        ["sh", "-c", f'. "{folder / "omp.sh"}"; echo "$OMP_PLACES"'], capture_output=True, text=True
    )
    assert sourced.stdout.strip() == env["OMP_PLACES"]
    program = _omp_program(folder)
    if program is None:
        pytest.skip("no C compiler with -fopenmp: OMP_PLACES checked by parsing only")
    done = subprocess.run(["sh", str(folder / "omp.sh"), str(program)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    placed = dict(line.split() for line in done.stdout.splitlines())
    assert placed == {str(i): cpu for i, cpu in enumerate(cpus)}


def test_systemd_drop_in_parses(short):
    """Not executed: a drop-in changes a system service (root, systemd as init); parsed as systemd
    reads an INI file, every list a CPU list of the plan."""
    folder, spec, plan = short
    text = pinning_text(spec, plan, "systemd")
    assert text.startswith("# /etc/systemd/system/UNIT.service.d/tasksolve.conf\n")
    parser = configparser.ConfigParser(interpolation=None, comment_prefixes=("#", ";"), strict=True)
    parser.optionxform = str  # systemd's keys are case-sensitive
    parser.read_string(text)
    assert parser.sections() == ["Service"]
    service = dict(parser["Service"])
    assert service == {"CPUAffinity": "0-1", "AllowedCPUs": "0-1", "AllowedMemoryNodes": "0"}


DPDK_SET = r"(?:\d+(?:-\d+)?|\(\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*\))"


def test_dpdk_lcores_follow_the_eal_grammar(short):
    """Not executed: an EAL program needs DPDK, hugepages and a NIC driver. DPDK's grammar:
    ``<lcore set>[@<cpu set>]`` items, a set a number, a range or a parenthesised list."""
    folder, spec, plan = short
    line = pinning_text(spec, plan, "dpdk").splitlines()[-1]
    match = re.fullmatch(rf"--lcores='({DPDK_SET}(?:@{DPDK_SET})?(?:,{DPDK_SET}(?:@{DPDK_SET})?)*)'", line)
    assert match is not None, line
    pairs = [item.split("@") for item in match.group(1).split(",")]
    assert pairs == [[str(i), cpu] for i, cpu in enumerate(_pinned_by_name(plan, spec).values())]


@needs_two_cpus
@pytest.mark.skipif(shutil.which("likwid-pin") is None, reason="likwid-pin is not installed (Debian: likwid)")
def test_likwid_pin_launcher_pins_the_main_thread_then_each_created_one(short):
    """likwid-pin pins the main thread to the first CPU of ``-c`` and each thread it creates to the
    next (its LD_PRELOAD wrapper of pthread_create): the program's main thread is the plan's
    thread 0 (CPU 1), the one thread it creates the plan's thread 1 (CPU 0)."""
    folder, spec, plan = short
    cpus = list(_pinned_by_name(plan, spec).values())
    # settled once two threads run on two different CPUs: the wrapper pins a created thread just
    # after pthread_create returns, so a read in between sees the main thread's CPU on both
    code, err, threads = _launch(
        folder,
        pinning_text(spec, plan, "likwid-pin"),
        ["W"],
        env={"OMP_NUM_THREADS": "1"},  # inherited from a caller: the script must not let it cut pinning
        settle=lambda found: len(found) >= 2 and len({cpu for _, _, cpu in found}) >= 2,
    )
    assert code == 7, err  # the program's own exit status
    assert [cpu for _, _, cpu in threads] == cpus


def test_likwid_pin_command_parses(short):
    """``-c`` lists the plan's CPUs in thread order (the main thread first), ``-s`` is a hex mask
    (executed above where likwid-pin is installed)."""
    folder, spec, plan = short
    line = pinning_text(spec, plan, "likwid-pin").splitlines()[-1]
    match = re.fullmatch(r'exec likwid-pin -c (\d+(?:,\d+)*) -s (0x[0-9a-fA-F]+) "\$@"', line)
    assert match.group(1).split(",") == list(_pinned_by_name(plan, spec).values())
    assert int(match.group(2), 16) == 0


def test_pin_json_prints_the_text_and_every_thread_for_every_format(short, capsys):
    folder, spec, plan = short
    for form in FORMATS:
        assert main(["pin", str(folder / "plan.yaml"), "-f", form]) == 0
        text = capsys.readouterr().out
        assert main(["pin", str(folder / "plan.yaml"), "-f", form, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["format"] == form and data["text"] == text
        assert [(t["thread"], t["cpu"], t["node"]) for t in data["threads"]] == [("a#0.R", 1, 0), ("a#0.W", 0, 0)]
    target = folder / "out.sh"
    assert main(["pin", str(folder / "plan.yaml"), "-f", "omp", "--json", "--output", str(target)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["written"] == str(target) and target.read_text() == data["text"]
    assert main(["pin", str(folder / "plan.yaml"), "-f", "nope", "--json"]) == 2
    assert "unknown format" in json.loads(capsys.readouterr().out)["error"]["message"]


def test_pin_help_lists_every_format_on_a_line(capsys):
    assert main(["pin", "--help"]) == 0
    out = capsys.readouterr().out
    for name, form in FORMATS.items():
        assert re.search(rf"^\s+{re.escape(name)}\s+{re.escape(form.summary)}$", out, re.M), name
