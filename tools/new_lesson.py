"""Write a new lesson's skeleton: the anatomy tests/test_structure.py pins, with TODOs to replace.

    python tools/new_lesson.py 20_channels_last "Channels-last memory format"

writes ``solutions/20_channels_last/20_channels_last.ipynb`` with tools/notebook_builder.py: the
title cell (badge, "**The claim**", "**What this notebook measures**"), the 11 level-2 headings, the
locked setup cell, a baseline, two autograded exercises (answer + locked test cell with hidden tests)
under *The trick*, the correctness check, the prediction, ``cu.compare`` read through ``cu.reading``
with ``cu.check_prediction``, the closing cell (``cu.references``, ``cu.save``), one written question,
and the notebook's ``course`` metadata for the lesson's facts (tools/lesson_facts.py): claim,
status ``planned``, summary and dataset empty, and the gpu sizing figures assumed by
tools/estimate_gpu.py (``DEFAULT``) until the lesson's own replace them. The skeleton runs as it is
(a matrix product stands in for the trick); tests/test_lesson_facts.py fails until its facts are
filled in. An existing lesson, or a lesson number already taken, is never overwritten.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.estimate_gpu import DEFAULT  # noqa: E402
from tools.notebook_builder import Lesson  # noqa: E402

SLUG = re.compile(r"\d\d_[a-z0-9]+(?:_[a-z0-9]+)*")
TODO = "TODO"  # every placeholder starts with it: search the notebook for it


def _reading(name: str, indent: str = "") -> str:
    """``print(cu.reading(name, ...))``, a placeholder text per verdict, each line indented by ``indent``."""
    lines = ["print(cu.reading(", f"    {name},",
             f"    faster=lambda c: f\"{TODO}: what {{c.speedup:.2f}}× faster means on a {{env.device.type}}.\",",
             f"    slower=\"{TODO}: why it can be slower here.\",",
             f"    not_resolvable=\"{TODO}: no difference this run can resolve: not 'no effect', one too small to "
             "see here.\",", "))"]  # a failed A/A control prints the library's own text
    return "\n".join(indent + line for line in lines)


def skeleton(slug: str, title: str) -> Lesson:
    """The skeleton's cells, in the anatomy's order."""
    nb = Lesson(slug, title)
    nb.md(f"# {slug[:2]} · {title}", nb.badge(),
          f"**The claim**: {TODO}: the sources' claim, with their figures, hardware and setting (their numbers, "
          "never one typed from another machine).",
          f"**What this notebook measures**: {TODO}: baseline against trick, on CPU and GPU.")
    nb.md("## Learning goals", "\n".join(f"- {TODO}: learning goal {i}." for i in (1, 2, 3)))
    nb.md("## Setup", "Run the setup cell first: it prints the hardware and the profile every number below depends on.")
    nb.setup()
    nb.md("Imports and sizes from the profile.")
    nb.code("import torch\n\n"
            f"# gpu profile: {TODO}: FLOPs of one step (cu.flop_count) and its time on an H100/H200, the notebook's\n"
            "# other work; the same figures go into the notebook's metadata (course.gpu), then the estimator's total:\n"
            f"# Estimate (tools/estimate_gpu.py): about {TODO} s on an H100/H200.\n"
            f"SIZE = env.pick(smoke=64, cpu=256, gpu=2048)  # {TODO}: the lesson's sizes per profile")
    nb.md("## Baseline", f"{TODO}: the plain version, built from `cu.` models, data and loops.")
    nb.code("x = torch.randn(SIZE, SIZE, device=env.device)\n\n\n"
            "def baseline_step() -> torch.Tensor:\n"
            f"    \"\"\"{TODO}: one step of the plain version.\"\"\"\n"
            "    return x @ x.T")
    nb.md("## The trick", f"{TODO}: what bottleneck the trick removes, and why; the lesson's version of it:")
    nb.code("def trick_step() -> torch.Tensor:\n"
            f"    \"\"\"{TODO}: one step with the trick: the same result as baseline_step().\"\"\"\n"
            "    return torch.mm(x, x.T)")
    nb.md(f"### Exercise 1 — {TODO}: the trick, yours (2 points)",
          f"{TODO}: what to write: `my_trick_step()`, the baseline's result with the trick. The tests check "
          "correctness, never speed; the lesson times your answer.")
    nb.answer("ex1_answer", "def my_trick_step() -> torch.Tensor:\n"
                            f"    \"\"\"{TODO}: one step with the trick, written by you.\"\"\"\n"
                            "    ### BEGIN SOLUTION\n    return torch.mm(x, x.T)\n    ### END SOLUTION")
    nb.tests("ex1_tests", "cu.assert_close(my_trick_step(), baseline_step(), name=\"my_trick_step() against the "
                          "baseline\")\nprint(\"visible tests passed\")\n### BEGIN HIDDEN TESTS\n"
                          f"# {TODO}: wrong answers first (tests/mutants/{slug}/), then tests failing each\n"
                          "cu.assert_close(my_trick_step(), baseline_step(), name=\"my_trick_step(), called again\")\n"
                          "### END HIDDEN TESTS", points=2)
    nb.md(f"### Exercise 2 — {TODO}: a second piece (2 points)",
          f"{TODO}: what to write: `exercise_2(values)`, a helper the lesson uses.")
    nb.answer("ex2_answer", "def exercise_2(values: list[float]) -> float:\n"
                            f"    \"\"\"{TODO}: the second piece the learner writes.\"\"\"\n"
                            "    ### BEGIN SOLUTION\n    return float(sum(values))\n    ### END SOLUTION")
    nb.tests("ex2_tests", f"assert exercise_2([1.0, 2.0]) == 3.0, \"{TODO}: a message in the learner's words\"\n"
                          "print(\"visible tests passed\")\n### BEGIN HIDDEN TESTS\n"
                          f"assert exercise_2([]) == 0.0, \"{TODO}: an edge case the visible test leaves out\"\n"
                          "### END HIDDEN TESTS", points=2)
    nb.md("## Check, then time", "First, correctness: the trick, and your version of it, give the baseline's result.")
    nb.code("cu.assert_close(trick_step(), baseline_step(), name=\"the trick against the baseline\")\n"
            "with cu.needs(\"Exercise 1\"):\n"
            "    cu.assert_close(my_trick_step(), baseline_step(), name=\"your trick against the baseline\")\n"
            "print(\"the trick gives the baseline's result\")")
    nb.md(f"**Predict before you run:** {TODO}: what the trick saves. Replace `None` with your guess of baseline "
          "time / trick time.")
    nb.code("my_prediction = None  # your guess: baseline time / trick time")
    nb.md("`cu.compare` times both interleaved, the baseline against itself as the A/A control.")
    nb.code("step_time = cu.compare(baseline_step, trick_step, names=(\"baseline\", \"trick\"), device=env.device)\n"
            "print(step_time, end=\"\\n\\n\")\n"
            "cu.check_prediction(my_prediction, step_time)\n"
            + _reading("step_time"))
    nb.md("Your version of the trick, timed against the lesson's.")
    nb.code("yours_time = None\n"
            "with cu.needs(\"Exercise 1\"):\n"
            "    yours_time = cu.compare(trick_step, my_trick_step, names=(\"the lesson's trick\", \"yours\"),\n"
            "                            device=env.device)\n"
            "    print(yours_time, end=\"\\n\\n\")\n"
            + _reading("yours_time", "    "))
    nb.closing("step_time", step_time="step_time", yours="yours_time", sizes="{\"size\": SIZE}")
    nb.md("## Exercises", "Exercises 1 and 2 are in *The trick*. One written answer remains.",
          "### Question 1 — Read your own measurement (3 points)",
          f"{TODO}: quote your numbers: the verdict, ratio and interval, the A/A control; why, from what the "
          "baseline does extra.")
    nb.written("q1_answer", "**Model answer (what a good answer contains).**\n\n"
                            f"- {TODO}: what a good answer names (the learner's own verdict, ratio and interval; "
                            "never fixed numbers).", points=3)
    for heading in ("Pitfalls and when not to use it", "Modern PyTorch", "Lightning and Accelerate"):
        nb.md(f"## {heading}", f"- {TODO}.")
    nb.md("## Takeaways", "\n".join(f"- {TODO}: takeaway {i}." for i in (1, 2, 3)))
    nb.md("## Further reading", f"- {TODO}: the sources, with links.")
    return nb


def facts() -> dict:
    """The ``course`` metadata to fill (tools/lesson_facts.py describes each fact)."""
    return {"claim": "", "status": "planned", "summary": "", "dataset": "", "gpu": DEFAULT.to_facts()}


def refusal(slug: str, title: str, root: Path) -> str | None:
    """Why this lesson cannot be written (one line), or None."""
    if not SLUG.fullmatch(slug):
        return f"'{slug}' is not a lesson slug: two digits, '_', then lower-case words joined by '_' (20_channels_last)"
    if not title.strip():
        return "the title is empty: give the trick's name, e.g. \"Channels-last memory format\""
    taken = sorted(p.name for p in (root / "solutions").glob(f"{slug[:2]}_*"))
    if taken:
        return f"solutions/{taken[0]} already exists: lesson {slug[:2]} is taken (nothing was written)"
    return None


def main(argv: list[str] | None = None) -> int:
    """Write the skeleton; 1 (one line on stderr) when the slug is bad or the lesson exists."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("slug", help="NN_slug, e.g. 20_channels_last")
    p.add_argument("title", help="the trick's name, for the title cell")
    p.add_argument("--root", type=Path, default=ROOT, help="course root (default: this checkout)")
    args = p.parse_args(argv)
    why = refusal(args.slug, args.title, args.root)
    if why:
        print(f"new_lesson: {why}", file=sys.stderr)
        return 1
    path = skeleton(args.slug, args.title).write(args.root)
    nb = nbformat.read(path, as_version=4)
    nb.metadata["course"] = facts()
    nbformat.write(nb, path)
    print(f"wrote {path}\nnext: replace every {TODO}, fill the notebook's course metadata (tools/lesson_facts.py), "
          "add the README table row (python tools/lesson_facts.py --table), then make release (CONTRIBUTING.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
