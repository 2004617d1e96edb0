"""Check that report.html renders and answers first: headless Chromium screenshots a fresh report.

    python bench/report_screenshot.py --out /tmp/report-check [--docs]   # needs Debian's `chromium`

Writes OUT/report.html (from `tasksolve run` on the flagship with the defaults a new user gets:
the simulation, the adaptive local-optima sample), OUT/first-screen.png (the first 1000 x 900
pixels: what a person sees before scrolling) and OUT/report.png (the full page), and prints their
sizes; with --docs, copies the first screen to docs/report-first-screen.png.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("report-check"))
    parser.add_argument("--spec", default="t2-ipfwd-intadd-x2")
    parser.add_argument("--docs", action="store_true", help="copy the first screen into docs/")
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    subprocess.run(
        [sys.executable, "-m", "tasksolve", "run", args.spec, "--out", str(args.out), "--force", "--json"],
        check=False,
        stdout=subprocess.DEVNULL,
    )
    page = (args.out / "report.html").resolve()
    for name, size in (("first-screen.png", "1000,900"), ("report.png", "1000,4200")):
        shoot(browser, page, (args.out / name).resolve(), size, args.out)
    if args.docs:
        docs = Path(__file__).resolve().parents[1] / "docs" / "report-first-screen.png"
        shutil.copyfile(args.out / "first-screen.png", docs)
        print(f"copied to {docs}")
    return 0


def shoot(browser: str, page: Path, shot: Path, size: str, out: Path) -> None:
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={out.resolve() / 'chromium-profile'}",
            f"--window-size={size}",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=120,
    )
    print(f"{shot}: {shot.stat().st_size} bytes")


if __name__ == "__main__":
    sys.exit(main())
