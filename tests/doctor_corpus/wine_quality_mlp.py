"""Wine quality: an MLP that rates wines low / medium / high from 11 lab measurements.

Measurements are standardised with the training split's statistics; dropout and weight decay against
over-fitting on a small table. Adam with a one-cycle schedule; accuracy is checked on a held-out split.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 64
MEASUREMENTS, GRADES = 11, 3


def make_wines(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Acidity, sugar, sulphates, alcohol … in their own units; quality depends on a few of them."""
    typical = torch.tensor([7.2, 0.34, 0.32, 5.4, 0.056, 30.0, 115.0, 0.995, 3.2, 0.53, 10.5])
    spread = torch.tensor([1.3, 0.16, 0.15, 4.8, 0.035, 17.0, 56.0, 0.003, 0.16, 0.15, 1.2])
    z = torch.randn(n, MEASUREMENTS, generator=g)
    quality = 1.2 * z[:, 10] + 0.6 * z[:, 9] - 0.8 * z[:, 1] + 0.5 * torch.randn(n, generator=g)
    grades = torch.bucketize(quality, torch.tensor([-0.7, 0.7]))
    return typical + spread * z, grades


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_wines(3072, g)
    mean, std = x[:2560].mean(0), x[:2560].std(0)
    x = (x - mean) / std
    loader = DataLoader(TensorDataset(x[:2560], y[:2560]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[2560:].to(device), y[2560:].to(device)

    model = nn.Sequential(
        nn.Linear(MEASUREMENTS, 512), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(512, 512), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(512, 128), nn.ReLU(),
        nn.Linear(128, GRADES),
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-3, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))

    def evaluate(model: nn.Module) -> float:
        model.eval()
        correct = torch.zeros((), device=device)
        for i in range(0, len(x_val), 128):
            logits = model(x_val[i:i + 128])
            correct += (logits.argmax(1) == y_val[i:i + 128]).sum()
        model.train()
        return correct.item() / len(x_val)

    return {"model": model, "optimizer": optimizer, "loss_fn": nn.CrossEntropyLoss(), "loader": loader,
            "evaluate": evaluate, "scheduler": scheduler}


def main() -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    t = make_training(device)
    model, optimizer, loss_fn = t["model"], t["optimizer"], t["loss_fn"]
    for epoch in range(EPOCHS):
        for measurements, grades in t["loader"]:
            optimizer.zero_grad()
            loss_fn(model(measurements.to(device)), grades.to(device)).backward()
            optimizer.step()
            t["scheduler"].step()
        print(f"epoch {epoch + 1}: held-out accuracy {t['evaluate'](model):.3f}")


if __name__ == "__main__":
    main()
