"""Texture classification on 24x24 greyscale tiles (8 textures) with a GroupNorm convnet.

The tiles are standardised with the training set's mean and standard deviation. AdamW (fused) with
a one-cycle schedule.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
TEXTURES = 8


def make_tiles(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Oriented stripes at one of 8 angles, with a random phase and noise."""
    labels = torch.randint(0, TEXTURES, (n,), generator=g)
    angle = labels.float() * math.pi / TEXTURES
    coords = torch.arange(24.0)
    rows, cols = torch.meshgrid(coords, coords, indexing="ij")
    phase = 2 * math.pi * torch.rand(n, 1, 1, generator=g)
    along = rows * torch.cos(angle).view(-1, 1, 1) + cols * torch.sin(angle).view(-1, 1, 1)
    tiles = 0.5 + 0.3 * torch.sin(along * 0.8 + phase) + 0.2 * torch.rand(n, 24, 24, generator=g)
    return tiles.unsqueeze(1), labels


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_tiles(2560, g)
    mean, std = x[:2048].mean(), x[:2048].std()
    x = (x - mean) / std
    loader = DataLoader(TensorDataset(x[:2048], y[:2048]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[2048:].to(device), y[2048:].to(device)

    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.GroupNorm(4, 16), nn.SiLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.GroupNorm(8, 32), nn.SiLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 6 * 6, TEXTURES),
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=4e-3, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        tiles, labels = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad(set_to_none=False)
        loss = loss_fn(model(tiles), labels)
        loss.backward()
        optimizer.step()
        return loss.detach()

    def evaluate(model: nn.Module) -> float:
        model.eval()
        with torch.inference_mode():
            predictions = model(x_val).argmax(1)
        model.train()
        return (predictions == y_val).float().mean().item()

    return {"model": model, "optimizer": optimizer, "loss_fn": F.cross_entropy, "loader": loader,
            "train_step": train_step, "evaluate": evaluate, "scheduler": scheduler}


def main() -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    t = make_training(device)
    for epoch in range(EPOCHS):
        for batch in t["loader"]:
            t["train_step"](t["model"], batch, t["optimizer"], t["loss_fn"])
            t["scheduler"].step()
        print(f"epoch {epoch + 1}: validation accuracy {t['evaluate'](t['model']):.3f}")


if __name__ == "__main__":
    main()
