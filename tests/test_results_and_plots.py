import json

import pytest

import course_utils as cu
from course_utils.results import machine_id


@pytest.fixture
def env():
    return cu.setup(verbose=False)


def fake_comparison(speedup=1.9, ci=(1.8, 2.0), verdict="faster"):
    return cu.Comparison(names=("fp32", "bf16"), speedup=speedup, ci=ci, aa_speedup=1.0,
                         aa_ci=(0.97, 1.03), verdict=verdict, median_s=(0.02, 0.01), cv=(0.05, 0.04),
                         rounds=5, calls_per_round=1, num_threads=1, device="cpu",
                         ratios=[speedup] * 5, aa_ratios=[1.0] * 5)


def test_save_writes_json_with_the_environment_record(tmp_path, env):
    path = cu.save("04_mixed_precision", env, headline="step", root=tmp_path,
                   step=fake_comparison(), memory=cu.Effect("saved activations", 0.54),
                   batch_size=64)
    assert path == tmp_path / machine_id(env.record) / "04_mixed_precision.json"
    d = json.loads(path.read_text())
    assert d["env"]["torch"] == env.record["torch"] and d["profile"] == "smoke"
    assert d["measurements"]["step"]["kind"] == "comparison"
    assert d["measurements"]["memory"]["value"] == 0.54 and d["measurements"]["batch_size"] == 64
    assert d["claim"] == cu.CLAIMS["04_mixed_precision"]
    with pytest.raises(ValueError, match="headline 'nope'"):
        cu.save("04_mixed_precision", env, headline="nope", root=tmp_path, step=1)


def test_scoreboard_puts_measurements_beside_claims(tmp_path, env):
    assert "No results saved yet" in str(cu.scoreboard(tmp_path))
    cu.save("04_mixed_precision", env, headline="step", root=tmp_path, step=fake_comparison())
    cu.save("08_activation_checkpointing", env, headline="mem", root=tmp_path,
            mem=cu.Effect("saved activations, plain / checkpointed", 12.0))
    ref = dict(env.record, device="cuda", gpu_name="NVIDIA H200")
    ref_env = cu.Env(device=env.device, profile="gpu", seed=0, record=ref)
    cu.save("04_mixed_precision", ref_env, headline="step", root=tmp_path / "reference",
            step=fake_comparison(2.5, (2.4, 2.6)))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "x.json").write_text("{not json")
    board = cu.scoreboard(tmp_path)
    text = str(board)
    assert "1.90× [1.80, 2.00] faster" in text and cu.CLAIMS["04_mixed_precision"] in text
    assert "nvidia-h200 (reference)" in text and "12×" in text
    assert board.to_markdown().count("\n") == 2 + 3
    ax = board.plot(tmp_path / "chart.png")
    assert (tmp_path / "chart.png").exists() and len(ax.containers) == 3
    refs = cu.references("04_mixed_precision", root=tmp_path, verbose=False)
    assert len(refs) == 1 and refs[0]["machine"] == "nvidia-h200"


def test_references_say_when_there_are_none(tmp_path, capsys):
    assert cu.references("06_cudnn_benchmark", root=tmp_path) == []
    assert "No reference result" in capsys.readouterr().out


def test_claims_cover_every_lesson():
    assert len([k for k in cu.CLAIMS if k[:2].isdigit() and 1 <= int(k[:2]) <= 17]) == 17


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
