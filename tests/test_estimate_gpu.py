"""tools/estimate_gpu.py: every lesson sized from its own parts, the whole reference run within one window."""

import json
import re
from pathlib import Path

from tools import estimate_gpu as eg
from tools.run_notebooks import select_lessons

ROOT = Path(__file__).resolve().parents[1]


def test_every_lesson_has_its_own_figures():
    slugs = [p.parent.name for p in select_lessons(None)]
    assert sorted(eg.COMPUTE) == sorted(slugs), "a lesson without sizing figures would be estimated by DEFAULT"
    for slug, c in eg.COMPUTE.items():
        assert c.note and c.arm_s > 0, slug


def test_the_costly_parts_are_counted_where_the_lessons_have_them():
    c = eg.COMPUTE
    assert c["06_cudnn_benchmark"].forks > 0 and c["10_distributed_data_parallel"].launches > 0
    assert c["18_pytorch2_speedups"].cold_compiles > 0 and c["19_capstone"].data_s > 0


def test_all_lessons_fit_one_window_and_the_readme_says_the_estimator_s_figure(capsys):
    totals = eg.lesson_seconds()
    total = sum(totals.values())
    assert total <= eg.TARGET_S, f"{total:.0f} s: over the {eg.TARGET_S:.0f} s a reference window holds"
    assert eg.main([]) == 0
    out = capsys.readouterr().out
    printed = re.search(r"\((\d+\.\d) min; target 9.5 min: within\)", out)
    assert printed, out[-400:]
    readme = (ROOT / "README.md").read_text()
    said = re.search(r"about (\d+(?:\.\d)?) min in all on an H100/H200", readme)
    assert said and abs(float(said.group(1)) - total / 60) <= 0.5, (said and said.group(1), total / 60)


def test_the_measure_hook_logs_every_measurement_it_wraps(tmp_path, monkeypatch):
    """``--measure`` wraps course_utils.measure.engine.measure in each lesson's kernel: the wrapper must fit it."""
    import course_utils as cu
    import course_utils.measure.engine as engine

    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("ESTIMATE_LOG", str(log))
    monkeypatch.setattr(engine, "measure", engine.measure)  # restored after the test, whatever the hook does
    exec(eg.HOOK, {})
    cu.compare(lambda: None, lambda: None, rounds=6, budget=0.05, progress=False)
    [entry] = [json.loads(line) for line in log.read_text().splitlines()]
    assert entry["arms"] == 2 and entry["rounds_given"] == 6 and entry["rounds"] == 6 and entry["budget"] == 0.05
