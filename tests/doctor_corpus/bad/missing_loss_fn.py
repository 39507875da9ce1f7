"""An MLP on 16 standardised features (5 classes); the loss is returned as "criterion"."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1024, 16, generator=g)
    y = torch.randint(0, 5, (1024,), generator=g)
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True, drop_last=True)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 5)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, fused=True)
    return {"model": model, "optimizer": optimizer, "criterion": nn.CrossEntropyLoss(), "loader": loader}


if __name__ == "__main__":
    t = make_training(torch.device("cpu"))
    for features, labels in t["loader"]:
        t["optimizer"].zero_grad()
        t["criterion"](t["model"](features), labels).backward()
        t["optimizer"].step()
