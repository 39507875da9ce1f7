"""A two-block pre-norm transformer encoder on short sequences of sensor readings (4 classes).

Each example is 16 time steps of 24 standardised channels; the blocks use PyTorch's scaled-dot-product
attention, the sequence is mean-pooled for the classifier. AdamW with a one-cycle schedule.
"""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
STEPS, CHANNELS, WIDTH, HEADS = 16, 24, 64, 4
CLASSES = 4


def make_sequences(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Noisy multichannel sequences; the class is set by which channels rise over time."""
    y = torch.randint(0, CLASSES, (n,), generator=g)
    trend = torch.randn(CLASSES, CHANNELS, generator=g)
    time = torch.linspace(-1, 1, STEPS).view(1, STEPS, 1)
    x = 0.3 * trend[y].unsqueeze(1) * time + torch.randn(n, STEPS, CHANNELS, generator=g)
    return (x - x.mean()) / x.std(), y


class Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        attended = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(attended)
        return x + self.mlp(self.norm2(x))


class SequenceClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(CHANNELS, WIDTH)
        self.position = nn.Parameter(torch.zeros(1, STEPS, WIDTH))
        self.blocks = nn.Sequential(Block(WIDTH, HEADS), Block(WIDTH, HEADS))
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(self.embed(x) + self.position)
        return self.head(self.norm(x).mean(1))


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_sequences(2560, g)
    train = TensorDataset(x[:2048], y[:2048])
    x_val, y_val = x[2048:].to(device), y[2048:].to(device)
    loader = DataLoader(train, batch_size=BATCH, shuffle=True, drop_last=True, num_workers=0)

    model = SequenceClassifier().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, betas=(0.9, 0.98), weight_decay=0.05, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=2e-3, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader), pct_start=0.2)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        sequences, labels = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(sequences), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        optimizer.step()
        return loss.detach()

    def evaluate(model: nn.Module) -> float:
        was_training = model.training
        model.eval()
        with torch.inference_mode():
            accuracy = (model(x_val).argmax(1) == y_val).float().mean()
        model.train(was_training)
        return float(accuracy)

    return {"model": model, "optimizer": optimizer, "loss_fn": loss_fn, "loader": loader,
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
