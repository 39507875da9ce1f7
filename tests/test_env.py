import pytest
import torch

import course_utils as cu


def test_invalid_profile_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("COURSE_PROFILE", "turbo")
    with pytest.raises(ValueError, match="turbo.*smoke, cpu, gpu"):
        cu.get_profile()
    with pytest.raises(ValueError, match="smoke, cpu, gpu"):
        cu.setup(verbose=False)


def test_profile_rules(monkeypatch):
    monkeypatch.delenv("COURSE_PROFILE", raising=False)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert cu.get_profile() == "smoke"
    monkeypatch.delenv("NBGRADER_EXECUTION")
    assert cu.get_profile(torch.device("cpu")) == "cpu"
    monkeypatch.setenv("COURSE_PROFILE", "gpu")
    assert cu.get_profile(torch.device("cpu")) == "gpu"


def test_setup_seeds_and_prints_the_record(capsys):
    env = cu.setup(seed=3)
    out = capsys.readouterr().out
    a = torch.rand(3)
    cu.setup(seed=3, verbose=False)
    assert torch.equal(a, torch.rand(3))
    assert env.profile == "smoke" and env.device.type == "cpu"
    for key in ("profile", "device", "torch", "TF32", "real bf16", "Colab", "threads"):
        assert key in out
    rec = env.record
    for key in ("gpu_name", "gpu_capability", "cuda", "cudnn", "cpu_count", "torch_threads",
                "tf32_matmul", "tf32_cudnn", "bf16_real", "colab"):
        assert key in rec
    assert rec["torch"] == torch.__version__ and rec["torch_threads"] == torch.get_num_threads()
    assert env.pick(smoke=1, cpu=2, gpu=3) == 1


def test_set_threads_sets_and_records(capsys):
    env = cu.setup(verbose=False)
    before = torch.get_num_threads()
    try:
        env.set_threads(1)
        assert torch.get_num_threads() == 1 and env.record["torch_threads"] == 1
        assert "torch threads set to 1" in capsys.readouterr().out
        with pytest.raises(ValueError, match=">= 1"):
            env.set_threads(0)
    finally:
        torch.set_num_threads(before)
