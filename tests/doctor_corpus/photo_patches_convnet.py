"""A small convnet on 32x32 photo crops stored as PNG files (in memory here), 6 classes.

The Dataset decodes each PNG with Pillow and augments it (random rotation, blur, colour jitter) before
normalising with the usual per-channel statistics. SGD with momentum and a one-cycle schedule.
"""

import io

import numpy as np
import torch
from PIL import Image, ImageEnhance, ImageFilter
from torch import nn
from torch.utils.data import DataLoader, Dataset

EPOCHS = 5
BATCH = 64
CLASSES = 6
MEAN = np.array([0.49, 0.48, 0.45], dtype=np.float32)
STD = np.array([0.25, 0.24, 0.26], dtype=np.float32)


def make_photos(n: int, g: torch.Generator) -> tuple[list[bytes], torch.Tensor]:
    """PNG-encoded crops: a coloured square on a textured background; the class is the square's colour."""
    labels = torch.randint(0, CLASSES, (n,), generator=g)
    colours = torch.rand(CLASSES, 3, generator=g)
    images = 0.3 + 0.4 * torch.rand(n, 32, 32, 3, generator=g)
    corner = torch.randint(4, 16, (n, 2), generator=g)
    for i in range(n):
        r, c = corner[i].tolist()
        images[i, r:r + 12, c:c + 12] = colours[labels[i]]
    pixels = (images * 255).to(torch.uint8).numpy()
    files = []
    for image in pixels:
        buffer = io.BytesIO()
        Image.fromarray(image).save(buffer, format="PNG", compress_level=1)
        files.append(buffer.getvalue())
    return files, labels


class PhotoCrops(Dataset):
    def __init__(self, files: list[bytes], labels: torch.Tensor, augment: bool, seed: int = 0) -> None:
        self.files, self.labels, self.augment = files, labels, augment
        self.rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        image = Image.open(io.BytesIO(self.files[i])).convert("RGB")
        if self.augment:
            image = image.resize((96, 96), Image.BICUBIC)
            image = image.rotate(self.rng.uniform(-15, 15), resample=Image.BICUBIC)
            image = image.filter(ImageFilter.GaussianBlur(radius=self.rng.uniform(0.1, 1.5)))
            image = ImageEnhance.Color(image).enhance(self.rng.uniform(0.8, 1.2))
            image = ImageEnhance.Brightness(image).enhance(self.rng.uniform(0.8, 1.2))
            image = image.resize((32, 32), Image.BILINEAR)
        pixels = (np.asarray(image, dtype=np.float32) / 255 - MEAN) / STD
        return torch.from_numpy(pixels.transpose(2, 0, 1).copy()), self.labels[i]


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    files, labels = make_photos(512, g)
    train = PhotoCrops(files[:384], labels[:384], augment=True)
    held_out = PhotoCrops(files[384:], labels[384:], augment=False)
    loader = DataLoader(train, batch_size=BATCH, shuffle=True, drop_last=True, num_workers=0)
    x_val = torch.stack([held_out[i][0] for i in range(len(held_out))]).to(device)
    y_val = labels[384:].to(device)

    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, CLASSES),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))

    def train_step(model: nn.Module, batch: tuple, optimizer: torch.optim.Optimizer, loss_fn) -> torch.Tensor:
        images, labels = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.detach()

    @torch.no_grad()
    def evaluate(model: nn.Module) -> float:
        model.eval()
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
        print(f"epoch {epoch + 1}: held-out accuracy {t['evaluate'](t['model']):.3f}")


if __name__ == "__main__":
    main()
