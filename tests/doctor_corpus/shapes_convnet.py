"""A VGG-style convnet that tells 4 shapes apart (disc, square, cross, ring) on 20x20 greyscale images.

Conv - BatchNorm - ReLU blocks, global average pooling, one linear layer. Images are standardised with
the training set's statistics. SGD with momentum and a one-cycle schedule.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
SIZE, SHAPES = 20, 4


def make_shapes(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    shape = torch.randint(0, SHAPES, (n,), generator=g)
    centre = 6 + 8 * torch.rand(n, 2, 1, 1, generator=g)
    radius = 3 + 2 * torch.rand(n, 1, 1, generator=g)
    coords = torch.arange(SIZE, dtype=torch.float32)
    rows, cols = torch.meshgrid(coords, coords, indexing="ij")
    dr, dc = rows - centre[:, 0], cols - centre[:, 1]
    distance = (dr ** 2 + dc ** 2).sqrt()
    masks = torch.stack([
        distance < radius,
        (dr.abs() < radius) & (dc.abs() < radius),
        ((dr.abs() < 1) | (dc.abs() < 1)) & (distance < radius + 1),
        (distance < radius + 1) & (distance > radius - 1),
    ], dim=1)
    images = masks[torch.arange(n), shape].float() + 0.3 * torch.randn(n, SIZE, SIZE, generator=g)
    return images.unsqueeze(1), shape


def conv_block(c_in: int, c_out: int) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, kernel_size=3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_shapes(2560, g)
    mean, std = x[:2048].mean(), x[:2048].std()
    x = (x - mean) / std
    loader = DataLoader(TensorDataset(x[:2048], y[:2048]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[2048:].to(device), y[2048:].to(device)

    model = nn.Sequential(
        *conv_block(1, 16), nn.MaxPool2d(2),
        *conv_block(16, 32), nn.MaxPool2d(2),
        *conv_block(32, 32),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, SHAPES),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        images, shapes = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(images), shapes)
        loss.backward()
        optimizer.step()
        return loss.detach()

    def evaluate(model: nn.Module) -> float:
        model.eval()
        with torch.inference_mode():
            accuracy = (model(x_val).argmax(1) == y_val).float().mean().item()
        model.train()
        return accuracy

    return {"model": model, "optimizer": optimizer, "loss_fn": nn.CrossEntropyLoss(), "loader": loader,
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
