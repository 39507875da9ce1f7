"""Loan default: an MLP that predicts repaid / late / defaulted from 8 application fields.

Fields: age, yearly income, loan amount, term in months, credit score, open accounts, years employed,
debt-to-income ratio, as the bank's export gives them. AdamW with a one-cycle schedule.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 128
OUTCOMES = 3


def make_applications(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    z = torch.randn(n, 8, generator=g)
    typical = torch.tensor([41.0, 52_000.0, 15_000.0, 36.0, 660.0, 6.0, 7.0, 0.31])
    spread = torch.tensor([12.0, 21_000.0, 9_000.0, 14.0, 70.0, 3.0, 6.0, 0.12])
    fields = (typical + spread * z).clamp(min=0)
    risk = -0.9 * z[:, 4] + 0.6 * z[:, 7] + 0.4 * z[:, 2] - 0.5 * z[:, 1] + 0.4 * torch.randn(n, generator=g)
    return fields, torch.bucketize(risk, torch.tensor([0.3, 1.2]))


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_applications(4608, g)
    loader = DataLoader(TensorDataset(x[:4096], y[:4096]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[4096:].to(device), y[4096:].to(device)

    model = nn.Sequential(
        nn.Linear(8, 1024), nn.ReLU(),
        nn.Linear(1024, 1024), nn.ReLU(),
        nn.Linear(1024, OUTCOMES),
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2, fused=True)
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
        for fields, outcomes in t["loader"]:
            optimizer.zero_grad()
            loss_fn(model(fields.to(device)), outcomes.to(device)).backward()
            optimizer.step()
            t["scheduler"].step()
        print(f"epoch {epoch + 1}: validation accuracy {t['evaluate'](model):.3f}")


if __name__ == "__main__":
    main()
