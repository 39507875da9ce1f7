"""Land-cover classification on 4-band 16x16 satellite tiles (5 classes) with a small convnet.

Bands are standardised with the training tiles' per-band statistics. Adam with a one-cycle schedule.
The profiler's table of the run is printed at the end of main().
"""

import torch
import torch.nn.functional as F
from torch import nn
from torch.profiler import ProfilerActivity, profile
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
BANDS, COVERS = 4, 5
profiler: profile | None = None


def make_tiles(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Each cover has its own spectral signature; tiles mix it with a neighbour's and add noise."""
    cover = torch.randint(0, COVERS, (n,), generator=g)
    signature = torch.rand(COVERS, BANDS, generator=g)
    mix = torch.rand(n, 1, 16, 16, generator=g).round()
    spectra = signature[cover].view(n, BANDS, 1, 1) * (0.6 + 0.4 * mix)
    tiles = spectra + signature[(cover + 1) % COVERS].view(n, BANDS, 1, 1) * 0.4 * (1 - mix)
    tiles = tiles + 0.8 * torch.randn(n, BANDS, 16, 16, generator=g)
    return tiles, cover


def make_training(device: torch.device) -> dict:
    global profiler
    g = torch.Generator().manual_seed(0)
    x, y = make_tiles(2560, g)
    mean, std = x[:2048].mean((0, 2, 3), keepdim=True), x[:2048].std((0, 2, 3), keepdim=True)
    x = (x - mean) / std
    loader = DataLoader(TensorDataset(x[:2048], y[:2048]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[2048:].to(device), y[2048:].to(device)

    model = nn.Sequential(
        nn.Conv2d(BANDS, 24, 3, padding=1, bias=False), nn.BatchNorm2d(24), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(24, 48, 3, padding=1, bias=False), nn.BatchNorm2d(48), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(48, COVERS),
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=4e-3, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    profiler = profile(activities=activities, record_shapes=True, profile_memory=True)
    profiler.start()

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        tiles, covers = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(tiles), covers)
        loss.backward()
        optimizer.step()
        profiler.step()
        return loss.detach()

    def evaluate(model: nn.Module) -> float:
        model.eval()
        with torch.inference_mode():
            accuracy = (model(x_val).argmax(1) == y_val).float().mean().item()
        model.train()
        return accuracy

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
    profiler.stop()
    print(profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))


if __name__ == "__main__":
    main()
