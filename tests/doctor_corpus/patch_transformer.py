"""A tiny vision transformer: 16x16 greyscale scans cut into 4x4 patches, 3 classes of defect.

Patch embedding, two attention blocks (nn.MultiheadAttention), mean pooling. Scans are standardised with
the training set's statistics, as in the rest of the inspection pipeline. Adam with a one-cycle schedule.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
PATCH, WIDTH, DEFECTS = 4, 48, 3
TOKENS = (16 // PATCH) ** 2


def make_scans(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Scratches (a line), dents (a blob) or clean surfaces, on a noisy background."""
    defect = torch.randint(0, DEFECTS, (n,), generator=g)
    coords = torch.arange(16.0)
    rows, cols = torch.meshgrid(coords, coords, indexing="ij")
    centre = 4 + 8 * torch.rand(n, 2, 1, 1, generator=g)
    blob = torch.exp(-((rows - centre[:, 0]) ** 2 + (cols - centre[:, 1]) ** 2) / 6)
    line = torch.exp(-((rows - cols - (centre[:, 0] - centre[:, 1])) ** 2) / 2)
    scans = (defect == 1).view(-1, 1, 1) * line + (defect == 2).view(-1, 1, 1) * blob
    scans = scans + 0.4 * torch.randn(n, 16, 16, generator=g)
    return scans.unsqueeze(1).double(), defect


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.attention = nn.MultiheadAttention(WIDTH, num_heads=4, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 2 * WIDTH), nn.GELU(), nn.Linear(2 * WIDTH, WIDTH))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.patches = nn.Conv2d(1, WIDTH, PATCH, stride=PATCH)
        self.position = nn.Parameter(0.02 * torch.randn(1, TOKENS, WIDTH))
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Sequential(nn.LayerNorm(WIDTH), nn.Linear(WIDTH, DEFECTS))

    def forward(self, scans: torch.Tensor) -> torch.Tensor:
        tokens = self.patches(scans).flatten(2).transpose(1, 2) + self.position
        return self.head(self.blocks(tokens).mean(1))


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_scans(2560, g)
    mean, std = x[:2048].mean(), x[:2048].std()
    x = (x - mean) / std
    loader = DataLoader(TensorDataset(x[:2048], y[:2048]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[2048:].to(device), y[2048:].to(device)

    model = TinyViT().to(device, torch.float64)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=2e-3, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        scans, defects = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(scans), defects)
        loss.backward()
        optimizer.step()
        return loss.detach()

    def evaluate(model: nn.Module) -> float:
        model.eval()
        predictions = model(x_val).argmax(1)
        model.train()
        return (predictions == y_val).double().mean().item()

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
