"""A real-machine check on a many-core host: what its /sys shows, what `tasksolve topology host`
imports from it, what `tasksolve topology probe` measures on it, and whether the command oracle's
ranking of pinned placements (a real program, `tests/data/workload.py`) agrees with the model's.

Four parts, each recorded even when the one before failed (a failure is a finding):

1. the host as the kernel shows it: ``uname``, ``nproc``, the affinity mask, ``lscpu``, the files
   under ``/sys/devices/system/cpu`` (which of cpu0's topology and cache files exist), the first
   CPU of ``/proc/cpuinfo``, and whether ``sched_setaffinity`` moves a process (the CPU
   ``/proc/self/stat`` reports after pinning);
2. ``tasksolve topology host --json`` and ``tasksolve topology show host``: exit code, the
   levels, or the message (a traceback is a failure of the tool);
3. ``tasksolve topology probe --json``: first one pair once to time it, then every pair of the
   allowed CPUs with as many repetitions (1-3) as ``--probe-budget`` seconds allow; against the
   imported host topology, or -- when /sys describes none -- a flat one of the allowed CPUs
   written here (``levels: [{name: core, count: N}]``), which the run says;
4. the command oracle on N cores x 2 strands (the strands of one core pinned to one OS CPU,
   ``--per-cpu 2``, as `bench/command_ranking.py` on 2 cores): N one-task instances of a spinning
   worker, placements with k = 0 .. N/2 CPUs holding two workers (which CPUs drawn with a fixed
   seed), measured interleaved (``repeats`` runs of ``--seconds`` each) and predicted by the
   closed form and the simulation; Spearman's rank correlation and the share of plan pairs
   ordered alike.  On hardware that pins, k doubled CPUs cost k workers' worth of rate:
   ``rate(k) / rate(0) = (N - k) / N``.

    python bench/realhost_device.py --probe-budget 170 --seconds 0.3 --repeats 3 --raw OUT/
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.results import write_results  # noqa: E402

WORKLOAD = ROOT / "tests" / "data" / "workload.py"
CLI = [sys.executable, "-m", "tasksolve"]
KEEP = 4000  # characters of a command's output kept in the results


def _sh(argv: list[str], timeout: float = 30) -> str:
    """A system command's output (stdout, then stderr), or why it gave none."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"<{type(exc).__name__}: {exc}>"
    return (done.stdout + done.stderr).strip()


def _read(path: Path, limit: int = 2000) -> str | None:
    try:
        return path.read_text(errors="replace")[:limit].strip()
    except OSError as exc:
        return f"<{exc.strerror}>" if exc.strerror else None


def _ran_on(cpu: int) -> int | None:
    """The CPU /proc/self/stat reports (field 39) after this process pinned itself to `cpu` and spun."""
    try:
        os.sched_setaffinity(0, {cpu})
        deadline = time.perf_counter() + 0.02
        while time.perf_counter() < deadline:
            pass
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[36])
    except (OSError, ValueError, IndexError):
        return None


def host_facts() -> dict:
    """What the kernel shows of the CPUs (part 1 of the module docstring)."""
    allowed = sorted(os.sched_getaffinity(0))
    cpu_dir = Path("/sys/devices/system/cpu")
    cpu0 = cpu_dir / "cpu0"
    listing = lambda p: sorted(x.name for x in p.iterdir()) if p.is_dir() else None  # noqa: E731
    cpuinfo = _read(Path("/proc/cpuinfo"), 100_000) or ""
    first = cpuinfo.split("\n\n", 1)[0]
    reported = {cpu: _ran_on(cpu) for cpu in allowed[:: max(1, len(allowed) // 4)]}
    os.sched_setaffinity(0, set(allowed))
    return {
        "uname": _sh(["uname", "-a"]),
        "nproc": _sh(["nproc"]),
        "cpu_count": os.cpu_count(),
        "affinity": allowed,
        "loadavg": _read(Path("/proc/loadavg")),
        "lscpu": _sh(["lscpu"]),
        "cpu_dir": listing(cpu_dir),
        "cpu0": listing(cpu0),
        "cpu0_topology": listing(cpu0 / "topology"),
        "cpu0_cache": listing(cpu0 / "cache"),
        "node_dir": listing(Path("/sys/devices/system/node")),
        "online": _read(cpu_dir / "online"),
        "possible": _read(cpu_dir / "possible"),
        "cpuinfo_first_cpu": first[:1500],
        "cpuinfo_processors": cpuinfo.count("processor\t:"),
        "compiler": shutil.which(os.environ.get("CC", "cc")),
        "pinned_then_reported_cpu": reported,
    }


def run_cli(args: list[str], timeout: float) -> dict:
    """A `tasksolve` command line: exit code, seconds, output (trimmed), and whether it raised a traceback."""
    began = time.perf_counter()
    try:
        done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout)
        rc, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = None, str(exc.stdout or ""), f"timed out after {timeout:g} s"
    return {
        "argv": ["tasksolve", *args],
        "rc": rc,
        "seconds": round(time.perf_counter() - began, 2),
        "stdout": out,
        "stderr": err[-KEEP:],
        "traceback": "Traceback (most recent call last)" in out + err,
    }


def _trim(result: dict) -> dict:
    return result | {"stdout": result["stdout"][-KEEP:]}


def topology_import() -> dict:
    """`tasksolve topology host --json` and `topology show host` (part 2)."""
    host = run_cli(["topology", "host", "--json"], 120)
    summary = None
    if host["rc"] == 0:
        data = json.loads(host["stdout"])
        topo = data.get("topology", data)
        summary = {
            "levels": topo.get("levels"),
            "clock": topo.get("clock"),
            "resources": [r.get("description") or r.get("name") for r in topo.get("resources", [])],
            "description": topo.get("description"),
        }
    show = run_cli(["topology", "show", "host"], 120)
    return {"host": _trim(host), "summary": summary, "show": _trim(show)}


def flat_topology(cpus: list[int], clock: str, path: Path) -> Path:
    """A flat topology of `cpus` (one level of cores, each its OS CPU) for hosts whose /sys has none."""
    lines = [
        "name: flat",
        f"description: {len(cpus)} CPUs as the affinity mask lists them (no topology in /sys)",
        f"clock: {clock}",
        "levels:",
        f"- {{name: core, count: {len(cpus)}}}",
        "resources:",
        "- {name: l1, level: core, capacity: 1.0}",
        "os_cpus:",
        *[f"  core{i}: {cpu}" for i, cpu in enumerate(cpus)],
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _clock(facts: dict) -> str:
    for line in facts["cpuinfo_first_cpu"].splitlines():
        if line.startswith("cpu MHz"):
            mhz = float(line.split(":", 1)[1])
            if mhz > 100:
                return f"{mhz / 1000:.4f}GHz"
    return "2GHz"


def _probe_summary(result: dict) -> dict:
    if result["rc"] != 0 or not result["stdout"].strip().startswith("{"):
        return {}
    data = json.loads(result["stdout"])
    analysis = data["analysis"]
    return {
        "backend": data["backend"],
        "notes": data["notes"],
        "seconds": data["seconds"],
        "costs": analysis["costs"],
        "class_boundaries_ns": analysis["class_boundaries_ns"],
        "hidden_sharing": analysis["hidden_sharing"],
        "unstable": analysis["unstable"],
        "stable_share": analysis["stable_share"],
        "latency_spread": analysis["latency_spread"],
        "worst_ratio": analysis["worst_ratio"],
        "kinds": {k: v for k, v in analysis["kinds"].items() if k != "cpu_rates"},
        "cpu_rates": analysis["kinds"].get("cpu_rates"),
        "findings": analysis["findings"],
        "proposal": data["proposal"],
        "communication": (data.get("topology") or {}).get("communication"),
    }


def probe_host(facts: dict, budget: float, host_ok: bool, raw: Path) -> dict:
    """`tasksolve topology probe` on every allowed CPU, repetitions chosen to fit `budget` (part 3)."""
    cpus = facts["affinity"]
    pairs = len(cpus) * (len(cpus) - 1) // 2
    extra = [] if host_ok else ["--topology", str(flat_topology(cpus, _clock(facts), raw / "flat-topology.yaml"))]
    out = {"topology": "host" if host_ok else "flat (written here: /sys describes no topology)", "pairs": pairs}
    if not host_ok:
        out["default_topology"] = _trim(run_cli(["topology", "probe", "--repeats", "1", "--json"], 120))
    timing = run_cli(["topology", "probe", "--cpus", f"{cpus[0]},{cpus[-1]}", "--repeats", "1", "--json", *extra], 120)
    out["timing_run"] = _trim(timing)
    per_pair = json.loads(timing["stdout"])["seconds"] if timing["rc"] == 0 else None
    out["seconds_per_pair"] = per_pair
    if per_pair is None or pairs < 1:
        return out
    repeats = max(1, min(3, int(budget / (pairs * per_pair * 1.15))))
    out["repeats"] = repeats
    args = ["topology", "probe", "--repeats", str(repeats), "--json", *extra]
    args += ["--output", str(raw / "probed-topology.yaml"), "--write-topology", str(raw / "proposed-topology.yaml")]
    result = run_cli(args, budget * 1.6 + 30)
    (raw / "probe.json").write_text(result["stdout"])
    (raw / "probe.stderr").write_text(result["stderr"])
    out["run"] = _trim(result) | {"stdout": result["stdout"][:300]}
    out["summary"] = _probe_summary(result)
    return out


def ranking_spec(cores: int, repeats: int, seconds: float):
    """N cores of two strands, N one-task spinning instances, the command oracle on the workload."""
    from tasksolve.specs.loader import load_spec_text

    argv = [sys.executable, str(WORKLOAD), "--plan", "{plan_file}", "--per-cpu", "2", "--seconds", str(seconds)]
    text = f"""tasksolve: 1
name: spin-{cores}
topology:
  name: {cores} cores of two strands, the strands of a core pinned to one OS CPU
  clock: 1GHz
  levels: [{{name: core, count: {cores}}}, {{name: strand, count: 2}}]
  resources: [{{name: alu, level: core, capacity: 1.0}}]
applications:
  spin:
    tasks:
      A: {{cycles: 1000, demand: {{alu: 1.0}}}}
workload: [{{app: spin, instances: {cores}}}]
oracle: {json.dumps({"kind": "command", "command": argv, "metric": {"json": "rate"}, "repeats": repeats})}
"""
    return load_spec_text(text, "spin.yaml")


def doubled_plans(cores: int, seed: int) -> list[tuple[int, list[int]]]:
    """For k = 0 .. cores/2, one placement of `cores` workers with k CPUs holding two (strands
    2c and 2c+1), the CPUs drawn with `seed`."""
    rng = random.Random(seed)
    plans = []
    for k in range(cores // 2 + 1):
        used = rng.sample(range(cores), cores - k)
        contexts = [2 * c for c in used] + [2 * c + 1 for c in used[:k]]
        plans.append((k, sorted(contexts)))
    return plans


def _agreement(measured: list[float], predicted: list[float]) -> dict:
    from scipy.stats import spearmanr

    pairs = [(i, j) for i in range(len(measured)) for j in range(i + 1, len(measured)) if predicted[i] != predicted[j]]
    alike = sum((measured[i] - measured[j]) * (predicted[i] - predicted[j]) > 0 for i, j in pairs)
    rho = spearmanr(measured, predicted).statistic
    return {"spearman": round(float(rho), 3), "pairs_alike": alike, "pairs": len(pairs)}


def command_ranking(cores: int, repeats: int, seconds: float, seed: int) -> dict:
    """The command oracle against the closed form and the simulation on `doubled_plans` (part 4)."""
    from tasksolve.simulate.oracle import make_oracle
    from tasksolve.specs import Plan

    spec = ranking_spec(cores, repeats, seconds)
    plans = doubled_plans(cores, seed)
    objs = [Plan.from_contexts(spec, contexts) for _, contexts in plans]
    command = make_oracle(spec, "command")
    began = time.perf_counter()
    measured = command.evaluate_many(objs, seed=seed)
    wall = time.perf_counter() - began
    analytic = [make_oracle(spec, "analytic").evaluate(p).throughput for p in objs]
    des = [make_oracle(spec, "des").evaluate(p, seed=seed).throughput for p in objs]
    rows = []
    for (k, contexts), m, a, d, plan in zip(plans, measured, analytic, des, objs):
        runs = command.runs[command.placement(plan).label]
        rows.append(
            {
                "doubled": k,
                "cpus": sorted({c // 2 for c in contexts}),
                "command_mean": m.throughput,
                "command_runs": runs,
                "half_width": m.half_width,
                "analytic": a,
                "des": d,
            }
        )
    means = [r["command_mean"] for r in rows]
    return {
        "cores": cores,
        "repeats": repeats,
        "seconds": seconds,
        "seed": seed,
        "wall_s": round(wall, 1),
        "rows": rows,
        "vs_analytic": _agreement(means, analytic),
        "vs_des": _agreement(means, des),
        "noise_floor": command.noise_floor(),
    }


def _guarded(part, *args) -> dict:
    """A part's record, or the exception it raised (a failure is a finding; the next part still runs)."""
    try:
        return part(*args)
    except Exception as exc:  # recorded, named, and shown in the section
        return {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe-budget", type=float, default=170, help="seconds for the full probe")
    parser.add_argument("--repeats", type=int, default=3, help="command oracle runs per placement")
    parser.add_argument("--seconds", type=float, default=0.3, help="each run's spinning time")
    parser.add_argument("--cores", type=int, default=None, help="cores of the ranking (default: allowed CPUs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--raw", type=Path, default=None, help="folder for the probe's full output")
    parser.add_argument("--skip-probe", action="store_true")
    args = parser.parse_args()
    began = time.perf_counter()
    raw = args.raw or Path(tempfile.mkdtemp(prefix="realhost-"))
    raw.mkdir(parents=True, exist_ok=True)
    facts = host_facts()
    print(f"host: {facts['cpu_count']} CPUs, affinity {facts['affinity']}; cpu0: {facts['cpu0']}", flush=True)
    data = {"host": facts, "load_before": list(os.getloadavg())}
    data["import"] = topology_import()
    print(f"topology host: rc {data['import']['host']['rc']}", flush=True)
    if not args.skip_probe:
        data["probe"] = _guarded(probe_host, facts, args.probe_budget, data["import"]["host"]["rc"] == 0, raw)
        print(f"probe: {data['probe'].get('run', {}).get('rc')} in {data['probe'].get('run', {}).get('seconds')} s")
    cores = args.cores or len(facts["affinity"])
    if facts["affinity"][:cores] == list(range(cores)):
        data["ranking"] = _guarded(command_ranking, cores, args.repeats, args.seconds, args.seed)
    else:
        data["ranking"] = {"skipped": f"the workload pins to CPUs 0..{cores - 1}; allowed: {facts['affinity']}"}
    data["load_after"] = list(os.getloadavg())
    data["wall_s"] = round(time.perf_counter() - began, 1)
    modules = ["bench/realhost_device.py", "simulate/probe/measure.py", "simulate/probe/analysis.py"]
    modules += ["specs/importers/sysfs.py", "simulate/command.py", "tests/data/workload.py"]
    shown = [a for i, a in enumerate(sys.argv[1:]) if a != "--raw" and sys.argv[i] != "--raw"]
    command = " ".join(["python bench/realhost_device.py", *shown])
    path = write_results("realhost_device", data, modules=modules, command=command)
    print(f"wrote {path}")
    print(render_markdown(data))


LSCPU_KEYS = ("Model name", "Thread(s) per core", "Core(s) per socket", "Socket(s)", "NUMA node(s)", "L3", "Hypervisor")


def _host_lines(data: dict) -> list[str]:
    host = data["host"]
    lscpu = [line.split(":", 1) for line in host["lscpu"].splitlines() if ":" in line]
    shown = "; ".join(f"{k.strip()}: {v.strip()}" for k, v in lscpu if k.strip().startswith(LSCPU_KEYS))
    pinned = ", ".join(f"{a} -> {b}" for a, b in host["pinned_then_reported_cpu"].items())
    return [
        f"Host: `{host['uname']}`; {host['cpu_count']} CPUs (nproc {host['nproc']}, affinity "
        f"{_cpus(host['affinity'])}); load average {data['load_before'][0]:.2f} before, "
        f"{data['load_after'][0]:.2f} after; {data['wall_s']} s in all.",
        "",
        f"- lscpu: {shown or host['lscpu'][:200]}",
        f"- /sys/devices/system/cpu/cpu0 holds {host['cpu0']}; topology: {host['cpu0_topology']}; "
        f"cache: {host['cpu0_cache']}; /sys/devices/system/node: {host['node_dir']}; online `{host['online']}`",
        f"- /proc/cpuinfo: {host['cpuinfo_processors']} processors; C compiler: {host['compiler'] or 'none'}",
        f"- pinned to CPU -> /proc/self/stat's CPU afterwards: {pinned}",
    ]


def _cpus(cpus: list[int]) -> str:
    return f"{cpus[0]}-{cpus[-1]}" if cpus == list(range(cpus[0], cpus[-1] + 1)) else ",".join(map(str, cpus))


def _message(result: dict) -> str:
    text = (result["stderr"] or result["stdout"]).strip().splitlines()
    return text[-1][:300] if text else "(no output)"


def _import_lines(data: dict) -> list[str]:
    found = data["import"]
    host, show = found["host"], found["show"]
    if host["rc"] == 0:
        s = found["summary"]
        levels = " > ".join(f"{lv['name']}: {lv['count']}" for lv in s["levels"])
        said = f"exit 0: {levels}, clock {s['clock']}; {'; '.join(s['resources'])}"
    else:
        said = f"exit {host['rc']}: `{_message(host)}`"
    tb = "a traceback" if host["traceback"] or show["traceback"] else "no traceback"
    return [f"- `tasksolve topology host`: {said}; `topology show host`: exit {show['rc']}; {tb}."]


def _probe_lines(probe: dict) -> list[str]:
    lines = [f"- `tasksolve topology probe`: failed ({probe['error']})"] if "error" in probe else []
    if "default_topology" in probe:
        d = probe["default_topology"]
        lines.append(f"- `tasksolve topology probe` (topology host by default): exit {d['rc']}: `{_message(d)}`")
    run = probe.get("run")
    if run is None:
        timing = probe.get("timing_run")
        return lines + ([f"- the timing run failed: `{_message(timing)}`"] if timing else [])
    s = probe["summary"]
    head = (
        f"- `tasksolve topology probe --repeats {probe['repeats']}` against the {probe['topology']} topology: "
        f"exit {run['rc']}, {probe['pairs']} pairs"
    )
    if not s:
        return [*lines, head + f": `{_message(run)}`"]
    lines.append(
        head + f" in {s['seconds']:.0f} s ({probe['seconds_per_pair']:.2f} s per pair and repetition timed first), "
        f"backend {s['backend']}; {s['stable_share']:.1%} of pairs kept their latency class; latency spread "
        f"{s['latency_spread']:.3f}; worst interference ratio {s['worst_ratio']:.2f}; class boundaries "
        f"{s['class_boundaries_ns'] or 'none'} ns; unstable pairs {len(s['unstable'])}; hidden sharing "
        f"{len(s['hidden_sharing'])}."
    )
    lines += ["", "| level | pairs | latency (ns) | low - high (ns) | cycles | left out | populations (ns: pairs) |"]
    lines.append("|---|---|---|---|---|---|---|")
    for c in s["costs"]:
        pops = ", ".join(f"{p['latency_ns']:.0f}: {p['pairs']}" for p in c["populations"])
        lines.append(
            f"| {c['level']} | {c['pairs']} | {c['latency_ns']:.1f} | {c['low_ns']:.1f} - {c['high_ns']:.1f} | "
            f"{c['cycles']} | {c['left_out']} | {pops} |"
        )
    kinds = s["kinds"]
    found = ", ".join(f"{k['name']} ({k['cpus']})" for k in kinds["kinds"]) or kinds.get("why_not")
    levels = [
        f"groups of {lv['size']} at {lv['latency_ns']:.0f} ns ({', '.join(lv['groups'])})"
        for lv in s["proposal"]["levels"]
    ]
    lines += [
        "",
        f"Kinds of core: {found}. Proposed structure: {'; '.join(levels) or 'no level below the machine'} "
        f"(uniform tree: {s['proposal']['uniform_tree']}). Findings: {'; '.join(s['findings']) or 'none'}. "
        f"Notes: {'; '.join(s['notes'])}.",
    ]
    return lines


def _ranking_lines(r: dict) -> list[str]:
    if "skipped" in r or "error" in r:
        return [f"Command oracle: {'skipped' if 'skipped' in r else 'failed'} ({r.get('skipped') or r['error']})."]
    rows, n = r["rows"], r["cores"]
    base = rows[0]["command_mean"]
    lines = [
        f"Command oracle on {n} cores x 2 strands (strands of a core on one OS CPU), {n} spinning workers "
        f"(`tests/data/workload.py`), {r['repeats']} interleaved runs of {r['seconds']:g} s per placement "
        f"({r['wall_s']} s); k CPUs hold two workers:",
        "",
        "| k doubled | CPUs used | command (M it/s) | runs' range | measured / k=0 | pinning predicts | closed form | simulation |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        k, runs = row["doubled"], row["command_runs"]
        lines.append(
            f"| {k} | {len(row['cpus'])} | {row['command_mean'] / 1e6:.2f} | {min(runs) / 1e6:.2f} - "
            f"{max(runs) / 1e6:.2f} | {row['command_mean'] / base:.3f} | {(n - k) / n:.3f} | "
            f"{row['analytic'] / 1e6:.1f} M | {row['des'] / 1e6:.1f} M |"
        )
    a, d = r["vs_analytic"], r["vs_des"]
    noise = f"{r['noise_floor']:.3f}" if r["noise_floor"] is not None else "unknown"
    lines += [
        "",
        f"Agreement with the closed form: Spearman {a['spearman']}, {a['pairs_alike']} of {a['pairs']} plan pairs "
        f"ordered alike; with the simulation: Spearman {d['spearman']}, {d['pairs_alike']} of {d['pairs']}. "
        f"The host's noise (pooled CV of the repeats): {noise}.",
    ]
    return lines


def render_markdown(data: dict) -> str:
    lines = _host_lines(data) + _import_lines(data)
    if "probe" in data:
        lines += _probe_lines(data["probe"])
    return "\n".join([*lines, "", *_ranking_lines(data["ranking"])]) + "\n"


if __name__ == "__main__":
    main()
