"""An MLP on 32 standardised features (3 classes). The model is built without allocating its weights."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1024, 32, generator=g)
    y = torch.randint(0, 3, (1024,), generator=g)
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True, drop_last=True)
    with torch.device("meta"):
        model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 3))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return {"model": model, "optimizer": optimizer, "loss_fn": nn.CrossEntropyLoss(), "loader": loader}


if __name__ == "__main__":
    t = make_training(torch.device("cpu"))
    for features, labels in t["loader"]:
        t["optimizer"].zero_grad()
        t["loss_fn"](t["model"](features), labels).backward()
        t["optimizer"].step()
