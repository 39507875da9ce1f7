"""Reading seven-segment digits off photographed meters: a small convnet on 16x16 greyscale crops (10 digits).

The crops are the camera's 8-bit grey levels. Conv - BatchNorm - ReLU blocks, AdamW with a one-cycle
schedule.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
DIGITS = 10
#: Which of the segments a, b, c, d, e, f, g each digit lights.
SEGMENTS = torch.tensor([
    [1, 1, 1, 1, 1, 1, 0], [0, 1, 1, 0, 0, 0, 0], [1, 1, 0, 1, 1, 0, 1], [1, 1, 1, 1, 0, 0, 1],
    [0, 1, 1, 0, 0, 1, 1], [1, 0, 1, 1, 0, 1, 1], [1, 0, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0, 0],
    [1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 1, 1],
], dtype=torch.float32)


def segment_masks() -> torch.Tensor:
    """The 7 segments as 16x16 masks (rows 2-13, columns 4-11)."""
    masks = torch.zeros(7, 16, 16)
    masks[0, 2, 4:12] = masks[3, 13, 4:12] = masks[6, 7, 4:12] = 1  # a, d, g
    masks[1, 2:8, 11] = masks[2, 7:14, 11] = 1  # b, c
    masks[4, 7:14, 4] = masks[5, 2:8, 4] = 1  # e, f
    return masks


def make_crops(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    digits = torch.randint(0, DIGITS, (n,), generator=g)
    lit = torch.einsum("ns,shw->nhw", SEGMENTS[digits], segment_masks()).clamp(max=1)
    background = 40 + 30 * torch.rand(n, 1, 1, generator=g)
    grey = background + 150 * lit + 20 * torch.randn(n, 16, 16, generator=g)
    return grey.clamp(0, 255).round().unsqueeze(1), digits


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_crops(2560, g)
    loader = DataLoader(TensorDataset(x[:2048], y[:2048]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[2048:].to(device), y[2048:].to(device)

    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 4 * 4, DIGITS),
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-3, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        crops, digits = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(crops), digits)
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
