"""profiling.op_counts (exact operator counts) and stats.mean_ci (a mean beside the median)."""

import collections

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

from course_utils.counters import profiling
from course_utils.measure import stats


def _training_step(set_to_none: bool):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))

    def step():
        F.cross_entropy(model(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=set_to_none)

    step(), step()  # momentum buffers exist; in the baseline, zeroed gradients too
    return step


def test_op_counts_counts_calls_by_name():
    a, b = torch.randn(3, 3), torch.randn(3, 3)
    counts = profiling.op_counts(lambda: (a @ b).add_(1.0).add_(b))
    assert isinstance(counts, collections.Counter)
    assert counts["aten::mm"] == 1 and counts["aten::add_"] == 2
    assert all(name.startswith("aten::") for name in counts)


def test_op_counts_sees_zero_grad_and_accumulate_grad_in_backward():
    baseline, trick = profiling.op_counts(_training_step(False)), profiling.op_counts(_training_step(True))
    extra = baseline - trick
    # 6 parameters: zero_grad(set_to_none=False) zeroes each gradient, and backward adds into it
    assert extra["aten::zero_"] == 6 and trick["aten::zero_"] == 0
    assert extra["aten::add_"] == 6
    assert baseline["aten::addmm"] == trick["aten::addmm"] == 3


def test_op_counts_namespace_and_errors():
    everything = profiling.op_counts(_training_step(False), namespace=None)
    assert any(not name.startswith("aten::") for name in everything)  # profiler markers of zero_grad
    with pytest.raises(TypeError):
        profiling.op_counts(42)


def test_op_counts_is_deterministic_and_leaves_no_mode_behind():
    step = _training_step(True)
    assert profiling.op_counts(step) == profiling.op_counts(step)
    counted = profiling.op_counts(lambda: None)
    assert counted == collections.Counter()
    torch.randn(2) + 1  # outside the mode: nothing recorded anywhere
    assert counted == collections.Counter()


def test_mean_ci_is_pulled_by_a_stall_the_median_ignores():
    rng = np.random.default_rng(0)
    quiet = (1.0 + 0.01 * rng.standard_normal(20)).tolist()
    stalled = quiet[:-1] + [3.0]
    m, lo, hi = stats.mean_ci(quiet)
    assert lo <= m <= hi and hi - lo < 0.02
    m2, lo2, hi2 = stats.mean_ci(stalled)
    assert m2 > m + 0.05 and hi2 - lo2 > 5 * (hi - lo)
    assert abs(np.median(stalled) - np.median(quiet)) < 0.01


@pytest.mark.parametrize("values, level", [([1.0], 0.95), ([1.0, float("nan")], 0.95), ([1.0, 2.0], 1.0),
                                           ([1.0, 2.0], 0.0)])
def test_mean_ci_rejects_bad_input(values, level):
    with pytest.raises(ValueError):
        stats.mean_ci(values, level)


def test_mean_ci_is_reproducible():
    vals = [0.9, 1.1, 1.0, 1.3, 0.95, 1.05]
    assert stats.mean_ci(vals, seed=3) == stats.mean_ci(vals, seed=3)
