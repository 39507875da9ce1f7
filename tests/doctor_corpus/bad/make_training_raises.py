"""An MLP on 20 standardised features (4 classes); hyper-parameters come from one config dict."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

CONFIG = {"lr": 1e-3, "batch_size": 64, "hidden": 128, "epochs": 3}


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1024, 20, generator=g)
    y = torch.randint(0, 4, (1024,), generator=g)
    loader = DataLoader(TensorDataset(x, y), batch_size=CONFIG["batch_size"], shuffle=True, drop_last=True)
    model = nn.Sequential(nn.Linear(20, CONFIG["hidden"]), nn.ReLU(), nn.Linear(CONFIG["hidden"], 4)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=CONFIG["learning_rate"], fused=True)
    return {"model": model, "optimizer": optimizer, "loss_fn": nn.CrossEntropyLoss(), "loader": loader}


if __name__ == "__main__":
    t = make_training(torch.device("cpu"))
    for _ in range(CONFIG["epochs"]):
        for features, labels in t["loader"]:
            t["optimizer"].zero_grad()
            t["loss_fn"](t["model"](features), labels).backward()
            t["optimizer"].step()
