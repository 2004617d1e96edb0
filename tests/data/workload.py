"""A small pinned workload for the command oracle: worker processes spinning for a fixed time.

    python workload.py --contexts 0,2 [--per-cpu 2] [--seconds 0.3]
    python workload.py --plan PLAN.json [--per-cpu 2] [--seconds 0.3]

starts one worker process per listed context (Python threads would share the interpreter lock,
so processes), pins worker ``i`` to OS CPU ``contexts[i] // per_cpu`` with
``os.sched_setaffinity`` -- ``--per-cpu 2`` models two hardware strands per CPU, so contexts 0
and 1 share CPU 0 --, starts them together and lets each count loop iterations for ``seconds``.
It prints one JSON line: ``rate`` (iterations per second, all workers), ``min_rate`` (the
slowest worker's), and the CPUs used.  Without ``--contexts`` it reads ``TASKSOLVE_CPUS``.  With
``--plan`` (the plan file the command oracle writes) one worker runs per thread of the plan, on its
CPU, and the line also has ``instances``: each instance's own rate (the sum of its threads').
Workers placed on one CPU share it and lose to workers spread over CPUs, as on hardware.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time

CHECK_EVERY = 2000


def _spin(index: int, cpu: int, seconds: float, start, results) -> None:
    os.sched_setaffinity(0, {cpu})
    start.wait()
    count, x = 0, 1
    deadline = time.perf_counter() + seconds
    began = time.perf_counter()
    while True:
        for _ in range(CHECK_EVERY):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        count += CHECK_EVERY
        now = time.perf_counter()
        if now >= deadline:
            break
    results.put((index, count / (now - began)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contexts", default=os.environ.get("TASKSOLVE_CPUS"))
    parser.add_argument("--per-cpu", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument("--plan", help="the command oracle's plan file: one worker per thread, rates per instance")
    args = parser.parse_args(argv)
    owners: list[str] = []
    if args.plan:
        with open(args.plan) as handle:
            rows = json.load(handle)["threads"]
        contexts = [int(row["cpu"]) for row in rows]
        owners = [row["thread"].split(".", 1)[0] for row in rows]
    elif args.contexts:
        contexts = [int(c) for c in args.contexts.split(",")]
    else:
        parser.error("give --contexts or --plan, or set TASKSOLVE_CPUS")
    cpus = [c // args.per_cpu for c in contexts]
    allowed = os.sched_getaffinity(0)
    if not set(cpus) <= allowed:
        print(f"CPUs {sorted(set(cpus) - allowed)} are not available here ({sorted(allowed)})", file=sys.stderr)
        return 2
    context = multiprocessing.get_context("fork")
    start, results = context.Event(), context.Queue()
    workers = [context.Process(target=_spin, args=(i, cpu, args.seconds, start, results)) for i, cpu in enumerate(cpus)]
    for worker in workers:
        worker.start()
    time.sleep(0.05)  # let every worker pin itself before the start
    start.set()
    rates = dict(results.get(timeout=args.seconds + 30) for _ in workers)
    for worker in workers:
        worker.join()
    ordered = [rates[i] for i in range(len(workers))]
    line = {"rate": sum(ordered), "min_rate": min(ordered), "cpus": cpus}
    if owners:
        line["instances"] = {
            name: sum(r for r, o in zip(ordered, owners) if o == name) for name in dict.fromkeys(owners)
        }
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
