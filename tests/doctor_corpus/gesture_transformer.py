"""Hand-gesture recognition from 16 frames of 21 tracked 2-D keypoints (42 standardised values), 5 gestures.

A small transformer encoder (nn.TransformerEncoder, 2 layers, pre-norm) over the frames, with a learned
class token. AdamW at lr 3e-4, the value that worked best in a short sweep.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
FRAMES, VALUES, WIDTH, GESTURES = 16, 42, 64, 5


def make_clips(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Keypoints drifting along a gesture-specific direction, with jitter."""
    gesture = torch.randint(0, GESTURES, (n,), generator=g)
    direction = torch.randn(GESTURES, VALUES, generator=g)
    pose = torch.randn(n, 1, VALUES, generator=g)
    progress = torch.linspace(0, 1, FRAMES).view(1, FRAMES, 1)
    clips = pose + 0.5 * progress * direction[gesture].unsqueeze(1) + 0.3 * torch.randn(n, FRAMES, VALUES, generator=g)
    return (clips - clips.mean()) / clips.std(), gesture


class GestureTransformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(VALUES, WIDTH)
        self.cls = nn.Parameter(torch.zeros(1, 1, WIDTH))
        self.position = nn.Parameter(0.02 * torch.randn(1, FRAMES + 1, WIDTH))
        layer = nn.TransformerEncoderLayer(WIDTH, nhead=4, dim_feedforward=128, dropout=0.1, batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(WIDTH), nn.Linear(WIDTH, GESTURES))

    def forward(self, clips: torch.Tensor) -> torch.Tensor:
        tokens = torch.cat([self.cls.expand(len(clips), -1, -1), self.embed(clips)], dim=1) + self.position
        return self.head(self.encoder(tokens)[:, 0])


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_clips(2560, g)
    loader = DataLoader(TensorDataset(x[:2048], y[:2048]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[2048:].to(device), y[2048:].to(device)

    model = GestureTransformer().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05, fused=True)

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        clips, gestures = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(clips), gestures)
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
            "train_step": train_step, "evaluate": evaluate}


def main() -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    t = make_training(device)
    for epoch in range(EPOCHS):
        for batch in t["loader"]:
            t["train_step"](t["model"], batch, t["optimizer"], t["loss_fn"])
        print(f"epoch {epoch + 1}: validation accuracy {t['evaluate'](t['model']):.3f}")


if __name__ == "__main__":
    main()
