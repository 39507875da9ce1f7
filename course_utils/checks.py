"""Helpers for test cells: readable assertion messages for tensors, gradients and models."""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

__all__ = ["assert_close", "assert_grads_close", "rel_error"]


def rel_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """Largest relative error ``|a - e| / max(|a|, |e|, 1e-8)`` over all elements."""
    a, e = torch.as_tensor(actual).double(), torch.as_tensor(expected).double()
    return float(((a - e).abs() / torch.maximum(torch.maximum(a.abs(), e.abs()),
                                               torch.tensor(1e-8, dtype=torch.float64))).max())


def assert_close(actual: object, expected: object, *, rtol: float = 1e-5, atol: float = 1e-8,
                 name: str = "value") -> None:
    """Assert that two numbers or tensors agree, with a message a learner can act on.

    Raises:
        AssertionError: shapes differ, or values differ beyond ``atol + rtol * |expected|``;
            the message gives both values (or the worst element), the difference and the tolerance.
    """
    # Python numbers become float64 (torch.as_tensor would round them to float32).
    a = (actual if isinstance(actual, torch.Tensor) else torch.as_tensor(actual, dtype=torch.float64)).detach().cpu()
    e = (expected if isinstance(expected, torch.Tensor) else torch.as_tensor(expected, dtype=torch.float64)).detach().cpu()
    if a.shape != e.shape:
        raise AssertionError(f"{name}: shape {tuple(a.shape)} but expected {tuple(e.shape)}")
    a64, e64 = a.double(), e.double()
    bad = ~torch.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=False)
    if bool(bad.any()):
        diff = (a64 - e64).abs()
        if a.ndim == 0:
            raise AssertionError(f"{name}: got {a.item():.6g}, expected {e.item():.6g} "
                                 f"(difference {diff.item():.3g}; tolerance atol={atol:g}, rtol={rtol:g})")
        idx = tuple(int(i) for i in torch.nonzero(bad)[0])
        raise AssertionError(
            f"{name}: {int(bad.sum())} of {a.numel()} elements differ; first at index {idx}: got "
            f"{a64[idx].item():.6g}, expected {e64[idx].item():.6g}; largest difference "
            f"{diff.max().item():.3g} (tolerance atol={atol:g}, rtol={rtol:g})")


def assert_grads_close(model: nn.Module | Iterable[torch.nn.Parameter],
                       reference: nn.Module | Iterable[torch.nn.Parameter], *,
                       rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Assert that two models (or parameter lists) hold the same gradients, parameter by parameter."""
    def named(m: nn.Module | Iterable[torch.nn.Parameter]) -> list[tuple[str, torch.nn.Parameter]]:
        return list(m.named_parameters()) if isinstance(m, nn.Module) else [
            (str(i), p) for i, p in enumerate(m)]

    got, want = named(model), named(reference)
    if len(got) != len(want):
        raise AssertionError(f"{len(got)} parameters but the reference has {len(want)}")
    for (name, p), (_, q) in zip(got, want):
        if (p.grad is None) != (q.grad is None):
            raise AssertionError(f"gradient of {name}: {'None' if p.grad is None else 'set'}, "
                                 f"reference {'None' if q.grad is None else 'set'}")
        if p.grad is not None:
            assert_close(p.grad, q.grad, rtol=rtol, atol=atol, name=f"gradient of {name}")
