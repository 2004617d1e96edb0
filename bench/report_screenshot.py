"""Check that report.html renders: headless Chromium takes a screenshot of a fresh report.

    python bench/report_screenshot.py --out /tmp/report-check   # needs Debian's `chromium`

Writes OUT/report.html (from `tasksolve run` on a small example with the closed-form oracle) and
OUT/report.png (a full-page screenshot), and prints the screenshot's size.
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
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    subprocess.run(
        [
            "tasksolve",
            "run",
            args.spec,
            "--out",
            str(args.out),
            "--oracle",
            "analytic",
            "--samples",
            "1000",
            "--time-limit",
            "10",
            "--json",
        ],
        check=False,
        stdout=subprocess.DEVNULL,
    )
    page = (args.out / "report.html").resolve()
    shot = (args.out / "report.png").resolve()
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
            f"--user-data-dir={args.out.resolve() / 'chromium-profile'}",
            "--window-size=1000,4200",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=120,
    )
    print(f"{shot}: {shot.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
