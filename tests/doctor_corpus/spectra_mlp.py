"""Material identification from 128-bin infrared spectra (7 materials) with an MLP.

Each bin is standardised with the training spectra's statistics. Plain SGD with momentum at a fixed
learning rate of 0.02.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
BINS, MATERIALS = 128, 7


def make_spectra(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Absorption peaks at material-specific wavelengths on a sloping baseline, with noise."""
    material = torch.randint(0, MATERIALS, (n,), generator=g)
    peaks = torch.randint(5, BINS - 5, (MATERIALS, 3), generator=g).float()
    bins = torch.arange(BINS).float().view(1, 1, BINS)
    absorption = torch.exp(-((bins - peaks[material].unsqueeze(2)) ** 2) / 8).sum(1)
    baseline = torch.rand(n, 1, generator=g) * torch.linspace(0, 1, BINS)
    spectra = baseline + absorption + 0.2 * torch.randn(n, BINS, generator=g)
    return spectra, material


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_spectra(2560, g)
    mean, std = x[:2048].mean(0), x[:2048].std(0)
    x = (x - mean) / std
    loader = DataLoader(TensorDataset(x[:2048], y[:2048]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[2048:].to(device), y[2048:].to(device)

    model = nn.Sequential(
        nn.Linear(BINS, 1024), nn.Tanh(),
        nn.Linear(1024, 512), nn.Tanh(),
        nn.Linear(512, MATERIALS),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, fused=True)

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        spectra, materials = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad(set_to_none=False)
        loss = loss_fn(model(spectra), materials)
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
