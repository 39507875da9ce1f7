"""Credit scoring: an MLP that predicts one of 3 risk grades from 32 applicant features.

The features are standardised with the training split's statistics; the scores are compared with the
bank's reference implementation. AdamW with a cosine one-cycle schedule.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 128
FEATURES = 32
GRADES = 3


def make_applicants(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(n, FEATURES, generator=g, dtype=torch.float64) * torch.linspace(1, 50, FEATURES).double()
    weights = torch.randn(FEATURES, generator=g, dtype=torch.float64) / torch.linspace(1, 50, FEATURES).double()
    score = x @ weights + 0.5 * torch.randn(n, generator=g, dtype=torch.float64)
    grades = torch.bucketize(score, torch.quantile(score, torch.tensor([1 / 3, 2 / 3], dtype=torch.float64)))
    return x, grades


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_applicants(4608, g)
    mean, std = x[:4096].mean(0), x[:4096].std(0)
    x = (x - mean) / std
    loader = DataLoader(TensorDataset(x[:4096], y[:4096]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[4096:].to(device), y[4096:].to(device)

    model = nn.Sequential(
        nn.Linear(FEATURES, 512), nn.SiLU(),
        nn.Linear(512, 512), nn.SiLU(),
        nn.Linear(512, GRADES),
    ).to(device=device, dtype=torch.float64)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=2e-3, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader), anneal_strategy="cos")

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        features, grades = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(features), grades)
        loss.backward()
        optimizer.step()
        return loss.detach()

    def evaluate(model: nn.Module) -> float:
        model.eval()
        with torch.inference_mode():
            accuracy = (model(x_val).argmax(1) == y_val).double().mean().item()
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
