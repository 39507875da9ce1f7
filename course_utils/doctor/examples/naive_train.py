"""The capstone's naive training script (lesson 19), written for the doctor: ``make doctor`` diagnoses it.

It trains a small BatchNorm conv net on Fashion-MNIST images read from PNG files, and it has the
problems lesson 19 fixes one by one (the lesson's ablation measures each). Run it to train
(``python examples/naive_train.py``); the doctor only imports it and calls ``make_training``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

import course_utils as cu

BATCH, LR = 32, 0.05
log: list[float] = []


@functools.cache
def _prepared(profile: str) -> cu.capstone.speedrun.Prepared:
    """The capstone's images as PNG files (written once) and its validation split."""
    return cu.capstone.prepare("fashionmnist", profile, verbose=False)


def make_training(device: torch.device) -> dict:
    """Everything one run needs, built afresh on ``device`` (the doctor's contract)."""
    prepared = _prepared("smoke" if cu.env.get_profile(device) == "smoke" else "cpu")
    sizes, data = prepared.sizes, prepared.data
    torch.autograd.set_detect_anomaly(True)  # left on from a debugging session
    torch.manual_seed(0)
    model = cu.make_convnet(cu.ConvNetConfig(data.input_shape[0], data.num_classes, sizes.width, sizes.depth,
                                             conv_bias=True)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, nesterov=True)
    loader = torch.utils.data.DataLoader(cu.image_folder(prepared.image_root), batch_size=BATCH, shuffle=True,
                                         drop_last=True, num_workers=0)
    X_val, y_val = prepared.X_val.to(device), prepared.y_val.to(device)

    def loss_fn(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        weight = torch.tensor([1.0] * data.num_classes).to(device)  # the same class weights, rebuilt every step
        return F.cross_entropy(out, y, weight=weight)

    def train_step(model: nn.Module, batch: list, optimizer: torch.optim.Optimizer, loss_fn: Callable) -> torch.Tensor:
        X, y = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        optimizer.step()
        log.append(loss.item())  # the running log
        return loss

    def evaluate(model: nn.Module) -> float:
        model.eval()
        correct = sum(int((model(X_val[i:i + 256]).argmax(1) == y_val[i:i + 256]).sum())
                      for i in range(0, len(X_val), 256))
        model.train()
        return correct / len(X_val)

    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn, "loader": loader,
            "train_step": train_step, "evaluate": evaluate}


if __name__ == "__main__":
    device = cu.choose_device()
    run = make_training(device)
    for epoch in range(3):
        for batch in run["loader"]:
            run["train_step"](run["model"], batch, run["optimizer"], run["loss_fn"])
        print(f"epoch {epoch + 1}: loss {log[-1]:.3f}, validation accuracy {run['evaluate'](run['model']):.1%}")
