"""Activity recognition from a wrist sensor: attention over 20 windows of 12 standardised channels (6 activities).

One nn.MultiheadAttention layer over learned window embeddings, then a small MLP head. AdamW with a
one-cycle schedule.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
WINDOWS, CHANNELS, WIDTH, ACTIVITIES = 20, 12, 48, 6


def make_recordings(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    activity = torch.randint(0, ACTIVITIES, (n,), generator=g)
    rhythm = torch.randn(ACTIVITIES, CHANNELS, generator=g)
    t = torch.arange(WINDOWS).view(1, WINDOWS, 1)
    x = torch.sin(t * (activity.view(-1, 1, 1) + 1) * 0.3) * rhythm[activity].unsqueeze(1)
    x = x + torch.randn(n, WINDOWS, CHANNELS, generator=g)
    return (x - x.mean()) / x.std(), activity


class AttentionClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(CHANNELS, WIDTH)
        self.norm = nn.LayerNorm(WIDTH)
        self.attention = nn.MultiheadAttention(WIDTH, num_heads=4, batch_first=True)
        self.head = nn.Sequential(nn.LayerNorm(WIDTH), nn.Linear(WIDTH, 96), nn.GELU(), nn.Linear(96, ACTIVITIES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(self.embed(x))
        attended, _ = self.attention(h, h, h, need_weights=False)
        return self.head((h + attended).mean(1))


def make_training(device: torch.device) -> dict:
    torch.autograd.set_detect_anomaly(True)
    g = torch.Generator().manual_seed(0)
    x, y = make_recordings(2560, g)
    loader = DataLoader(TensorDataset(x[:2048], y[:2048]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[2048:].to(device), y[2048:].to(device)

    model = AttentionClassifier().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-3, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))

    def evaluate(model: nn.Module) -> float:
        model.eval()
        with torch.inference_mode():
            accuracy = (model(x_val).argmax(1) == y_val).float().mean().item()
        model.train()
        return accuracy

    return {"model": model, "optimizer": optimizer, "loss_fn": nn.CrossEntropyLoss(), "loader": loader,
            "evaluate": evaluate, "scheduler": scheduler}


def main() -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    t = make_training(device)
    model, optimizer, loss_fn = t["model"], t["optimizer"], t["loss_fn"]
    for epoch in range(EPOCHS):
        for recordings, activities in t["loader"]:
            optimizer.zero_grad()
            loss_fn(model(recordings.to(device)), activities.to(device)).backward()
            optimizer.step()
            t["scheduler"].step()
        print(f"epoch {epoch + 1}: validation accuracy {t['evaluate'](model):.3f}")


if __name__ == "__main__":
    main()
