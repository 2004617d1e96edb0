"""Plots (evt.plots): figures returned and PNG/SVG files written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tasksolve import evt
from tasksolve.evt import plots


@pytest.fixture(scope="module")
def results() -> list[evt.EVTResult]:
    rng = np.random.default_rng(0)
    return [
        evt.analyze(stats.beta(2, 5).rvs(2000, random_state=rng), gof_bootstrap=0),
        evt.analyze(rng.random(500), minimize=True, gof_bootstrap=0),
        evt.analyze(stats.pareto(2.0).rvs(1000, random_state=rng), gof_bootstrap=0),  # inf
        evt.analyze(stats.pareto(0.5).rvs(3000, random_state=rng), gof_bootstrap=0),
    ]


def test_each_plot_returns_a_figure_and_writes_png_and_svg(results: list[evt.EVTResult], tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    assert results[-1].lower == results[-1].upper == float("inf")  # nothing finite to draw
    for i, res in enumerate(results):
        for func in (plots.plot_ecdf, plots.plot_mean_excess, plots.plot_qq, plots.plot_profile):
            stem = tmp_path / f"{func.__name__}_{i}"
            fig = func(res, stem)
            assert isinstance(fig, Figure)
            assert stem.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
            assert b"<svg" in stem.with_suffix(".svg").read_bytes()[:2000]


def test_figure_without_file_is_embeddable(results: list[evt.EVTResult]) -> None:
    import io

    fig = plots.plot_profile(results[0])
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    assert "<svg" in buf.getvalue()


def test_write_plots_and_sequential(tmp_path: Path, results: list[evt.EVTResult]) -> None:
    files = plots.write_plots(results[0], tmp_path / "out", prefix="run")
    assert len(files) == 8 and all(f.exists() for f in files)
    rng = np.random.default_rng(1)
    seq = evt.sequential(lambda k: rng.random(k) ** 0.5, n_init=200, n_delta=200, target_gap=0.01, max_n=600)
    fig = plots.plot_sequential(seq, tmp_path / "seq")
    assert fig.axes and (tmp_path / "seq.png").exists() and (tmp_path / "seq.svg").exists()


def test_evt_does_not_import_pyplot_or_our_packages() -> None:
    import subprocess
    import sys

    code = (
        "import sys, numpy as np; from tasksolve import evt; evt.analyze(np.random.default_rng(0).random(300));"
        "bad = [m for m in sys.modules if m.split('.')[0] == 'matplotlib' or m.split('.')[:2] in "
        "(['tasksolve', 'specs'], ['tasksolve', 'simulate'], ['tasksolve', 'solver'])];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
