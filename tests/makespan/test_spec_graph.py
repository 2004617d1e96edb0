"""`tasksolve makespan` on a spec's application."""

from __future__ import annotations

import json

from tasksolve.solver.cli import main
from tasksolve.solver.makespan.from_spec import graph_from_spec
from tasksolve.specs import load_spec
from tasksolve.specs.loader import builtin_path


def test_graph_from_spec_keeps_work_and_edges():
    path = builtin_path("", "xeon-lata-dag")
    graph = graph_from_spec(path)
    app = load_spec(path).applications["dag"]
    assert graph.total_work == round(app.total_cycles)
    assert len(graph.edges) == len(app.edges)
    # machine-level delay of a 64-byte message in the cache model: one line from memory, 217 cycles
    delays = {(e.pred, e.succ): e.delay for e in graph.edges}
    assert delays[("rx", "parse")] == 217


def test_makespan_of_a_spec_equals_the_critical_path_with_enough_processors(capsys):
    path = str(builtin_path("", "xeon-lata-dag"))
    assert main(["makespan", path, "--processors", "4", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "OPTIMAL"
    assert result["makespan"] == graph_from_spec(path).critical_path_length()
