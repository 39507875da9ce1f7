"""A convnet on 32x32 RGB images (10 classes); the Dataset reshapes each stored row into an image."""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class FlatImages(Dataset):
    """Images stored as flat rows, reshaped on the way out."""

    def __init__(self, rows: torch.Tensor, labels: torch.Tensor) -> None:
        self.rows, self.labels = rows, labels

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.rows[i].view(3, 32, 32), self.labels[i]


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    rows = torch.randn(512, 28 * 28, generator=g)  # the grey 28x28 export, not the colour one
    labels = torch.randint(0, 10, (512,), generator=g)
    loader = DataLoader(FlatImages(rows, labels), batch_size=64, shuffle=True, drop_last=True)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, fused=True)
    return {"model": model, "optimizer": optimizer, "loss_fn": nn.CrossEntropyLoss(), "loader": loader}


if __name__ == "__main__":
    t = make_training(torch.device("cpu"))
    for images, labels in t["loader"]:
        t["optimizer"].zero_grad()
        t["loss_fn"](t["model"](images), labels).backward()
        t["optimizer"].step()
