"""Every lesson follows one anatomy (COURSE_DESIGN.md, "Notebook anatomy"); new lessons inherit it."""

import json
import re
from pathlib import Path

import nbformat
import pytest

import course_utils as cu
from tools.notebook_builder import setup_source

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted(ROOT.glob("solutions/[0-9][0-9]_*/*.ipynb"))
RELEASED = sorted(ROOT.glob("notebooks/[0-9][0-9]_*/*.ipynb"))

SECTIONS = [
    "Learning goals", "Setup", "Baseline", "The trick", "Check, then time", "Exercises",
    "Pitfalls and when not to use it", "Modern PyTorch", "Lightning and Accelerate", "Takeaways",
    "Further reading",
]
GITHUB = cu.REPO_URL.removeprefix("https://github.com/")
FORBIDDEN = {
    "torch.cuda.amp": "use torch.amp (torch.cuda.amp is deprecated)",
    "time.time(": "nothing is timed by hand: use cu.compare / cu.benchmark",
    "perf_counter": "nothing is timed by hand: use cu.compare / cu.benchmark",
    "use_reentrant=True": "checkpoint with use_reentrant=False",
    "timeit": "nothing is timed by hand: use cu.compare / cu.benchmark",
    "time.monotonic": "nothing is timed by hand: use cu.compare / cu.benchmark",
    "time.process_time": "nothing is timed by hand: use cu.compare / cu.benchmark",
    "torch.utils.benchmark": "time with cu.benchmark / cu.compare",
    "num_threads=": "CPU threads are pinned once, by cu.setup(cpu_threads=1) in the setup cell",
    "env.set_threads(": "CPU threads are pinned once, by cu.setup(cpu_threads=1) in the setup cell",
}
#: Lesson 00 teaches timing: its learners write a timer and pass it a clock, and it measures
#: the thread count itself (at torch's default first, then pinned). Lesson 10 pins this process
#: on a GPU too, as each rank is (the ranks train on the CPU). Lesson 13 times the profiler itself.
ALLOWED = {"00_measuring": {"timeit", "num_threads=", "env.set_threads("},
           "10_distributed_data_parallel": {"env.set_threads("}, "13_debug_tools_off": {"torch.profiler"}}
#: What each lesson's setup cell passes as ``cpu_threads`` (tools/notebook_builder.setup_source): 1,
#: but lesson 00 shows torch's default thread count before it pins one.
SETUP_THREADS = {"00_measuring": None}
WRITTEN_POINTS = 3
EXERCISE = re.compile(r"^### Exercise (\d+) — .+ \((\d+) points?\)$")
QUESTION = re.compile(r"^### Question (\d+) — .+ \((\d+) points?\)$")


MAX_WORDS = 2500  # the course standard: at most 2,500 words of prose a lesson

#: A verdict read by hand: a comparison, a membership test, a lookup keyed by the verdict, a
#: verdict literal used as a key or compared, or the two-way ``.resolved`` (which lets a failed
#: control fall into the "not resolvable" text). Interpretations go through cu.reading.
BY_HAND = [
    (re.compile(r"\.verdict\s*(==|!=|\bin\b|\bnot\s+in\b)"), "compares a verdict by hand"),
    (re.compile(r"\.resolved\b"), "reads .resolved (a failed control is not 'not resolvable')"),
    (re.compile(r"\[\s*[\w.\[\]\"']*\.verdict\s*\]|\.get\(\s*[\w.\[\]\"']*\.verdict"),
     "looks a text up by verdict"),
    (re.compile(r"[\"'](faster|slower|control failed|not resolvable[^\"']*)[\"']\s*(:|==|!=)"
                r"|(==|!=|\bin\b)\s*\(?[\"'](faster|slower|control failed|not resolvable)"),
     "uses a verdict string as a key or in a comparison"),
]


def verdicts_by_hand(code_cells) -> list[str]:
    """Ordinary (not graded) code that interprets a verdict without cu.reading."""
    found = []
    for c in code_cells:
        if nbg(c).get("grade") or nbg(c).get("solution"):
            continue
        for line in c.source.splitlines():
            for pattern, what in BY_HAND:
                if pattern.search(line):
                    found.append(f"{what}: {line.strip()[:90]!r}; print interpretations with "
                                 "cu.reading(result, faster=..., slower=..., not_resolvable=..., control_failed=...)")
    return found


def prose_words(nb) -> int:
    """Words in the markdown cells a learner reads (model answers of written questions excluded)."""
    return sum(len(re.findall(r"\w+", c.source)) for c in nb.cells
               if c.cell_type == "markdown" and not nbg(c).get("solution"))


def nbg(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def anatomy_problems(nb, slug):
    """Return what is wrong with a lesson notebook's structure (empty when it is fine)."""
    problems = []
    cells = nb.cells
    first = cells[0].source if cells and cells[0].cell_type == "markdown" else ""
    if not first.startswith(f"# {slug[:2]} · "):
        problems.append(f"first cell must start with the title '# {slug[:2]} · Trick name'")
    badge = f"colab.research.google.com/github/{GITHUB}/blob/main/notebooks/{slug}/{slug}.ipynb"
    if badge not in first or "colab-badge.svg" not in first:
        problems.append("the title cell needs the Open in Colab badge for this lesson")
    for marker in ("**The claim**:", "**What this notebook measures**:"):
        if marker not in first:
            problems.append(f"the title cell needs a paragraph that starts {marker}")
    headings = [line[3:].strip() for c in cells if c.cell_type == "markdown"
                for line in c.source.splitlines() if line.startswith("## ")]
    if headings != SECTIONS:
        problems.append(f"level-2 headings must be exactly {SECTIONS}, got {headings}")
    goals = next((c.source for c in cells if c.source.startswith("## Learning goals")), "")
    if not 3 <= sum(line.startswith("- ") for line in goals.splitlines()) <= 4:
        problems.append("Learning goals needs 3-4 bullets")
    code = [c for c in cells if c.cell_type == "code"]
    setups = [c for c in code if "cu.setup(" in c.source]
    if len(setups) != 1 or code[0] is not setups[0]:
        problems.append("exactly one setup cell, the first code cell, calls cu.setup()")
    else:
        s = setups[0]
        if not (nbg(s).get("locked") and nbg(s).get("grade_id") == "setup"):
            problems.append("the setup cell must be locked with grade_id 'setup'")
        if "import course_utils as cu" not in s.source or '"google.colab" in sys.modules' not in s.source:
            problems.append("the setup cell imports course_utils as cu behind a Colab-guarded install")
        if f"git+{cu.REPO_URL}@v{cu.__version__}" not in s.source:
            problems.append(f"the setup cell's install line must pin this release: git+<cu.REPO_URL>@v{cu.__version__}")
        if s.source != setup_source(SETUP_THREADS.get(slug, 1)):
            problems.append("the setup cell must be tools/notebook_builder.py's setup_source(), byte for byte "
                            f"(cpu_threads={SETUP_THREADS.get(slug, 1)})")
    for i, c in enumerate(cells):
        if c.cell_type != "code" or nbg(c).get("grade"):
            continue
        prev = cells[i - 1] if i else None
        if prev is None or prev.cell_type != "markdown":
            problems.append(f"cell {i}: every code cell is preceded by a sentence saying why it runs")
    tests = [c for c in code if nbg(c).get("grade") and nbg(c).get("locked")]
    answers = [c for c in code if nbg(c).get("solution") and not nbg(c).get("grade")]
    written = [c for c in cells if c.cell_type == "markdown" and nbg(c).get("solution") and nbg(c).get("grade")]
    if len(answers) < 2 or len(tests) < 2:
        problems.append("at least 2 autograded exercises (answer cell + locked test cell)")
    if any("### BEGIN HIDDEN TESTS" not in c.source for c in tests):
        problems.append("every autograded test cell has visible tests and hidden tests")
    if any(not (nbg(c).get("points") or 0) > 0 for c in tests + written):
        problems.append("every graded cell has points > 0")
    if not written:
        problems.append("at least 1 manually graded written answer")
    problems += exercise_problems(cells)
    ids = [nbg(c)["grade_id"] for c in cells if nbg(c)]
    if len(ids) != len(set(ids)):
        problems.append(f"grade ids must be unique: {ids}")
    source = "\n".join(c.source for c in code)
    for needle, why in FORBIDDEN.items():
        if needle in source and needle not in ALLOWED.get(slug, ()):
            problems.append(f"'{needle}' in code: {why}")
    if "cu.compare(" not in source and "cu.sweep(" not in source:  # a sweep: several arms, one measurement
        problems.append("the lesson times baseline against trick with cu.compare (or cu.sweep)")
    prediction = next((i for i, c in enumerate(cells) if c.cell_type == "code"
                       and re.search(r"^my_prediction\s*=", c.source, re.M)), None)
    measured = next((i for i, c in enumerate(cells) if c.cell_type == "code"
                     and "cu.check_prediction(my_prediction" in c.source), None)
    if prediction is not None and not re.search(r"^my_prediction\s*=\s*None\b", cells[prediction].source, re.M):
        problems.append("the prediction cell is `my_prediction = None  # your guess: ...` (read as "
                        "'no prediction recorded' until the learner writes a number)")
    problems += verdicts_by_hand(code)
    if "cu.reading(" not in source:
        problems.append("print what a result means with cu.reading(result, faster=..., slower=..., "
                        "not_resolvable=..., control_failed=...)")
    if prediction is None or measured is None or measured < prediction:
        problems.append("record a prediction (my_prediction = ...) before the measurement and print it "
                        "beside the result with cu.check_prediction(my_prediction, ...)")
    if source.count("cu.profile_table(") > 1:
        problems.append("at most one profiler table (cu.profile_table) per lesson")
    if "torch.profiler" in source and "torch.profiler" not in ALLOWED.get(slug, ()):
        problems.append("profile with cu.profile_table, not torch.profiler directly")
    words = prose_words(nb)
    if words > MAX_WORDS:
        problems.append(f"{words} words of prose: the limit is {MAX_WORDS}")
    if f'cu.save("{slug}"' not in source:
        problems.append(f'the lesson saves its results with cu.save("{slug}", ...)')
    if any(c.get("outputs") or c.get("execution_count") for c in code):
        problems.append("outputs must be stripped")
    return problems


def exercise_problems(cells) -> list[str]:
    """Autograded exercises live in The trick (the lesson then times them), written questions in
    Exercises; headings are numbered in order and carry the points of the cells below them."""
    problems, section, heading = [], None, None
    points: dict[str, float] = {}
    numbers = {"Exercise": [], "Question": []}
    for i, c in enumerate(cells):
        if c.cell_type == "markdown":
            for line in c.source.splitlines():
                if line.startswith("## "):
                    section, heading = line[3:].strip(), None
                for kind, pattern in (("Exercise", EXERCISE), ("Question", QUESTION)):
                    if line.startswith(f"### {kind}"):
                        m = pattern.match(line.strip())
                        if not m:
                            problems.append(f"cell {i}: write the heading as '### {kind} N — Title (P points)', "
                                            f"got {line.strip()!r}")
                            continue
                        heading = line.strip()
                        numbers[kind].append(int(m.group(1)))
                        points[heading] = -float(m.group(2))
                        want = "The trick" if kind == "Exercise" else "Exercises"
                        if section != want:
                            problems.append(f"cell {i}: {heading!r} belongs under '## {want}', not '## {section}'")
        g = nbg(c)
        if not g.get("grade"):
            continue
        written = c.cell_type == "markdown"
        if written and g.get("points") != WRITTEN_POINTS:
            problems.append(f"cell {i}: a written answer is worth {WRITTEN_POINTS} points, got {g.get('points')}")
        want = "Exercises" if written else "The trick"
        if section != want:
            problems.append(f"cell {i}: {'written answers' if written else 'autograded tests'} belong under "
                            f"'## {want}', not '## {section}'")
        if heading is None:
            problems.append(f"cell {i}: a graded cell without an '### Exercise' or '### Question' heading above it")
        else:
            points[heading] += g.get("points") or 0
    for kind, found in numbers.items():
        if found != list(range(1, len(found) + 1)):
            problems.append(f"{kind} headings must be numbered 1, 2, … in order, got {found}")
    problems += [f"{h!r}: the heading's points differ from its graded cells' by {-v:g}"
                 for h, v in points.items() if v != 0]
    return problems


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.parent.name)
def test_lesson_anatomy(path):
    assert path.stem == path.parent.name, "nbgrader needs solutions/NN_slug/NN_slug.ipynb"
    problems = anatomy_problems(nbformat.read(path, as_version=4), path.stem)
    assert not problems, "\n".join(problems)


def test_the_anatomy_check_can_fail():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 99 · Nothing " + "word " * 3001),
                                         nbformat.v4.new_code_cell("import time"),
                                         nbformat.v4.new_code_cell("time.time()"),
                                         nbformat.v4.new_code_cell("cu.profile_table(f)\ncu.profile_table(g)"),
                                         nbformat.v4.new_markdown_cell("Read it."),
                                         nbformat.v4.new_code_cell('if c.verdict == "faster":\n    pass')])
    problems = "\n".join(anatomy_problems(nb, "99_nothing"))
    for expected in ("badge", "level-2 headings", "setup cell", "2 autograded", "timed by hand",
                     "cu.save", "preceded by a sentence", "my_prediction", "one profiler table",
                     "words of prose", "compares a verdict by hand", "cu.reading("):
        assert expected in problems


@pytest.mark.parametrize("line", [
    'if c.verdict == "faster":', "if step_time.resolved:", 'print({"faster": "x"}.get(c.verdict, "y"))',
    'print(TEXT[c.verdict])', 'ok = [b for b, v in verdict.items() if v == "slower"]',
    'if v in ("faster", "slower"):', "if c.verdict not in GOOD:",
])
def test_verdicts_read_by_hand_are_caught(line):
    cell = nbformat.v4.new_code_cell(line)
    assert verdicts_by_hand([cell]), line


def test_a_reading_is_not_caught():
    cell = nbformat.v4.new_code_cell('print(cu.reading(c, faster="a", slower="b", not_resolvable="c", '
                                     'control_failed="d"))\nprint(c.summary(), c.verdict)')
    assert verdicts_by_hand([cell]) == []


@pytest.mark.parametrize("path", RELEASED, ids=lambda p: p.parent.name)
def test_prose_budget_of_each_release(path):
    """Print every lesson's word count (pytest -s shows it); fail above the design's limit."""
    words = prose_words(nbformat.read(path, as_version=4))
    print(f"{path.parent.name}: {words} words of prose (limit {MAX_WORDS})")
    assert words <= MAX_WORDS, f"{path.parent.name}: {words} words of prose, over the limit of {MAX_WORDS}"


@pytest.mark.parametrize("path", SOLUTIONS + RELEASED, ids=lambda p: f"{p.parts[-3]}/{p.stem}")
def test_notebooks_are_stripped_and_valid(path):
    nb = json.loads(path.read_text())
    for c in nb["cells"]:
        assert not c.get("outputs") and not c.get("execution_count"), f"{path}: outputs not stripped"
    nbformat.validate(nbformat.reads(path.read_text(), as_version=4))


def test_repository_url_is_one_constant():
    """Badges and install lines everywhere use cu.REPO_URL and nothing else."""
    urls = set()
    for path in [ROOT / "README.md", *SOLUTIONS, *RELEASED]:
        text = path.read_text()
        urls |= set(re.findall(r"github\.com/([\w.-]+/[\w.-]+?)(?:\.git|/blob|\"|\)|\\|\s)", text))
    assert urls <= {GITHUB}, f"other repository URLs found: {urls - {GITHUB}}"
    for path in SOLUTIONS + RELEASED:
        assert cu.REPO_URL in path.read_text() and GITHUB in path.read_text()


def test_misplaced_exercises_and_odd_points_are_caught():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    test = code("assert True")
    test.metadata["nbgrader"] = {"grade": True, "locked": True, "points": 2, "grade_id": "t"}
    answer = md("answer")
    answer.metadata["nbgrader"] = {"grade": True, "solution": True, "points": 2, "grade_id": "q"}
    cells = [md("## The trick"), md("### Exercise 2 — Late (3 points)"), test,
             md("## Exercises"), md("### Question — No number (2 points)"), answer]
    problems = "\n".join(exercise_problems(cells))
    for expected in ("numbered 1, 2", "heading's points differ", "'### Question N — Title (P points)'",
                     "worth 3 points"):
        assert expected in problems, (expected, problems)


def test_a_setup_cell_that_drifts_from_the_builder_s_is_caught():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    old = setup_source(1).replace(f"@v{cu.__version__}", "").replace(", cpu_threads=1", "")  # unpinned, unthreaded
    for source, expected in ((old, ("pin this release", "byte for byte")), (setup_source(None), ("byte for byte",)),
                             (setup_source(1), ())):
        cell = code(source)
        cell.metadata["nbgrader"] = {"locked": True, "grade_id": "setup"}
        problems = "\n".join(anatomy_problems(nbformat.v4.new_notebook(cells=[md("# 99 · X"), cell]), "99_x"))
        for want in expected:
            assert want in problems, (want, problems)
        if not expected:
            assert "setup cell" not in problems, problems
    assert setup_source(None) == setup_source(1).split("env = ")[0] + "env = cu.setup(seed=0)"


def test_threads_are_pinned_by_setup_not_by_a_lesson():
    pin = nbformat.v4.new_code_cell('if env.device.type == "cpu":\n    env.set_threads(1)')
    nb = nbformat.v4.new_notebook(cells=[pin])
    assert "pinned once, by cu.setup(cpu_threads=1)" in "\n".join(anatomy_problems(nb, "99_x"))
    assert "env.set_threads(" not in "\n".join(anatomy_problems(nb, "00_measuring"))


def test_the_builder_writes_the_closing_cells():
    from tools.notebook_builder import CLOSING, Lesson

    lesson = Lesson("99_x", "X")
    lesson.closing("step_time", step_time="step_time", peak_memory="peak")
    md, code = lesson.cells
    assert md.source == CLOSING
    assert code.source == ('cu.references("99_x")\n_ = cu.save("99_x", env, headline="step_time",\n'
                           "            step_time=step_time,\n            peak_memory=peak)")
    with pytest.raises(ValueError, match="headline"):
        lesson.closing("nope", step_time="step_time")
