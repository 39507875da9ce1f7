"""Small reference models built from dataclass configs, sized per profile."""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

__all__ = ["ConvNetConfig", "MLPConfig", "make_convnet", "make_mlp"]


@dataclass
class MLPConfig:
    """A multilayer perceptron: ``depth`` hidden blocks of Linear + ReLU."""

    in_features: int
    num_classes: int = 10
    hidden: int = 256
    depth: int = 2

    @classmethod
    def for_profile(cls, profile: str, in_features: int, num_classes: int = 10) -> MLPConfig:
        """Sizes that run in seconds (smoke), minutes (cpu) or fill a GPU step (gpu)."""
        hidden, depth = {"smoke": (64, 2), "cpu": (256, 3), "gpu": (1024, 4)}[profile]
        return cls(in_features, num_classes, hidden, depth)


def make_mlp(cfg: MLPConfig) -> nn.Sequential:
    """Build the MLP of ``cfg``; it flattens its input, so images go in as they are."""
    layers: list[nn.Module] = [nn.Flatten()]
    width = cfg.in_features
    for _ in range(cfg.depth):
        layers += [nn.Linear(width, cfg.hidden), nn.ReLU()]
        width = cfg.hidden
    layers.append(nn.Linear(width, cfg.num_classes))
    return nn.Sequential(*layers)


@dataclass
class ConvNetConfig:
    """A small conv net: ``depth`` blocks of conv 3×3 (+ BatchNorm) + ReLU, pooling between."""

    in_channels: int
    num_classes: int = 10
    width: int = 32
    depth: int = 3
    batchnorm: bool = True
    conv_bias: bool = True

    @classmethod
    def for_profile(cls, profile: str, in_channels: int, num_classes: int = 10,
                    **overrides: bool) -> ConvNetConfig:
        """Sizes per profile; ``overrides`` set ``batchnorm`` / ``conv_bias``."""
        width, depth = {"smoke": (8, 2), "cpu": (32, 3), "gpu": (128, 4)}[profile]
        return cls(in_channels, num_classes, width, depth, **overrides)


def make_convnet(cfg: ConvNetConfig) -> nn.Sequential:
    """Build the conv net of ``cfg``: blocks, global average pooling, a linear classifier.

    The block's conv keeps or drops its bias by ``cfg.conv_bias`` (a bias right before
    BatchNorm is cancelled by BatchNorm's mean subtraction).
    """
    layers: list[nn.Module] = []
    channels = cfg.in_channels
    for i in range(cfg.depth):
        out = cfg.width * 2**i
        layers.append(nn.Conv2d(channels, out, 3, padding=1, bias=cfg.conv_bias))
        if cfg.batchnorm:
            layers.append(nn.BatchNorm2d(out))
        layers.append(nn.ReLU())
        if i < cfg.depth - 1:
            layers.append(nn.MaxPool2d(2, ceil_mode=True))
        channels = out
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, cfg.num_classes)]
    return nn.Sequential(*layers)

