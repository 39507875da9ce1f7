"""A small ResNet (two basic blocks, 16 and 32 channels) on 16x16 RGB thumbnails, 10 product categories.

Thumbnails are standardised per channel with the training set's statistics. SGD with Nesterov momentum
and a one-cycle schedule; training stops at once if the loss stops being finite.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
CATEGORIES = 10


def make_thumbnails(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Thumbnails whose category sets a colour gradient's direction and hue."""
    category = torch.randint(0, CATEGORIES, (n,), generator=g)
    hue = torch.rand(CATEGORIES, 3, 1, 1, generator=g)
    angle = category.float().view(-1, 1, 1) * 2 * math.pi / CATEGORIES
    coords = torch.linspace(-1, 1, 16)
    rows, cols = torch.meshgrid(coords, coords, indexing="ij")
    ramp = (rows * torch.cos(angle) + cols * torch.sin(angle)).unsqueeze(1)
    images = hue[category] * (0.5 + 0.5 * ramp) + 0.3 * torch.rand(n, 3, 16, 16, generator=g)
    return images, category


class BasicBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.shortcut = nn.Identity()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class SmallResNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.layer1 = BasicBlock(16, 16)
        self.layer2 = BasicBlock(16, 32, stride=2)
        self.fc = nn.Linear(32, CATEGORIES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_thumbnails(2560, g)
    mean, std = x[:2048].mean((0, 2, 3), keepdim=True), x[:2048].std((0, 2, 3), keepdim=True)
    x = (x - mean) / std
    loader = DataLoader(TensorDataset(x[:2048], y[:2048]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[2048:].to(device), y[2048:].to(device)

    model = SmallResNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4,
                                fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.2, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))
    history: list[float] = []

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        images, categories = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(images), categories)
        loss.backward()
        optimizer.step()
        history.append(float(loss))
        if not math.isfinite(history[-1]):
            raise FloatingPointError(f"loss is {history[-1]} at step {len(history)}")
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
