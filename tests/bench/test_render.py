"""bench/render.py: sections rendered from results files, and the checks that keep them true."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(f"_test_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


render = _load("render")
results = _load("results")

FAKE = """
import sys
from results import write_results

NOISY = ["seconds"]


def render_markdown(data):
    return f"count {data['count']}, {data['seconds']:.1f} s"


if __name__ == "__main__":
    write_results("fake", {"count": int(sys.argv[1]), "seconds": 1.0}, modules=["bench/fake.py"])
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A repository root with one bench script, its results file and a BENCHMARKS.md."""
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "fake.py").write_text(FAKE)
    (tmp_path / "bench" / "results.py").write_text((ROOT / "bench" / "results.py").read_text())
    record = {
        "name": "fake",
        "command": "python bench/fake.py 7",
        "date": "2026-01-01T00:00:00+00:00",
        "modules": _hashes(tmp_path, ["bench/fake.py"]),
        "data": {"count": 7, "seconds": 1.5},
    }
    (tmp_path / "bench" / "results" / "fake.json").write_text(json.dumps(record))
    (tmp_path / "BENCHMARKS.md").write_text("# B\n\ntyped prose\n<!-- BEGIN fake -->\nold\n<!-- END fake -->\ntail\n")
    return tmp_path


def _hashes(root: Path, modules: list[str]) -> dict[str, str]:
    import hashlib

    return {m: hashlib.sha256((root / m).read_bytes()).hexdigest() for m in modules}


def _main(root: Path, *flags: str) -> int:
    return render.main(
        [
            *flags,
            "--benchmarks",
            str(root / "BENCHMARKS.md"),
            "--results",
            str(root / "bench/results"),
            "--root",
            str(root),
        ]
    )


def test_sections_in_order_and_unbalanced_markers_refused():
    text = "<!-- BEGIN a -->\nx\n<!-- END a -->\n<!-- BEGIN b -->\n<!-- END b -->\n"
    assert render.sections(text) == ["a", "b"]
    quoted = "prose quoting `<!-- BEGIN name -->` inline\n" + text
    assert render.sections(quoted) == ["a", "b"], "a marker is a line of its own"
    for bad in ("<!-- BEGIN a -->\n", "<!-- END a -->\n", "<!-- BEGIN a -->\n<!-- BEGIN b -->\n<!-- END b -->\n"):
        with pytest.raises(render.RenderError):
            render.sections(bad)


def test_render_rewrites_only_the_marked_body_then_check_passes(tree: Path, capsys):
    assert _main(tree, "--check") == 1
    assert "fake: BENCHMARKS.md differs" in capsys.readouterr().err
    assert _main(tree) == 0
    text = (tree / "BENCHMARKS.md").read_text()
    assert text == "# B\n\ntyped prose\n<!-- BEGIN fake -->\ncount 7, 1.5 s\n<!-- END fake -->\ntail\n"
    assert _main(tree, "--check") == 0


def test_missing_results_file_fails_naming_it(tree: Path, capsys):
    (tree / "BENCHMARKS.md").write_text(
        "<!-- BEGIN fake -->\n<!-- END fake -->\n<!-- BEGIN other -->\n<!-- END other -->\n"
    )
    assert _main(tree, "--check") == 1
    err = capsys.readouterr().err
    assert "other: results file" in err and "missing" in err


def test_unbalanced_markers_exit_2(tree: Path):
    (tree / "BENCHMARKS.md").write_text("<!-- BEGIN fake -->\n")
    assert _main(tree, "--check") == 2


def test_changed_module_warns_without_failing(tree: Path, capsys):
    _main(tree)
    (tree / "bench" / "fake.py").write_text(FAKE + "\n# changed\n")
    assert _main(tree, "--check") == 0
    assert "fake: measured modules changed" in capsys.readouterr().err


def test_rerun_quick_exact_for_counts_band_for_times(tree: Path, monkeypatch, capsys):
    _main(tree)
    monkeypatch.setattr(render, "QUICK", ["fake"])
    # recorded count 7 and 1.5 s; the re-run gives 7 and 1.0 s: within the x5 band
    assert _main(tree, "--check", "--rerun-quick") == 0
    record = json.loads((tree / "bench/results/fake.json").read_text())
    assert record["data"]["seconds"] == 1.5, "the re-run must not overwrite the recorded figure"
    record["command"] = "python bench/fake.py 8"  # the re-run now counts 8 where 7 is recorded
    (tree / "bench/results/fake.json").write_text(json.dumps(record))
    assert _main(tree, "--check", "--rerun-quick") == 1
    assert "count: 7 became 8 (exact)" in capsys.readouterr().err


def test_compare_data_ignore_and_floor():
    assert render.compare_data({"a": [1.0, 9.0]}, {"a": [50.0, 0.1]}, [], 5, ignore=("a",)) == []
    assert render.compare_data({"t": 0.001}, {"t": 0.02}, ["t"], 5, floor=0.05) == []
    assert render.compare_data({"t": 0.001}, {"t": 0.02}, ["t"], 5) != []


def test_compare_data_tolerances():
    old = {"n": 3, "t": {"a": 1.0}, "xs": [1, 2], "s": "x"}
    assert render.compare_data(old, {"n": 3, "t": {"a": 2.9}, "xs": [1, 2], "s": "x"}, ["t.*"], 3) == []
    assert render.compare_data(old, {"n": 3, "t": {"a": 3.1}, "xs": [1, 2], "s": "x"}, ["t.*"], 3)
    assert render.compare_data(old, {"n": 3, "t": {"a": 1.0}, "xs": [1, 2, 3], "s": "x"}, [], 3)
    assert render.compare_data(old, {"n": 3, "t": {"a": 1.0}, "xs": [1, 2], "s": "y"}, [], 3)
    assert render.compare_data(old, {"n": 3.0000001, "t": {"a": 1.0}, "xs": [1, 2], "s": "x"}, [], 3)


def test_repository_benchmarks_render_unchanged():
    """The check CI runs, without the re-runs: every marked section matches its results file."""
    assert render.main(["--check"]) == 0


def test_a_fitted_figure_agrees_to_the_fit_tolerance_and_no_further():
    """An EVT endpoint re-run on another machine's floating-point kernels moved 4e-7 (asplos12,
    evt-coverage): within `FIT_TOLERANCE`; a change of 1e-4 is a change; other keys stay exact."""
    old = {"rows": [{"err": 4.6548365732339665, "n": 100}]}
    moved = {"rows": [{"err": 4.654834683750775, "n": 100}]}
    assert render.compare_data(old, moved, [], 5, fitted=("rows.*.err",)) == []
    assert render.compare_data(old, moved, [], 5) != []  # exact without the pattern
    changed = {"rows": [{"err": 4.6548365732339665 * (1 + 1e-4), "n": 100}]}
    assert render.compare_data(old, changed, [], 5, fitted=("rows.*.err",)) != []
    counted = {"rows": [{"err": 4.6548365732339665, "n": 101}]}
    assert render.compare_data(old, counted, [], 5, fitted=("rows.*.err",)) != []
