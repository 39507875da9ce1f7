"""Customer churn: a 3-layer MLP with batch norm on 24 standardised usage features (churn / stay / upgrade).

The training step keeps a running loss and accuracy so that progress is printed every 50 steps.
SGD with momentum (fused update) and a one-cycle schedule.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 5
BATCH = 128
FEATURES, CLASSES = 24, 3


def make_customers(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(n, FEATURES, generator=g)
    w1, w2 = torch.randn(2, FEATURES, generator=g)
    logits = torch.stack([x @ w1, x @ w2, (x @ w1) * (x @ w2) / 4], dim=1)
    return x, (logits + torch.randn(n, CLASSES, generator=g)).argmax(1)


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x, y = make_customers(4608, g)
    loader = DataLoader(TensorDataset(x[:4096], y[:4096]), batch_size=BATCH, shuffle=True, drop_last=True,
                        num_workers=0)
    x_val, y_val = x[4096:].to(device), y[4096:].to(device)

    model = nn.Sequential(
        nn.Linear(FEATURES, 1024, bias=False), nn.BatchNorm1d(1024), nn.ReLU(),
        nn.Linear(1024, 1024, bias=False), nn.BatchNorm1d(1024), nn.ReLU(),
        nn.Linear(1024, CLASSES),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.2, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))
    running = {"loss": 0.0, "correct": 0, "seen": 0, "steps": 0}

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        features, labels = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        logits = model(features)
        loss = loss_fn(logits, labels)
        loss.backward()
        optimizer.step()

        running["loss"] += loss.item()
        running["correct"] += (logits.argmax(1) == labels).sum().item()
        running["seen"] += len(labels)
        running["steps"] += 1
        if running["steps"] % 50 == 0:
            print(f"step {running['steps']}: loss {running['loss'] / 50:.3f}, "
                  f"accuracy {running['correct'] / running['seen']:.3f}")
            running.update(loss=0.0, correct=0, seen=0)
        return loss

    def evaluate(model: nn.Module) -> float:
        model.eval()
        with torch.inference_mode():
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
