"""The distribution: one import root, `tasksolve`, whose packages are the repository's folders.

pyproject.toml maps `api/` to `tasksolve` and the four top-level folders under it; these tests
check that the mapping lists every package folder and that the built wheel holds `tasksolve`
alone (the generic names `specs`, `simulate`, `evt`, `solver` are not installed).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"specs", "simulate", "evt", "solver"}


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_listed_under_tasksolve() -> None:
    folders = {"tasksolve"}
    for top in PACKAGES:
        for init in (ROOT / top).rglob("__init__.py"):
            folders.add("tasksolve." + ".".join(init.parent.relative_to(ROOT).parts))
    assert set(_config()["packages"]) == folders


def test_the_root_module_and_the_four_packages_are_mapped() -> None:
    mapping = _config()["package-dir"]
    assert mapping == {"tasksolve": "api", **{f"tasksolve.{p}": p for p in PACKAGES}}
    assert not (ROOT / "tasksolve").exists(), "a tasksolve/ folder would shadow the installed package"


def test_the_wheel_has_one_top_level_name(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("tasksolve-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"tasksolve"}
    assert "tasksolve/specs/examples/t2-ipfwd-intadd-x2.yaml" in names  # the example library travels
    assert "tasksolve/simulate/probe/pingpong.c" in names  # the probe helper's source too
    assert "tasksolve/__main__.py" in names


def test_the_installed_package_is_imported() -> None:
    """No folder of the checkout shadows the installed package when Python runs from the root."""
    code = "import tasksolve, tasksolve.specs as s; print(tasksolve.__file__); print(s.__file__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    root_file, specs_file = (Path(line) for line in out.stdout.split())
    installed = Path(
        subprocess.run(
            [sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # a regular install puts both in site-packages; an editable one maps them to api/ and specs/
    assert root_file in {installed / "tasksolve" / "__init__.py", ROOT / "api" / "__init__.py"}
    assert specs_file in {installed / "tasksolve" / "specs" / "__init__.py", ROOT / "specs" / "__init__.py"}
