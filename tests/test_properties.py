"""The property checks test cells share (course_utils.lesson: properties, restores, opwatch): each catches its case.

Every check is run on a correct function (it passes, and returns the function's result) and on
the wrong answers it exists for (it fails, with a message that names the mistake); a check that
stopped checking fails here.
"""

from __future__ import annotations

import gc
import random

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import course_utils as cu


def model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Sequential(nn.Linear(8, 2)))


# ---------------------------------------------------------------- assert_restores

def evaluate_right(m: nn.Module, x: torch.Tensor) -> torch.Tensor:
    was = [s.training for s in m.modules()]
    m.eval()
    try:
        with torch.no_grad():
            return m(x)
    finally:
        for s, t in zip(m.modules(), was):
            s.training = t


def evaluate_resets_to_train(m, x):  # restores to the default, not to what it found
    m.eval()
    try:
        with torch.no_grad():
            return m(x)
    finally:
        m.train()


def evaluate_no_finally(m, x):  # restored on return only
    was = m.training
    m.eval()
    out = m(x)
    m.train(was)
    return out


class Boom(nn.Module):
    def forward(self, x):
        raise RuntimeError("boom")


def test_restores_passes_a_correct_answer_and_returns_its_result():
    m, x = model(), torch.randn(3, 4)
    out = cu.assert_restores(lambda: evaluate_right(m, x), modules=[m], state=("grad", "train"))
    assert out.shape == (3, 2)


@pytest.mark.parametrize("wrong, needs_raise", [(evaluate_resets_to_train, False), (evaluate_no_finally, True)])
def test_restores_catches_a_reset_to_the_default_and_a_missing_finally(wrong, needs_raise):
    m, x = model(), torch.randn(3, 4)
    boom = nn.Sequential(Boom())
    raises = (lambda: wrong(boom, x)) if needs_raise else None
    mods = [m, boom] if needs_raise else [m]
    with pytest.raises(AssertionError, match="train/eval flags.*finally"):
        cu.assert_restores(lambda: wrong(m, x), modules=mods, state=("train",), raises=raises)
    assert m.training and all(s.training for s in m.modules()), "the check must put the model back"


@pytest.mark.parametrize("key, wrong", [
    ("gc", lambda: (gc.disable(), gc.enable())),
    ("grad", lambda: torch.set_grad_enabled(True)),
    ("anomaly", lambda: torch.autograd.set_detect_anomaly(False)),
    ("rng", lambda: torch.rand(1)),
    ("threads", lambda: torch.set_num_threads(1)),
    ("dtype", lambda: torch.set_default_dtype(torch.float32)),
    ("autocast", lambda: torch.autocast("cpu", dtype=torch.bfloat16).__enter__()),  # entered, never left
])
def test_restores_catches_each_global_setting(key, wrong):
    before = (gc.isenabled(), torch.is_grad_enabled(), torch.is_anomaly_enabled(), torch.get_num_threads(),
              torch.get_default_dtype(), torch.is_autocast_enabled("cpu"))
    with pytest.raises(AssertionError, match="not as before"):
        cu.assert_restores(wrong, state=(key,))
    assert before == (gc.isenabled(), torch.is_grad_enabled(), torch.is_anomaly_enabled(), torch.get_num_threads(),
                      torch.get_default_dtype(), torch.is_autocast_enabled("cpu")), "the check must put settings back"


def test_restores_catches_cleared_caller_hooks_and_requires_grad():
    m = model()

    def clears():
        for s in m.modules():
            s._forward_hooks.clear()

    def unfreezes():
        for p in m.parameters():
            p.requires_grad_(True)

    with pytest.raises(AssertionError, match="hooks"):
        cu.assert_restores(clears, modules=[m], state=("hooks",))
    with pytest.raises(AssertionError, match="requires_grad"):
        cu.assert_restores(unfreezes, modules=[m], state=("requires_grad",))
    assert not m[0]._forward_hooks and all(p.requires_grad for p in m.parameters())


def test_restores_demands_that_the_raising_call_raises_and_rejects_unknown_state():
    with pytest.raises(AssertionError, match="should have raised"):
        cu.assert_restores(lambda: None, state=("gc",), raises=lambda: None)
    with pytest.raises(ValueError, match="unknown state"):
        cu.assert_restores(lambda: None, state=("colour",))


def test_restores_leaves_the_rng_state_it_found():
    torch.manual_seed(3)
    random.seed(3)
    want = torch.rand(1), random.random()
    torch.manual_seed(3)
    random.seed(3)
    cu.assert_restores(lambda: (torch.rand(5), random.random()), state=("gc",))
    assert (torch.rand(1), random.random()) == want


# ---------------------------------------------------------------- device and dtype

def mask_right(x: torch.Tensor) -> torch.Tensor:
    n = x.shape[-1]
    return x.masked_fill(torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1), float("-inf"))


def mask_wrong(x):
    n = x.shape[-1]
    return x.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def rebuilt_wrong(m):
    return nn.Linear(m.in_features, m.out_features).to(DEVICE)  # the machine's device, not the input's


def test_follows_device_passes_a_correct_answer_and_fails_a_machine_device():
    out = cu.assert_follows_device(mask_right, torch.randn(3, 3))
    assert out.device.type in ("meta", "cuda")
    with pytest.raises(AssertionError, match="device"):
        cu.assert_follows_device(mask_wrong, torch.randn(3, 3))
    with pytest.raises(AssertionError, match="device"):
        cu.assert_follows_device(rebuilt_wrong, nn.Linear(3, 2))
    cu.assert_follows_device(lambda m: nn.Linear(m.in_features, m.out_features, device=m.weight.device),
                             nn.Linear(3, 2))


def test_follows_dtype():
    cu.assert_follows_dtype(lambda x: x * 2, torch.ones(3), dtype=torch.bfloat16)
    with pytest.raises(AssertionError, match="float32"):
        cu.assert_follows_dtype(lambda x: x.float() * 2, torch.ones(3))
    with pytest.raises(AssertionError, match="float32"):
        cu.assert_follows_dtype(lambda x: x * torch.ones(3), torch.ones(3), dtype=torch.float16)


# ---------------------------------------------------------------- mutation, syncs, graphs

def test_no_mutation():
    x = torch.tensor([1.0, float("nan"), 3.0])
    out = cu.assert_no_mutation(lambda t: t * 2, x)
    assert out[0] == 2
    with pytest.raises(AssertionError, match="changed its input"):
        cu.assert_no_mutation(lambda ts: ts[0].mul_(2), [torch.ones(2)])
    with pytest.raises(AssertionError, match="changed its input"):
        cu.assert_no_mutation(lambda m: m.weight.data.zero_(), nn.Linear(2, 2))
    with pytest.raises(AssertionError, match="view"):
        cu.assert_no_mutation(lambda t: t.reshape(-1), torch.ones(2, 2))
    cu.assert_no_mutation(lambda t: t.reshape(-1), torch.ones(2, 2), views_ok=True)


def test_no_mutation_of_lists_dicts_and_arrays():
    import numpy as np

    cu.assert_no_mutation(lambda xs, d: sorted(xs)[len(xs) // 2], [3.0, float("nan"), 1.0], {"a": 1})
    with pytest.raises(AssertionError, match="argument 0 .list. in place"):
        cu.assert_no_mutation(lambda xs: xs.sort(), [3, 1, 2])
    with pytest.raises(AssertionError, match="in place"):
        cu.assert_no_mutation(lambda d: d.pop("a"), {"a": 1})
    with pytest.raises(AssertionError, match="ndarray"):
        cu.assert_no_mutation(lambda a: a[:].sort(), np.array([3.0, 1.0, np.nan]))
    cu.assert_no_mutation(lambda a: np.sort(a), np.array([3.0, 1.0, np.nan]))


def test_syncs_at_most():
    m = model()
    cu.assert_syncs_at_most(lambda: torch.stack([p.norm() for p in m.parameters()]).sum().item(), 1)
    with pytest.raises(AssertionError, match=r"4 times \(at most 1"):
        cu.assert_syncs_at_most(lambda: sum(p.norm().item() for p in m.parameters()), 1)


def loop(m: nn.Module, keep: bool) -> list:
    losses = []
    for _ in range(3):
        loss = m(torch.randn(5, 4)).pow(2).mean()
        loss.backward()
        losses.append(loss if keep else loss.detach())
    return losses


def test_keeps_no_graph():
    m = model()
    assert len(cu.assert_keeps_no_graph(lambda: loop(m, keep=False))) == 3
    with pytest.raises(AssertionError, match="3 tensors that carry an autograd graph"):
        cu.assert_keeps_no_graph(lambda: loop(m, keep=True))
    cu.assert_keeps_no_graph(lambda: loop(m, keep=True), allow=3)


# ---------------------------------------------------------------- the operator spy, nested modules

Q = torch.randn(1, 2, 4, 8)


def attention_math(q, k, v):
    return torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1) @ v


@pytest.mark.parametrize("route", [
    lambda q: F.scaled_dot_product_attention(q, q, q),
    lambda q: torch.ops.aten.scaled_dot_product_attention(q, q, q),
    lambda q: torch.ops.aten.scaled_dot_product_attention.default(q, q, q),
    lambda q: torch._C._nn.scaled_dot_product_attention(q, q, q),
])
def test_the_operator_spy_sees_every_route(route):
    with cu.spy(sdpa="aten::*scaled_dot_product*", yours=attention_math) as seen:
        route(Q)
    assert seen.fired
    with pytest.raises(AssertionError, match="re-implemented"):
        seen.assert_not_called("sdpa")


def test_the_operator_spy_is_silent_on_a_real_re_implementation():
    with cu.spy(sdpa="aten::*scaled_dot_product*", yours=attention_math) as seen:
        out = attention_math(Q, Q, Q)
    seen.assert_called("yours")
    seen.assert_not_called("sdpa")
    cu.assert_close(out, F.scaled_dot_product_attention(Q, Q, Q), rtol=1e-4, atol=1e-5)


def test_nested_runs_as_the_module_and_hides_it_two_deep():
    inner = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    box = cu.nested(inner, depth=3)
    x = torch.randn(5, 4)
    assert torch.equal(box(x), inner(x))
    depth = {name.count(".") for name, m in box.named_modules() if m is inner[1]}
    assert depth == {4} and sum(1 for _ in box.parameters()) == 4  # registered once
    assert nn.SyncBatchNorm in cu.NORMS and nn.GroupNorm in cu.NORMS


def test_restoring_puts_everything_back_after_an_error():
    m = model()
    before = (torch.is_grad_enabled(), gc.isenabled(), torch.is_anomaly_enabled(), torch.get_default_dtype())
    with pytest.raises(KeyError):
        with cu.restoring(m):
            torch.set_grad_enabled(False)
            gc.disable()
            torch.autograd.set_detect_anomaly(True)
            torch.set_default_dtype(torch.float64)
            m.eval()
            raise KeyError("a failing answer")
    assert before == (torch.is_grad_enabled(), gc.isenabled(), torch.is_anomaly_enabled(), torch.get_default_dtype())
    assert all(s.training for s in m.modules())
