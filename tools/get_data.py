"""`make data`: put Fashion-MNIST in the course data cache ($COURSE_DATA or ~/.cache/course_data).

In order: (a) already there: say so; (b) Debian's package dataset-fashion-mnist is installed:
copy its files; (c) apt-get is here and we are root: install that package (30 MB; `apt-get
update` first when the lists lack it), then copy; (d) torchvision's download; (e) none worked:
say that the lessons will fall back to scikit-learn's digits. Always exits 0 (CI must not fail
for want of a dataset), except on a bad command line. COURSE_NO_APT=1 skips (c);
COURSE_OFFLINE=1 skips (d); COURSE_DATASET=digits (the lessons use digits) skips them all.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course_utils.data import fashion_mnist  # noqa: E402
from course_utils.data.datasets import FORCE_ENV, forced_dataset  # noqa: E402
from course_utils.data.fashion_mnist import (  # noqa: E402
    cache_dir,
    fashionmnist_ready,
    prepare_fashionmnist,
    raw_folder,
)

PACKAGE = "dataset-fashion-mnist"
APT_TIMEOUT_S = 600


def _apt(*args: str) -> bool:
    """Run apt-get non-interactively; True when it succeeded. Its output goes to the terminal."""
    cmd = ["apt-get", "-y", "-q", *args]
    print("+", " ".join(cmd), flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        return subprocess.run(cmd, env=env, timeout=APT_TIMEOUT_S).returncode == 0
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"apt-get failed: {type(e).__name__}: {e}")
        return False


def apt_install() -> str | None:
    """Install the Debian package; None when done, else why it was not (one line)."""
    if os.environ.get("COURSE_NO_APT", "").strip() not in ("", "0"):
        return "COURSE_NO_APT is set"
    if shutil.which("apt-get") is None:
        return "no apt-get on this machine"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return f"not root (run `sudo apt-get install {PACKAGE}`, then `make data` again)"
    if _apt("install", "--no-install-recommends", PACKAGE):
        return None
    print("install failed; updating the package lists and trying again")
    if _apt("update") and _apt("install", "--no-install-recommends", PACKAGE):
        return None
    return f"apt-get could not install {PACKAGE}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=None,
                        help="data folder (default: $COURSE_DATA or ~/.cache/course_data)")
    args = parser.parse_args(argv)
    root = args.root or cache_dir()
    raw = raw_folder(root)
    try:
        forced = forced_dataset()
    except ValueError as e:  # a typo in COURSE_DATASET: as bad as a bad command line
        parser.error(str(e))
    if forced:
        print(f"{FORCE_ENV}=digits is set: the lessons will use scikit-learn's handwritten digits; "
              "no Fashion-MNIST needed")
        return 0
    if fashionmnist_ready(root):  # (a)
        print(f"Fashion-MNIST is ready in {raw}")
        return 0
    reasons = []
    if not fashion_mnist.SYSTEM_DIR.is_dir():  # (c) before (b): get the Debian files when we may
        why = apt_install()
        if why is not None:
            reasons.append(f"Debian package {PACKAGE}: {why}")
    try:  # (b) copy from the Debian folder (or another cache), else (d) download
        prepare_fashionmnist(root, verbose=True)
    except Exception as e:  # (e) any failure: explain, never fail the build
        reasons.append(" ".join(f"{type(e).__name__}: {e}".split())[:400])
        print("WARNING: Fashion-MNIST is not available on this machine:")
        for reason in reasons:
            print(f"  - {reason}")
        print("The lessons will fall back to scikit-learn's handwritten digits (1,797 8x8 images) and "
              "print a warning saying so.")
        return 0
    print(f"Fashion-MNIST is ready in {raw}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
