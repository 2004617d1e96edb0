"""The CLI's phase display: counts inside a running phase."""

from __future__ import annotations

from tasksolve.solver.cli.progress import Phases


def test_update_shows_counts_in_the_running_phase_without_a_new_phase():
    with Phases(enabled=True) as say:
        say("tsbsched: profiling")
        say.update("predicted 100/1526 plans")
        tasks = say._bar.tasks
        assert len(tasks) == 1
        assert tasks[0].description == "tsbsched: profiling: predicted 100/1526 plans"
        say("blackbox: profiling")
        assert [t.description for t in say._bar.tasks] == ["blackbox: profiling"]


def test_update_is_silent_when_disabled_or_before_any_phase():
    with Phases(enabled=False) as say:
        say.update("predicted 1 plans")  # no bar, nothing raised
    with Phases(enabled=True) as say:
        say.update("predicted 1 plans")  # no phase yet: ignored
        assert say._bar.tasks == []
