"""Watch ATen operators by name, by every route: the half of :func:`course_utils.lesson.checks.spy` below Python.

``sys.setprofile`` sees Python functions and builtins; an answer can still reach the operator it
must not use through ``torch.ops.aten.<op>(...)`` or a cached ``torch._C`` function. Two modes
together see those: a ``TorchFunctionMode`` (``torch.ops.aten.*`` called directly, before any
decomposition) and a ``TorchDispatchMode`` (every operator that reaches the dispatcher, after
composite operators decompose: ``F.scaled_dot_product_attention`` arrives as
``aten::_scaled_dot_product_flash_attention_for_cpu`` on a CPU). Patterns are ``fnmatch``-style
(``"aten::_scaled_dot_product*"``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import Any

from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["OpWatch", "op_name"]


def op_name(func: Any) -> str | None:
    """``"aten::add"`` for an ATen operator, its overload or its packet; None for anything else."""
    name = getattr(func, "_qualified_op_name", None)  # an OpOverloadPacket (torch.ops.aten.add)
    if name is None and hasattr(func, "name") and hasattr(func, "_schema"):
        name = func._schema.name  # an OpOverload (torch.ops.aten.add.Tensor), as the dispatcher passes it
    return name if isinstance(name, str) and "::" in name else None


class _Function(TorchFunctionMode):
    def __init__(self, seen: Callable[[Any], None]) -> None:
        super().__init__()
        self.seen = seen

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        self.seen(func)
        return func(*args, **(kwargs or {}))


class _Dispatch(TorchDispatchMode):
    def __init__(self, seen: Callable[[Any], None]) -> None:
        super().__init__()
        self.seen = seen

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        self.seen(func)
        return func(*args, **(kwargs or {}))


class OpWatch:
    """While entered, append to ``calls`` the label of each watched pattern an operator matched."""

    def __init__(self, patterns: dict[str, str], calls: list[str]) -> None:
        self.patterns = patterns  # label -> pattern
        self.calls = calls
        self._modes = (_Function(self._seen), _Dispatch(self._seen))

    def _seen(self, func: Any) -> None:
        name = op_name(func)
        if name is not None:
            for label, pattern in self.patterns.items():
                if fnmatch.fnmatchcase(name, pattern):
                    self.calls.append(label)

    def __enter__(self) -> OpWatch:
        for mode in self._modes:
            mode.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        for mode in reversed(self._modes):
            mode.__exit__(*exc)
