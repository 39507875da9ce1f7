"""A small classifier of handwritten digits (scikit-learn's, bundled: no download), trained with AdamW.

Lesson 19 runs the doctor on it as "a script of your own": it was written in a hurry.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from sklearn.datasets import load_digits
from torch import nn


def make_training(device: torch.device) -> dict:
    """Everything one run needs, built afresh on ``device`` (the doctor's contract)."""
    X, y = load_digits(return_X_y=True)
    X = torch.tensor(X, dtype=torch.float64)  # pixel values 0-16, as the dataset has them
    y = torch.tensor(y)
    split = int(0.8 * len(X))
    train = torch.utils.data.TensorDataset(X[:split], y[:split])
    X_val, y_val = X[split:].to(device), y[split:].to(device)
    torch.manual_seed(0)
    model = nn.Sequential(*[m for _ in range(6) for m in (nn.Linear(64, 64), nn.ReLU())], nn.Linear(64, 10))
    model = model.double().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, foreach=False)
    loader = torch.utils.data.DataLoader(train, batch_size=64, shuffle=True, drop_last=True)

    def train_step(model: nn.Module, batch: list, optimizer: torch.optim.Optimizer, loss_fn: Callable) -> torch.Tensor:
        X, y = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad(set_to_none=False)
        loss = loss_fn(model(X), y)
        loss.backward()
        optimizer.step()
        return loss

    def evaluate(model: nn.Module) -> float:
        model.eval()
        with torch.inference_mode():
            accuracy = (model(X_val).argmax(1) == y_val).float().mean().item()
        model.train()
        return accuracy

    return {"model": model, "optimizer": optimizer, "loss_fn": nn.functional.cross_entropy, "loader": loader,
            "train_step": train_step, "evaluate": evaluate}


if __name__ == "__main__":
    run = make_training(torch.device("cpu"))
    for epoch in range(10):
        for batch in run["loader"]:
            run["train_step"](run["model"], batch, run["optimizer"], run["loss_fn"])
        print(f"epoch {epoch + 1}: validation accuracy {run['evaluate'](run['model']):.1%}")
