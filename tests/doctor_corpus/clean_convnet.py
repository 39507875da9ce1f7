"""A small convnet on 16x16 colour patches, 10 classes.

Three conv/BatchNorm blocks, SGD with Nesterov momentum and a one-cycle schedule. The patches are
standardised per channel with the training set's statistics before they go into the loader.
"""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
CLASSES = 10


def make_patches(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Colour patches whose label depends on where the bright blobs are."""
    blobs = torch.rand(n, 3, 4, 4, generator=g)
    x = F.interpolate(blobs, size=16, mode="bilinear") + 0.2 * torch.rand(n, 3, 16, 16, generator=g)
    x = x * torch.linspace(0.5, 1.0, 3).view(1, 3, 1, 1)
    teacher = torch.randn(3 * 4 * 4, CLASSES, generator=g)
    features = blobs.flatten(1)
    return x, ((features - features.mean(0)) @ teacher).argmax(1)


def block(c_in: int, c_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_patches(2560, g)
    x_train, y_train, x_val, y_val = x[:2048], y[:2048], x[2048:], y[2048:]
    mean = x_train.mean(dim=(0, 2, 3), keepdim=True)
    std = x_train.std(dim=(0, 2, 3), keepdim=True)
    x_train, x_val = (x_train - mean) / std, (x_val - mean) / std

    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    model = nn.Sequential(
        block(3, 16), nn.MaxPool2d(2),
        block(16, 32), nn.MaxPool2d(2),
        block(32, 32), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(32, CLASSES),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4,
                                fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.2, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        images, labels = (t.to(device, non_blocking=True) for t in batch)
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.detach()

    @torch.inference_mode()
    def evaluate(model: nn.Module) -> float:
        model.eval()
        correct = torch.zeros((), device=device)
        for i in range(0, len(x_val), 256):
            logits = model(x_val[i:i + 256].to(device))
            correct += (logits.argmax(1) == y_val[i:i + 256].to(device)).sum()
        model.train()
        return correct.item() / len(x_val)

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
