"""The sampling bar's count never reads backwards: its total starts at the design's first batch
and only grows (it showed 0/1000 and then 0/100 on the adaptive path), and a resumed sample's
records fit in it."""

from __future__ import annotations

from tasksolve.solver.certify.progress import Progress


def test_the_total_only_grows():
    bar = Progress(True, 100, False, str)
    with bar:
        bar.set_completed(500)  # a resumed sample larger than the first batch
        assert bar.total() == 500
        bar.set_total(200)
        assert bar.total() == 500
        bar.set_total(1000)
        assert bar.total() == 1000


def test_a_hidden_bar_counts_nothing():
    bar = Progress(False, 100, False, str)
    with bar:
        bar.set_total(1000)
        assert bar.total() == 0
