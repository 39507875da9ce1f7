"""A lesson's facts live in its solution notebook's metadata; this tool reads, checks and ships them.

Each ``solutions/NN_slug/NN_slug.ipynb`` holds, in its notebook-level metadata::

    "course": {
      "claim": "the sources' claim in one line",  # their figures; the scoreboard shows it (store.CLAIMS)
      "status": "ready" | "planned",              # the README lesson table's Status column
      "summary": "baseline → trick",              # the README lesson table's "Baseline → trick"
      "dataset": "fashionmnist" | "digits" | "cifar10" | "synthetic",  # what it loads by default
      "gpu": {...}                                # gpu sizing figures: every field of estimate_gpu.Compute
    }

``course_utils`` must work pip-installed without the notebooks (Colab), so the claim, status,
summary and dataset of every lesson are also written to ``course_utils/results/lessons.json``
(package data), which :data:`course_utils.results.store.CLAIMS` reads. ``make release`` regenerates it;
tests/test_lesson_facts.py keeps everything in step (complete facts, a fresh ``lessons.json``, the
README table, the claim against the title cell's).

    python tools/lesson_facts.py            # write course_utils/results/lessons.json
    python tools/lesson_facts.py --check    # exit 1, with a diff, when lessons.json is stale
    python tools/lesson_facts.py --table    # the README's lesson table rows, from the metadata
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.estimate_gpu import DEFAULT, Compute  # noqa: E402

LESSONS_JSON = ROOT / "course_utils" / "results" / "lessons.json"
#: The facts ``lessons.json`` carries (the gpu sizing figures stay with the maintainers' tools).
SHIPPED = ("claim", "status", "summary", "dataset")
FACTS = (*SHIPPED, "gpu")
STATUSES = ("ready", "planned")
#: What a lesson may load by default: a name of course_utils.data.datasets.DATASETS, or generated tensors.
DATASETS = ("fashionmnist", "digits", "cifar10", "synthetic")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
LOADS = re.compile(r"\b(?:load_dataset|prepare)\(\s*[\"'](\w+)[\"']")


def solutions(root: Path = ROOT) -> list[Path]:
    """The lesson notebooks, ``solutions/NN_slug/NN_slug.ipynb``, in order."""
    return sorted(p for p in root.glob("solutions/[0-9][0-9]_*/*.ipynb") if p.stem == p.parent.name)


def facts(path: Path) -> dict[str, Any]:
    """The ``course`` metadata of one notebook (empty when it has none)."""
    return dict(json.loads(path.read_text(encoding="utf-8"))["metadata"].get("course", {}))


def shipped(root: Path = ROOT) -> dict[str, dict[str, str]]:
    """What ``lessons.json`` holds: per lesson slug, its claim, status, summary and dataset."""
    return {p.parent.name: {k: facts(p).get(k, "") for k in SHIPPED} for p in solutions(root)}


def render(lessons: dict[str, dict[str, str]]) -> str:
    """``lessons.json``'s text (sorted keys, 1-space indent, as the notebooks are written)."""
    return json.dumps(lessons, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def table(root: Path = ROOT) -> list[str]:
    """The README lesson table's rows: ``| NN | `slug` | baseline → trick | status |``."""
    rows = []
    for slug, f in shipped(root).items():
        rows.append(f"| {slug[:2]} | `{slug[3:]}` | {f['summary']} | {f['status']} |")
    return rows


def _claim_paragraph(nb: dict[str, Any]) -> str:
    cells = nb.get("cells", [])
    first = "".join(cells[0]["source"]) if cells and cells[0]["cell_type"] == "markdown" else ""
    return next((p for p in first.split("\n\n") if p.startswith("**The claim**")), "")


def _code(nb: dict[str, Any]) -> str:
    return "\n".join("".join(c["source"]) for c in nb.get("cells", []) if c["cell_type"] == "code")


def problems(nb: dict[str, Any], slug: str) -> list[str]:
    """What is missing or inconsistent in one lesson's facts (empty when they are complete).

    Checked: every fact is there and filled; the status and dataset are known values; every number
    of the claim's one-liner appears in the title cell's "**The claim**" paragraph; the dataset is
    the one the code loads (``cu.load_dataset("…")`` or ``cu.capstone.prepare("…")``; none for
    "synthetic"); the gpu figures are complete (tools/estimate_gpu.py's ``Compute``) and filled.
    """
    f = nb.get("metadata", {}).get("course")
    if not isinstance(f, dict):
        return [f"{slug}: no 'course' facts in the notebook's metadata (tools/new_lesson.py writes them)"]
    found = [f"{slug}: fact '{k}' is missing" for k in FACTS if k not in f]
    found += [f"{slug}: unknown fact '{k}' (facts: {', '.join(FACTS)})" for k in f if k not in FACTS]
    found += [f"{slug}: fact '{k}' is empty: fill it in" for k in ("claim", "summary") if not f.get(k, "x")]
    if f.get("status", "ready") not in STATUSES:
        found.append(f"{slug}: status {f['status']!r} is not one of {STATUSES}")
    dataset = f.get("dataset", "synthetic")
    if dataset not in DATASETS:
        found.append(f"{slug}: dataset {dataset!r} is not one of {DATASETS}")
    else:
        loaded = sorted(set(LOADS.findall(_code(nb))))
        if (dataset not in loaded) if dataset != "synthetic" else loaded:
            found.append(f"{slug}: dataset {dataset!r}, but the code loads {loaded or 'nothing'}")
    said = set(NUMBER.findall(_claim_paragraph(nb).replace(",", "")))
    missing = [n for n in NUMBER.findall(str(f.get("claim", "")).replace(",", "")) if n not in said]
    if missing:
        found.append(f"{slug}: the claim's {', '.join(missing)} not in the title cell's **The claim** paragraph")
    if "gpu" in f:
        try:
            if Compute.from_facts(f["gpu"]).note == DEFAULT.note:
                found.append(f"{slug}: the gpu sizing figures are the skeleton's assumed ones: fill them in")
        except (TypeError, ValueError) as e:
            found.append(f"{slug}: gpu sizing figures: {e}")
    return found


def check(root: Path = ROOT, target: Path = LESSONS_JSON) -> tuple[bool, str]:
    """(whether ``target`` matches the notebooks' metadata, a unified diff when it does not)."""
    want = render(shipped(root))
    have = target.read_text(encoding="utf-8") if target.exists() else ""
    diff = difflib.unified_diff(have.splitlines(keepends=True), want.splitlines(keepends=True),
                                f"{target.name} (committed)", f"{target.name} (from the notebooks' metadata)")
    return want == have, "".join(diff)


def main(argv: list[str] | None = None) -> int:
    """Write lessons.json, check it (``--check``: 1 when stale) or print the README table (``--table``)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="exit 1 with a diff when lessons.json is stale")
    p.add_argument("--table", action="store_true", help="print the README lesson table's rows")
    args = p.parse_args(argv)
    if args.table:
        print("\n".join(table()))
        return 0
    if args.check:
        fresh, diff = check()
        if not fresh:
            print(f"{LESSONS_JSON.relative_to(ROOT)} is stale: run python tools/lesson_facts.py\n{diff}")
        return 0 if fresh else 1
    LESSONS_JSON.write_text(render(shipped()), encoding="utf-8")
    print(f"wrote {LESSONS_JSON.relative_to(ROOT)} ({len(solutions())} lessons)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
