"""An MLP classifier on 40 tabular features (5 classes).

The features come on very different scales, so they are standardised with the training split's mean and
standard deviation. AdamW with a one-cycle schedule; the doctor's plain training step is used.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 128
FEATURES = 40
CLASSES = 5


def make_table(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows of features in their own units (counts, amounts, ratios) and a class that depends on them."""
    z = torch.randn(n, FEATURES, generator=g)
    scale = torch.logspace(-2, 3, FEATURES)
    offset = torch.linspace(0, 500, FEATURES)
    teacher = torch.randn(FEATURES, CLASSES, generator=g)
    y = (torch.tanh(z) @ teacher + 0.3 * torch.randn(n, CLASSES, generator=g)).argmax(1)
    return z * scale + offset, y


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_table(4608, g)
    x_train, y_train, x_val, y_val = x[:4096], y[:4096], x[4096:], y[4096:]
    mean, std = x_train.mean(0), x_train.std(0)
    x_train, x_val = (x_train - mean) / std, (x_val - mean) / std

    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    model = nn.Sequential(
        nn.Linear(FEATURES, 768), nn.GELU(), nn.Dropout(0.1),
        nn.Linear(768, 768), nn.GELU(), nn.Dropout(0.1),
        nn.Linear(768, CLASSES),
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-3, total_steps=EPOCHS * len(loader))

    def evaluate(model: nn.Module) -> float:
        model.eval()
        with torch.inference_mode():
            predictions = model(x_val.to(device)).argmax(1)
            accuracy = (predictions == y_val.to(device)).float().mean().item()
        model.train()
        return accuracy

    return {"model": model, "optimizer": optimizer, "loss_fn": nn.CrossEntropyLoss(), "loader": loader,
            "evaluate": evaluate, "scheduler": scheduler}


def main() -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    t = make_training(device)
    model, optimizer, loss_fn = t["model"], t["optimizer"], t["loss_fn"]
    for epoch in range(EPOCHS):
        for features, labels in t["loader"]:
            features, labels = features.to(device), labels.to(device)
            optimizer.zero_grad()
            loss_fn(model(features), labels).backward()
            optimizer.step()
            t["scheduler"].step()
        print(f"epoch {epoch + 1}: validation accuracy {t['evaluate'](model):.3f}")


if __name__ == "__main__":
    main()
