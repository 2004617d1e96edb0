"""The ``taskset`` format: a POSIX shell launcher that starts a program and pins each of its threads.

``sh pin.sh PROGRAM [ARGUMENT...]`` starts the program in the background, finds its threads in
``/proc/PID/task/TID/comm`` and pins each with util-linux's ``taskset -cp CPU TID``
(sched_setaffinity(2) on the thread), then waits for the program and exits with its exit status.

Which thread is which:

* by name (the default): a program names a thread with ``prctl(PR_SET_NAME, name)`` or
  ``pthread_setname_np(pthread_self(), name)``; Linux keeps the first 15 bytes (TASK_COMM_LEN
  16 with the NUL). The launcher looks for each plan thread under the first 15 bytes of its spec
  name (``ipfwd#0.R``), so the program names its threads after the spec. Threads whose cut names
  are equal are told apart by creation order: the lowest TID goes to the first of them in the plan;
* by creation order (``TASKSOLVE_PIN_BY=order``): the program's threads other than its main
  thread, lowest TID first (Linux hands out TIDs in increasing order until they wrap), go to the
  plan's threads in the plan's order.

Robustness: the threads are polled every 0.1 s; once ``TASKSOLVE_PIN_TIMEOUT`` seconds (default
10) pass with some missing, their names go to stderr, the program is stopped (SIGTERM, SIGKILL
after 5 s) and the launcher exits 124; a thread taskset cannot pin (a CPU outside the allowed
cpuset) stops it the same way with exit 125. A program that ends before all its threads are
pinned is reported on stderr and its exit status passed through. SIGINT, SIGTERM and SIGHUP to
the launcher reach the program as SIGTERM (an asynchronous command of a non-interactive shell
ignores SIGINT). Only the started process is searched: a wrapper script should ``exec`` the
real program.

The names are escaped by `pin_threads.printable` and the table the script reads is one
`shlex.quote`-d word, so no name can run a command.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from tasksolve.specs.exporters.pin_threads import COMM_BYTES, header, pins

if TYPE_CHECKING:
    from tasksolve.specs.plan import Plan
    from tasksolve.specs.spec import Spec

TIMEOUT_S = 10
EXIT_TIMEOUT = 124
EXIT_TASKSET = 125

# Reads "TID NAME" lines (sorted by TID) and the table "CPU NAME" (environment); prints
# "pin INDEX CPU TID" for every plan thread found and "miss NAME" for the others.
_AWK = r"""BEGIN {
  n = split(ENVIRON["TASKSOLVE_THREADS"], row, "\n")
  for (i = 1; i <= n; i++) { s = index(row[i], " "); cpu[i] = substr(row[i], 1, s - 1); name[i] = substr(row[i], s + 1) }
}
{ tid = $1; comm = substr($0, length($1) + 2)
  if (by == "order") { if (tid != pid && k < n) { k++; found[k] = tid } }
  else { seen[comm]++; at[comm, seen[comm]] = tid } }
END {
  for (i = 1; i <= n; i++) {
    if (by == "order") { if (i in found) print "pin", i, cpu[i], found[i]; else print "miss", name[i]; continue }
    r = ++rank[name[i]]
    if ((name[i], r) in at) print "pin", i, cpu[i], at[name[i], r]; else print "miss", name[i]
  }
}"""

_FUNCTIONS = r"""me=tasksolve-pin
by=${TASKSOLVE_PIN_BY:-name}
timeout=${TASKSOLVE_PIN_TIMEOUT:-%(timeout)d}
case $by in name|order) ;; *) echo "$me: TASKSOLVE_PIN_BY is name or order, not '$by'" >&2; exit 2 ;; esac
case $timeout in ''|*[!0-9]*) echo "$me: TASKSOLVE_PIN_TIMEOUT is whole seconds, not '$timeout'" >&2; exit 2 ;; esac
if [ "$#" -eq 0 ]; then echo "usage: sh $0 PROGRAM [ARGUMENT...]" >&2; exit 2; fi
command -v taskset >/dev/null 2>&1 || { echo "$me: taskset (util-linux) not found" >&2; exit 127; }

nap() { sleep 0.1 2>/dev/null || sleep 1; }
alive() {  # whether a thread of the program still runs (not a zombie)
  for f in /proc/"$pid"/task/*/stat; do
    IFS= read -r s 2>/dev/null <"$f" || continue
    case ${s##*") "} in Z*|X*) ;; *) return 0 ;; esac
  done
  return 1
}
stop() {  # SIGTERM to the program, SIGKILL after 5 s; reaps it
  kill -TERM "$pid" 2>/dev/null || :
  tries=0
  while alive && [ "$tries" -lt 50 ]; do nap; tries=$((tries + 1)); done
  kill -KILL "$pid" 2>/dev/null || :
  wait "$pid" 2>/dev/null || :
  running=0
}
tasks() {  # "TID NAME" of every thread of the program, lowest TID first
  for f in /proc/"$pid"/task/*/comm; do
    t=${f%%/comm}
    IFS= read -r n 2>/dev/null <"$f" || continue
    printf '%%s %%s\n' "${t##*/}" "$n"
  done | sort -n
}
"""

_MAIN = r"""
"$@" &
pid=$!
running=1
trap 'kill -TERM "$pid" 2>/dev/null || :' INT TERM HUP
trap 'if [ "$running" = 1 ]; then stop; fi' EXIT
total=$(( $(printf '%%s\n' "$threads" | wc -l) ))
pinned=' '
started=$(date +%%s)
while :; do
  found=0 missing=''
  rows=$(tasks | TASKSOLVE_THREADS=$threads awk -v by="$by" -v pid="$pid" '%(awk)s')
  while read -r kind a b c; do
    case $kind in
      miss) missing="$missing $a${b:+ $b}${c:+ $c}" ;;
      pin)
        found=$((found + 1))
        case $pinned in *" $c "*) continue ;; esac
        if out=$(taskset -cp "$b" "$c" 2>&1 >/dev/null); then
          pinned="$pinned$c "
        elif [ -d "/proc/$pid/task/$c" ]; then
          echo "$me: taskset -cp $b $c failed: $out" >&2
          stop
          exit %(taskset)d
        else
          found=$((found - 1)) missing="$missing (a thread that ended)"
        fi ;;
    esac
  done <<EOF
$rows
EOF
  [ "$found" -lt "$total" ] || break
  if ! alive; then
    echo "$me: the program ended with $found of $total threads pinned; not found:$missing" >&2
    break
  fi
  if [ $(($(date +%%s) - started)) -gt "$timeout" ]; then
    echo "$me: after ${timeout}s, $((total - found)) of $total threads not found (by $by):$missing" >&2
    stop
    exit %(timeout_exit)d
  fi
  nap
done
while :; do  # a signal to the launcher interrupts wait: wait again until the program is reaped
  status=0
  wait "$pid" || status=$?
  [ -d "/proc/$pid" ] || break
done
running=0
exit "$status"
"""


def taskset_script(spec: Spec, plan: Plan) -> list[str]:
    """The launcher (module docstring), as lines."""
    found = pins(spec, plan)
    table = "\n".join(f"{p.cpu} {p.comm}" for p in found)
    usage = [
        "#!/bin/sh",
        *header(spec, plan, "taskset"),
        "#",
        "# Usage: sh pin.sh PROGRAM [ARGUMENT...] -- starts PROGRAM, pins each of its threads with",
        "# `taskset -cp CPU TID` once it appears, waits for PROGRAM and exits with its exit status.",
        "# A thread is found by its name (/proc/PID/task/TID/comm), which the program sets with",
        "# prctl(PR_SET_NAME, name) or pthread_setname_np(pthread_self(), name): name each thread after",
        f"# its spec name below. Linux keeps the first {COMM_BYTES} bytes, and so does the table; threads whose",
        "# cut names are equal are told apart by creation order (lowest TID first).",
        "# TASKSOLVE_PIN_BY=order: pin instead the threads PROGRAM creates (its main thread aside), in",
        "# creation order (lowest TID first), to the plan's threads in the order below.",
        f"# TASKSOLVE_PIN_TIMEOUT=SECONDS (default {TIMEOUT_S}): past it, the missing threads are named on",
        f"# stderr, PROGRAM is stopped and the exit status is {EXIT_TIMEOUT}; a thread taskset cannot pin: {EXIT_TASKSET}.",
        "# Threads run unpinned until found (polled every 0.1 s); only PROGRAM's own process is searched",
        "# (a wrapper script should `exec` the real program).",
        "#",
        "# thread i: spec name on context -> CPU; the name looked for is the table's",
        *[f"#   thread {i}: {p.thread} on {p.context} -> CPU {p.cpu}" for i, p in enumerate(found)],
        "set -eu",
        "",
        "# CPU, then the name the thread has in /proc (its spec name, cut to 15 bytes); one line each",
        f"threads={shlex.quote(table)}",
        "",
    ]
    body = _FUNCTIONS % {"timeout": TIMEOUT_S} + _MAIN % {
        "awk": _AWK,
        "taskset": EXIT_TASKSET,
        "timeout_exit": EXIT_TIMEOUT,
    }
    return usage + body.splitlines()
