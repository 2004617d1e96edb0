"""The placeholders a command oracle's argv may hold (spec syntax; `simulate.pinning` fills them in).

``{cpus}``, ``{lcores}``, ``{omp_places}``, ``{plan_file}`` and ``{cpu:APP#I.TASK}`` (the CPU of one
thread).  `specs.checks` checks that every ``{cpu:...}`` names a thread of the spec.
"""

from __future__ import annotations

import re

PLACEHOLDER = re.compile(r"\{(cpus|lcores|omp_places|plan_file|cpu:([^{}]+))\}")


def thread_placeholders(template: list[str]) -> list[str]:
    """The thread names of the ``{cpu:...}`` placeholders in `template`."""
    return [m.group(2) for element in template for m in PLACEHOLDER.finditer(element) if m.group(2) is not None]
