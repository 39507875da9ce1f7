"""Fashion thumbnails: an MLP on 28x28 greyscale images (10 classes), trained with AdamW.

The setup lives in make_trainer(), which main() calls.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 3


def make_trainer(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1024, 1, 28, 28, generator=g)
    y = torch.randint(0, 10, (1024,), generator=g)
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True, drop_last=True)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    return {"model": model, "optimizer": optimizer, "loss_fn": nn.CrossEntropyLoss(), "loader": loader}


def main() -> None:
    t = make_trainer(torch.device("cpu"))
    for _ in range(EPOCHS):
        for images, labels in t["loader"]:
            t["optimizer"].zero_grad()
            t["loss_fn"](t["model"](images), labels).backward()
            t["optimizer"].step()


if __name__ == "__main__":
    main()
