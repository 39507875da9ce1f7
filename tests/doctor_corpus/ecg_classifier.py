"""Heartbeat classification: a 1-D convnet on 128-sample ECG beats (normal and 3 arrhythmia types).

Beats are standardised one by one (zero mean, unit variance), as in the usual pipelines. SGD with
Nesterov momentum and a one-cycle schedule.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
LENGTH, KINDS = 128, 4


def make_beats(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A QRS-like spike whose width and a following wave depend on the kind of beat."""
    kind = torch.randint(0, KINDS, (n,), generator=g)
    t = torch.linspace(-1, 1, LENGTH)
    width = (0.03 + 0.03 * kind.float()).view(-1, 1)
    wave = torch.exp(-(t / width) ** 2) + 0.3 * (kind.view(-1, 1) % 2) * torch.exp(-((t - 0.4) / 0.1) ** 2)
    beats = wave + 0.15 * torch.randn(n, LENGTH, generator=g)
    beats = (beats - beats.mean(1, keepdim=True)) / beats.std(1, keepdim=True)
    return beats.unsqueeze(1), kind


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_beats(2560, g)
    loader = DataLoader(TensorDataset(x[:2048], y[:2048]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[2048:].to(device), y[2048:].to(device)

    model = nn.Sequential(
        nn.Conv1d(1, 16, 7, padding=3, bias=False), nn.BatchNorm1d(16), nn.ReLU(), nn.MaxPool1d(2),
        nn.Conv1d(16, 32, 5, padding=2, bias=False), nn.BatchNorm1d(32), nn.ReLU(), nn.MaxPool1d(2),
        nn.Conv1d(32, 32, 3, padding=1, bias=False), nn.BatchNorm1d(32), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
        nn.Flatten(), nn.Linear(32, KINDS),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, nesterov=True, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        beats, kinds = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        with torch.autograd.detect_anomaly():
            loss = loss_fn(model(beats), kinds)
            loss.backward()
        optimizer.step()
        return loss.detach()

    def evaluate(model: nn.Module) -> float:
        model.eval()
        with torch.no_grad():
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
