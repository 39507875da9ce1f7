"""cu.graph_held: what a tensor's autograd graph keeps alive, counted exactly."""

from __future__ import annotations

import torch
import torch.nn.functional as F

import course_utils as cu


def _loss(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(X), y, reduction="sum")


def _setup(batches: int = 3):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    data = [(torch.randn(5, 8), torch.randint(0, 4, (5,))) for _ in range(batches)]
    return model, data


def test_a_summed_loss_holds_every_batch_graph_and_its_saved_bytes():
    model, data = _setup(3)
    held_elsewhere = list(model.parameters()) + [X for X, _ in data]
    total, saved = 0.0, 0
    for batch in data:
        saved += cu.saved_tensors(lambda b=batch: _loss(model, *b), exclude=held_elsewhere).bytes
    for X, y in data:
        total = total + _loss(model, X, y)
    held = cu.graph_held(total, exclude=held_elsewhere)
    loss_node = type(_loss(model, *data[0]).grad_fn).__name__
    assert held.count(loss_node) == 3
    assert held.bytes == saved > 0
    assert "saved for backward" in str(held)


def test_detached_item_and_plain_numbers_hold_nothing():
    model, data = _setup(2)
    loss = _loss(model, *data[0])
    for value in (loss.detach(), loss.item(), 3.0, None, torch.ones(2, requires_grad=True)):
        held = cu.graph_held(value)
        assert held.bytes == 0 and sum(held.nodes.values()) == 0


def test_excluded_tensors_and_shared_storages_are_not_counted_twice():
    x = torch.randn(4, 4, requires_grad=True)
    h = torch.randn(4, 4)
    out = (h * x).sum() + (h * x).mean()  # h saved by two nodes: one storage
    counted = cu.graph_held(out)
    assert counted.bytes == h.untyped_storage().nbytes()  # once, though two MulBackward0 nodes saved it
    assert counted.count("MulBackward0") == 2
    assert cu.graph_held(out, exclude=[h]).bytes == 0


def test_a_graph_freed_by_backward_holds_no_saved_bytes():
    model, data = _setup(1)
    loss = _loss(model, *data[0])
    before = cu.graph_held(loss, exclude=list(model.parameters()) + [data[0][0]])
    loss.backward()
    after = cu.graph_held(loss, exclude=list(model.parameters()) + [data[0][0]])
    assert before.bytes > 0 and after.bytes == 0
    assert sum(after.nodes.values()) == sum(before.nodes.values())  # the nodes stay, their tensors go
