import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import course_utils as cu
from course_utils.results.store import machine_id

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def env():
    return cu.setup(verbose=False)


def fake_comparison(speedup=1.9, ci=(1.8, 2.0), verdict="faster"):
    return cu.Comparison(names=("fp32", "bf16"), speedup=speedup, ci=ci, aa_speedup=1.0,
                         aa_ci=(0.97, 1.03), verdict=verdict, median_s=(0.02, 0.01), cv=(0.05, 0.04),
                         rounds=5, calls_per_round=1, num_threads=1, device="cpu",
                         ratios=[speedup] * 5, aa_ratios=[1.0] * 5)


def as_env(env, profile, **record):
    """The session's Env in another profile (and, with ``record``, on other hardware)."""
    return cu.env.Env(device=env.device, profile=profile, seed=0, record=dict(env.record, **record))


def comparison(speedup=1.9, ci=(1.8, 2.0), verdict="faster", interval="95 % order-statistic CI"):
    """A comparison as saved (``Comparison.to_dict()``), without the clock."""
    d = {"kind": "comparison", "names": ["fp32", "bf16"], "speedup": speedup, "ci": list(ci),
         "aa_speedup": 1.0, "aa_ci": [0.97, 1.03], "verdict": verdict}
    return d if interval is None else {**d, "interval": interval}


TARGET = {"kind": "target_comparison", "names": ["constant", "1cycle"], "ratio": 3.0, "low": 2.5, "high": 3.6,
          "seeds": [0, 1, 2], "verdict": "faster", "interval": "range over seeds (not a confidence interval)"}


def test_save_writes_json_keyed_by_profile(tmp_path, env):
    path = cu.save("04_mixed_precision", env, headline="step", root=tmp_path,
                   step=comparison(), memory=cu.Effect("saved activations", 0.54), batch_size=64)
    assert path == tmp_path / machine_id(env.record) / "04_mixed_precision.smoke.json"
    d = json.loads(path.read_text())
    assert d["env"]["torch"] == env.record["torch"] and d["profile"] == "smoke"
    assert d["measurements"]["step"]["kind"] == "comparison"
    assert d["measurements"]["memory"]["value"] == 0.54 and d["measurements"]["batch_size"] == 64
    assert d["claim"] == cu.results.store.CLAIMS["04_mixed_precision"]
    with pytest.raises(ValueError, match="headline 'nope'"):
        cu.save("04_mixed_precision", env, headline="nope", root=tmp_path, step=1)
    with pytest.raises(ValueError, match="lesson slug"):
        cu.save("../04", env, headline="step", root=tmp_path, step=1)


def test_a_smoke_run_never_replaces_a_cpu_or_gpu_result(tmp_path, env):
    cpu = cu.save("04_mixed_precision", as_env(env, "cpu"), headline="step", root=tmp_path,
                  step=comparison(1.5, (1.4, 1.6)))
    before = cpu.read_bytes()
    smoke = cu.save("04_mixed_precision", as_env(env, "smoke"), headline="step", root=tmp_path,
                    step=comparison(9.0, (1.0, 20.0), "not resolvable on this hardware"))
    assert smoke != cpu and cpu.read_bytes() == before
    board = cu.results.report.scoreboard(tmp_path)  # the largest profile per lesson and machine, the smoke run counted
    assert [r["profile"] for r in board.rows] == ["cpu"] and "1.50×" in str(board)
    assert len(board.hidden) == 1 and "all_profiles=True" in str(board)
    everything = cu.results.report.scoreboard(tmp_path, all_profiles=True)
    assert [r["profile"] for r in everything.rows] == ["cpu", "smoke"] and not everything.hidden
    cu.save("04_mixed_precision", as_env(env, "gpu"), headline="step", root=tmp_path, step=comparison(2.2))
    assert [r["profile"] for r in cu.results.report.scoreboard(tmp_path).rows] == ["gpu"]


def test_scoreboard_names_each_interval_for_what_it_is(tmp_path, env):
    assert "No results saved yet" in str(cu.results.report.scoreboard(tmp_path))
    cu.save("04_mixed_precision", env, headline="step", root=tmp_path, step=comparison())
    cu.save("01_lr_schedules", env, headline="steps", root=tmp_path, steps=TARGET)
    cu.save("08_activation_checkpointing", env, headline="mem", root=tmp_path,
            mem=cu.Effect("saved activations, plain / checkpointed", 12.0))
    cu.save("00_measuring", env, headline="naive", root=tmp_path,
            naive=cu.Effect("naive A/A", 1.3, 0.9, 1.8, interval="min-max over 5 pairs"))
    cu.save("06_cudnn_benchmark", env, headline="old", root=tmp_path, old=comparison(1.2, (1.1, 1.3), interval=None))
    cu.save("04_mixed_precision", as_env(env, "gpu", device="cuda", gpu_name="NVIDIA H200"), headline="step",
            root=tmp_path / "reference", step=comparison(2.5, (2.4, 2.6)))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "x.json").write_text("{not json")
    (tmp_path / "reference" / "nvidia-h200" / "environment.json").write_text('{"gpu": "H200"}')  # not a result
    board = cu.results.report.scoreboard(tmp_path)
    rows = {(r["notebook"], r["reference"]): r for r in board.rows}
    assert len(board.rows) == 6
    assert rows["04_mixed_precision", False]["interval"] == "95 % order-statistic CI"
    target = rows["01_lr_schedules", False]
    assert target["interval"] == "range over seeds (not a confidence interval)"
    assert "95" not in target["interval"] and "3.00× [2.50, 3.60] over 3 seeds: faster" == target["measured"]
    assert rows["08_activation_checkpointing", False]["interval"] == "single value, no interval"
    assert rows["00_measuring", False]["interval"] == "min-max over 5 pairs"
    assert "bootstrap" in rows["06_cudnn_benchmark", False]["interval"]
    text = str(board)
    assert "1.90× [1.80, 2.00] faster" in text and cu.results.store.CLAIMS["04_mixed_precision"] in text
    assert "nvidia-h200 (reference)" in text and "12×" in text
    assert board.to_markdown().count("\n") == 2 + 6 and "| interval |" in board.to_markdown()
    assert "range over seeds" in board._repr_html_()
    ax = board.plot(tmp_path / "chart.png")
    assert (tmp_path / "chart.png").exists() and len(ax.containers) == 6  # every ratio headline
    beside = "\n".join(t.get_text() for t in ax.texts)
    assert "range over seeds (not a confidence interval)" in beside and "95 % order-statistic CI" in beside
    assert "source: super-convergence" in beside and "source: ~2×" in beside
    assert "95 % CI" not in ax.get_title()


def test_scoreboard_reads_the_interval_the_engine_recorded(tmp_path, env):
    """Real engine objects (injected times, no clock): the row says what the engine says."""
    rounds = 15
    base = [0.02 * (1 + 0.01 * i) for i in range(rounds)]
    comp = cu.measure.analysis.analyze(base, [t * 1.001 for t in base], [t / 2 for t in base], names=("fp32", "bf16"))
    steps = cu.compare_targets(
        cu.TargetResult(label="constant", target=0.9, seeds=[0, 1, 2], steps=[300, 320, 310], step_time=0.01),
        cu.TargetResult(label="1cycle", target=0.9, seeds=[0, 1, 2], steps=[100, 110, 120], step_time=0.01))
    cu.save("04_mixed_precision", env, headline="step", root=tmp_path, step=comp)
    cu.save("01_lr_schedules", env, headline="steps", root=tmp_path, steps=steps)
    rows = {r["notebook"]: r for r in cu.results.report.scoreboard(tmp_path).rows}
    assert rows["04_mixed_precision"]["interval"] == comp.interval and comp.interval
    assert rows["04_mixed_precision"]["measured"].startswith("2.00×")
    assert rows["01_lr_schedules"]["interval"] == steps.interval and "seeds" in steps.interval
    assert rows["01_lr_schedules"]["metric"] == steps.metric == "steps to target"  # no step-time comparison given
    assert rows["01_lr_schedules"]["value"] == (steps.ratio, steps.low, steps.high)


def reference_env(env, gpu):
    return as_env(env, "gpu", device="cuda", gpu_name=gpu)


def test_references_come_from_the_checkout_then_the_package(tmp_path, env, monkeypatch, capsys):
    checkout, packaged = tmp_path / "results", tmp_path / "site" / "reference_results"
    cu.save("04_mixed_precision", reference_env(env, "NVIDIA H200"), headline="step", root=checkout / "reference",
            step=comparison(2.5, (2.4, 2.6)))
    for gpu, speedup in (("NVIDIA H200", 9.9), ("NVIDIA A100", 2.0)):
        cu.save("04_mixed_precision", reference_env(env, gpu), headline="step", root=packaged,
                step=comparison(speedup, (speedup - 0.1, speedup + 0.1)))
    monkeypatch.setattr(cu.results.store, "packaged_references_dir", lambda: packaged)
    found = {d["machine"]: d for d in cu.references("04_mixed_precision", root=checkout)}
    assert set(found) == {"nvidia-h200", "nvidia-a100"}
    assert found["nvidia-h200"]["measurements"]["step"]["speedup"] == 2.5  # the checkout's copy wins
    out = capsys.readouterr().out
    assert "2.50× [2.40, 2.60] faster (95 % order-statistic CI)" in out and "9.90" not in out
    empty = tmp_path / "elsewhere"  # no checkout (Colab): the packaged references alone
    assert sorted(d["measurements"]["step"]["speedup"] for d in cu.references("04_mixed_precision", root=empty,
                                                                             verbose=False)) == [2.0, 9.9]
    assert cu.references("06_cudnn_benchmark", root=empty, verbose=False) == []
    board = cu.results.report.scoreboard(empty)
    assert [(r["machine"], r["reference"]) for r in board.rows] == [("nvidia-a100", True), ("nvidia-h200", True)]


def test_references_say_when_there_are_none(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cu.results.store, "packaged_references_dir", lambda: None)
    assert cu.references("06_cudnn_benchmark", root=tmp_path) == []
    assert "No reference result" in capsys.readouterr().out


def test_reference_results_ship_in_the_wheel(tmp_path, env):
    """`pip install` of the course (Colab: no checkout) brings results/reference/ as package data."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "course_utils", src / "course_utils", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "results" / "reference", src / "results" / "reference",
                    ignore=shutil.ignore_patterns("*.json"))  # only the test's own reference below
    cu.save("04_mixed_precision", reference_env(env, "Test GPU"), headline="step",
            root=src / "results" / "reference", step=comparison(2.5, (2.4, 2.6)))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "--disable-pip-version-check", "-q", str(src), "-w", str(tmp_path / "whl")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = (tmp_path / "whl").glob("course_utils-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "course_utils/reference_results/test-gpu/04_mixed_precision.gpu.json" in names, names
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:  # installed as pip would, then read with no checkout around
        zf.extractall(site)
    code = ("import course_utils as cu; "
            "print([d['machine'] for d in cu.references('04_mixed_precision', verbose=False)])")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(site), "COURSE_RESULTS_DIR": str(tmp_path / "none")})
    assert run.returncode == 0 and run.stdout.strip() == "['test-gpu']", run.stdout + run.stderr


def test_the_test_session_writes_results_into_a_temporary_folder():
    """tests/conftest.py points COURSE_RESULTS_DIR (inherited by every kernel) away from results/."""
    folder = cu.results.store.results_dir().resolve()
    assert folder == Path(os.environ["COURSE_RESULTS_DIR"]).resolve()
    assert not folder.is_relative_to(ROOT), folder


def test_results_of_a_notebook_nbgrader_runs_never_go_to_the_course(monkeypatch, tmp_path):
    monkeypatch.delenv("COURSE_RESULTS_DIR")
    monkeypatch.chdir(ROOT / "notebooks")  # inside the checkout: results/ of the course ...
    assert cu.results.store.results_dir() == ROOT / "results"
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")  # ... but not while nbgrader runs it
    assert not cu.results.store.results_dir().resolve().is_relative_to(ROOT)


def test_claims_cover_every_lesson():
    assert len([k for k in cu.results.store.CLAIMS if k[:2].isdigit() and 1 <= int(k[:2]) <= 17]) == 17


def test_plots_draw_what_they_are_given():
    h1 = cu.History(label="a", loss=[2.0, 1.0, 0.5], lr=[0.1] * 3, step_time=[0.1] * 3,
                    eval_step=[3], eval_accuracy=[0.8], eval_time=[0.3])
    ax = cu.plot_curves({"a": h1, "b": h1}, x="time", y="loss")
    assert len(ax.lines) == 2 and ax.get_xlabel() == "training time (s)"
    ax = cu.plot_curves([h1], y="accuracy", target=0.9)
    assert len(ax.lines) == 2
    with pytest.raises(ValueError):
        cu.plot_curves([h1], x="epochs")
    assert len(cu.plot_lr({"1cycle": [0.1, 0.5, 0.1]}).lines) == 1
    ax = cu.plot_comparison([fake_comparison(), fake_comparison(1.0, (0.9, 1.1), "not resolvable")])
    assert len(ax.containers) == 4


def test_a_target_never_reached_by_the_baseline_is_saved_listed_and_not_drawn(tmp_path, env):
    base = cu.TargetResult("raw", 0.8, [0, 1, 2], [None, None, None], 0.01)
    trick = cu.TargetResult("standardised", 0.8, [0, 1, 2], [100, 120, 90], 0.01)
    tc = cu.compare_targets(base, trick)
    assert "∞" in tc.summary() or "never" in tc.summary(), tc.summary()
    assert "∞" in str(tc)
    cu.save("17_input_normalization", env, headline="time_to_target", root=tmp_path, time_to_target=tc)
    board = cu.results.report.scoreboard(tmp_path)
    assert "raw never reached 80% on any of 3 seeds" in str(board)  # said once, not "inf× [inf, inf]"
    assert board.plot() is not None


def test_assert_close_keeps_python_floats_in_float64():
    with pytest.raises(AssertionError):
        cu.assert_close(1.0 + 1e-9, 1.0, rtol=1e-12, atol=0.0)


def test_the_scoreboard_chart_names_each_metric_and_colours_memory_apart_from_speed(tmp_path, env):
    """Labels, colours and legend as the chart computes them (no pixels): a memory ratio is never 'faster'."""
    from course_utils.results.report import MEMORY_COLOR, OTHER_COLOR, SPEED_COLORS

    cu.save("04_mixed_precision", env, headline="step_time", root=tmp_path, step_time=comparison())
    cu.save("06_cudnn_benchmark", env, headline="forward", root=tmp_path,
            forward=comparison(0.8, (0.7, 0.9), "slower"))
    cu.save("11_zero_grad_set_to_none", env, headline="step_time", root=tmp_path,
            step_time=comparison(1.01, (0.95, 1.1), "not resolvable on this hardware"))
    cu.save("01_lr_schedules", env, headline="time_to_target", root=tmp_path, time_to_target=TARGET)
    cu.save("08_activation_checkpointing", env, headline="saved_activations", root=tmp_path,
            saved_activations=cu.Effect("activations saved for backward, plain / checkpointed", 3.0))
    cu.save("09_gradient_accumulation", env, headline="peak", root=tmp_path,
            peak=cu.Effect("peak memory of a training step, one batch / 4 micro-batches", 0.5))
    cu.save("15_no_bias_before_batchnorm", env, headline="params", root=tmp_path,
            params=cu.Effect("weights, with bias / without", 1.02, metric="parameter count"))
    cu.save("00_measuring", env, headline="naive", root=tmp_path,
            naive=cu.Effect("naive A/A timing (truth 1.0)", 1.3, 0.9, 1.8, interval="min-max over pairs"))
    board = cu.results.report.scoreboard(tmp_path)
    chart = board.chart()
    drawn = {label.split(" · ")[0]: (label, color) for (label, *_), color in zip(chart.bars, chart.colors)}
    machine = machine_id(env.record)
    assert drawn["04_mixed_precision"] == (f"04_mixed_precision · step time (bf16 vs fp32) · {machine} · smoke",
                                           SPEED_COLORS["faster"])
    assert drawn["06_cudnn_benchmark"] == (f"06_cudnn_benchmark · forward time (bf16 vs fp32) · {machine} · smoke",
                                           SPEED_COLORS["slower"])
    assert drawn["11_zero_grad_set_to_none"][1] == SPEED_COLORS["not resolved"]
    assert drawn["01_lr_schedules"] == (f"01_lr_schedules · time to target (1cycle vs constant) · {machine} · smoke",
                                         SPEED_COLORS["faster"])
    # memory: its own colour whichever way the ratio points (3× fewer bytes is not "faster", 0.5 not "slower")
    assert drawn["08_activation_checkpointing"] == (
        f"08_activation_checkpointing · saved bytes · {machine} · smoke", MEMORY_COLOR)
    assert drawn["09_gradient_accumulation"] == (f"09_gradient_accumulation · peak memory · {machine} · smoke",
                                                 MEMORY_COLOR)
    assert drawn["15_no_bias_before_batchnorm"][0].split(" · ")[1] == "parameter count"
    assert drawn["15_no_bias_before_batchnorm"][1] == MEMORY_COLOR
    assert drawn["00_measuring"][1] == OTHER_COLOR  # a ratio without a verdict claims no speed-up either
    assert MEMORY_COLOR not in SPEED_COLORS.values() and OTHER_COLOR not in SPEED_COLORS.values()
    meanings = dict(chart.legend)
    assert list(meanings) == [*SPEED_COLORS.values(), MEMORY_COLOR, OTHER_COLOR]  # each colour used, once
    assert "verdict faster" in meanings[SPEED_COLORS["faster"]] and "memory" in meanings[MEMORY_COLOR]
    assert "not a speed" in meanings[MEMORY_COLOR]
    # the table names the metric too, and the drawn legend is the computed one
    assert "saved bytes" in str(board) and "| metric |" in board.to_markdown()
    ax = board.plot(tmp_path / "chart.png")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [m for _, m in chart.legend]
    assert [t.get_text() for t in ax.get_yticklabels()] == [label for label, *_ in chart.bars]
    assert "green: faster" not in ax.get_title()  # the legend says it, for every colour used
    beside = "\n".join(t.get_text() for t in ax.texts)
    assert "activations saved for backward, plain / checkpointed" in beside  # which way a memory ratio points
    # a row that never reached its target has no ratio, and still gets a mark and a note (not left out)
    never = {**TARGET, "names": ["batch 64", "batch 512"], "ratio": 0.0, "low": 0.0, "high": 0.0,
             "steps_ratios": [0.0] * 6, "seeds": list(range(6)), "verdict": "slower", "target": 0.8}
    cu.save("03_batch_size", env, headline="time_to_target", root=tmp_path, time_to_target=never)
    board = cu.results.report.scoreboard(tmp_path)
    chart = board.chart()
    assert [r["notebook"] for r in chart.marks] == ["03_batch_size"]
    ax = board.plot(tmp_path / "chart.png")
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1].startswith("03_batch_size · time to target (batch 512 vs batch 64)")
    assert "batch 512 never reached 80% on any of 6 seeds" in "\n".join(t.get_text() for t in ax.texts)
    empty = cu.results.report.scoreboard(tmp_path / "none")
    assert empty.chart().bars == [] and empty.chart().legend == [] and empty.plot() is not None


def test_metric_names_come_from_the_measurement():
    from course_utils.results import labels

    assert labels.metric_name(comparison(), "step_time") == "step time"
    assert labels.metric_name(comparison(), "conversion") == "conversion time"
    assert labels.metric_name(comparison()) == "time"
    assert labels.metric_name({**TARGET, "metric": "steps to target"}) == "steps to target"
    assert labels.metric_name(TARGET) == "time to target"
    for description, unit, metric in [
            ("bytes saved for backward per evaluation batch of 256 with autograd on", " MiB", "saved bytes"),
            ("saved activation bytes, bf16 ÷ fp32", "×", "saved bytes"),
            ("peak CUDA memory of an evaluation pass, autograd on / your evaluate", "×", "peak memory"),
            ("gradient memory freed between steps by set_to_none=True", " MiB", "memory"),
            ("largest checkpointed batch within the plain model's memory, as a multiple of 64", "×", "largest batch"),
            ("trainable parameters, plain / LoRA", "×", "parameter count"),
            ("naive A/A timing, pairs 2 onwards", "×", "time")]:
        effect = cu.Effect(description, 2.0, unit=unit).to_dict()
        assert labels.metric_name(effect) == metric, description
        assert labels.is_memory(effect) == (metric != "time"), description
    assert cu.results.store.Effect is cu.Effect is labels.Effect  # still importable from where it was
    assert cu.results.report.describe is labels.describe and cu.results.report.interval_kind is labels.interval_kind


def test_a_partial_speed_run_is_kept_but_not_on_the_scoreboard(tmp_path, env):
    effect = cu.Effect("median time to 62%, stack (1/1 seeds reached it)", 3.0, unit="s", metric="time to target")
    cu.save("speedrun_cli", env, headline="time_to_target", root=tmp_path, time_to_target=effect, partial=True)
    assert cu.results.report.scoreboard(tmp_path).rows == []
    cu.save("speedrun_cli", env, headline="time_to_target", root=tmp_path, time_to_target=effect, partial=False)
    (row,) = cu.results.report.scoreboard(tmp_path).rows
    assert row["claim"].startswith("make speedrun, the capstone's stack")


def test_save_leaves_out_none_but_not_a_none_headline(tmp_path, env, capsys):
    path = cu.save("04_mixed_precision", env, headline="step", root=tmp_path, step=comparison(), peak=None, extra=2)
    saved = json.loads(path.read_text())["measurements"]
    assert "peak" not in saved and saved["extra"] == 2
    assert "left out, None: peak" in capsys.readouterr().out
    with pytest.raises(ValueError, match="is None"):
        cu.save("04_mixed_precision", env, headline="step", root=tmp_path, step=None)


def test_lr_trace_reads_the_lr_before_each_step_without_training():
    import torch

    opt = torch.optim.SGD(torch.nn.Linear(1, 1).parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    trace = cu.lr_trace(opt, sched, 4)
    assert trace == pytest.approx([0.05, 0.075, 0.1, 0.1])
    weight = torch.nn.Linear(1, 1)
    assert cu.lr_trace(torch.optim.SGD(weight.parameters(), lr=0.3), None, 3) == [0.3, 0.3, 0.3]
    assert cu.lr_trace(torch.optim.SGD(weight.parameters(), lr=0.3), None, 0) == []
    weight(torch.ones(1, 1)).sum().backward()
    before = weight.weight.detach().clone()
    with pytest.raises(ValueError, match="throw-away"):
        cu.lr_trace(torch.optim.SGD(weight.parameters(), lr=0.3), None, 3)
    assert torch.equal(weight.weight, before)  # refused before any step
    with pytest.raises(ValueError, match="steps"):
        cu.lr_trace(opt, sched, -1)
