"""Keyword spotting: classify half-second audio clips (16 kHz) into 8 words with a small 1-D convnet.

The clips are kept as 16-bit samples, like the decoded WAV files; each one is augmented (time shift, speed
change) and turned into a standardised log-mel spectrogram by the Dataset. Adam with a one-cycle schedule.
"""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

EPOCHS = 5
BATCH = 64
WORDS = 8
RATE, SAMPLES = 16_000, 8_000
N_FFT, HOP, BANDS = 400, 160, 40


def make_clips(n: int, g: torch.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Noisy two-tone "words" as int16 samples, one pair of pitches per word."""
    words = torch.randint(0, WORDS, (n,), generator=g)
    pitches = 300 + 150 * torch.rand(WORDS, 2, generator=g) * torch.tensor([1.0, 4.0])
    t = torch.arange(SAMPLES) / RATE
    onset = torch.randint(0, SAMPLES // 4, (n, 1), generator=g)
    envelope = ((torch.arange(SAMPLES) >= onset) & (torch.arange(SAMPLES) < onset + SAMPLES // 2)).float()
    tones = sum(torch.sin(2 * torch.pi * pitches[words, k, None] * t) for k in range(2))
    audio = 0.3 * envelope * tones + 0.05 * torch.randn(n, SAMPLES, generator=g)
    return (audio.clamp(-1, 1) * 32767).to(torch.int16).numpy(), words.numpy()


def mel_filterbank() -> np.ndarray:
    freqs = np.linspace(0, RATE / 2, N_FFT // 2 + 1)
    mels = np.linspace(0, 2595 * np.log10(1 + RATE / 2 / 700), BANDS + 2)
    hz = 700 * (10 ** (mels / 2595) - 1)
    lower, centre, upper = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    rising, falling = (freqs - lower) / (centre - lower), (upper - freqs) / (upper - centre)
    return np.maximum(0, np.minimum(rising, falling)).astype(np.float32)


class SpokenWords(Dataset):
    def __init__(self, clips: np.ndarray, words: np.ndarray, augment: bool, seed: int = 0) -> None:
        self.clips, self.words, self.augment = clips, words, augment
        self.rng = np.random.default_rng(seed)
        self.window = np.hanning(N_FFT).astype(np.float32)
        self.filters = mel_filterbank()

    def __len__(self) -> int:
        return len(self.clips)

    def log_mel(self, audio: np.ndarray) -> np.ndarray:
        audio = np.append(audio[0], audio[1:] - 0.97 * audio[:-1])  # pre-emphasis
        frames = np.lib.stride_tricks.sliding_window_view(audio, N_FFT)[::HOP] * self.window
        power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
        mel = np.log(power @ self.filters.T + 1e-6).T  # (bands, frames)
        return (mel - mel.mean()) / (mel.std() + 1e-5)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        audio = self.clips[i].astype(np.float32) / 32768
        if self.augment:
            audio = np.roll(audio, self.rng.integers(-1600, 1600))
            speed = self.rng.uniform(0.9, 1.1)
            audio = np.interp(np.arange(SAMPLES) * speed, np.arange(SAMPLES), audio, right=0.0).astype(np.float32)
            noise = self.rng.standard_normal(SAMPLES).astype(np.float32)
            audio = audio + noise * audio.std() * 10 ** (-self.rng.uniform(10, 30) / 20)  # background at 10-30 dB SNR
        return torch.from_numpy(self.log_mel(audio).astype(np.float32)), int(self.words[i])


def make_training(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    clips, words = make_clips(640, g)
    train = SpokenWords(clips[:512], words[:512], augment=True)
    held_out = SpokenWords(clips[512:], words[512:], augment=False)
    x_val = torch.stack([held_out[i][0] for i in range(len(held_out))]).to(device)
    y_val = torch.as_tensor(words[512:]).to(device)
    loader = DataLoader(train, batch_size=BATCH, shuffle=True, drop_last=True, num_workers=0)

    model = nn.Sequential(
        nn.Conv1d(BANDS, 32, 5, stride=2, padding=2, bias=False), nn.BatchNorm1d(32), nn.ReLU(),
        nn.Conv1d(32, 32, 3, padding=1, bias=False), nn.BatchNorm1d(32), nn.ReLU(),
        nn.AdaptiveMaxPool1d(1), nn.Flatten(), nn.Linear(32, WORDS),
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=5e-3, epochs=EPOCHS,
                                                    steps_per_epoch=len(loader))

    def evaluate(model: nn.Module) -> float:
        model.eval()
        with torch.no_grad():
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
        for spectrograms, words in t["loader"]:
            optimizer.zero_grad()
            loss_fn(model(spectrograms.to(device)), words.to(device)).backward()
            optimizer.step()
            t["scheduler"].step()
        print(f"epoch {epoch + 1}: held-out accuracy {t['evaluate'](model):.3f}")


if __name__ == "__main__":
    main()
