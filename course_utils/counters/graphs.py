"""What an autograd graph keeps alive: the nodes a tensor's ``grad_fn`` reaches and their saved tensors.

A tensor that requires grad holds its whole graph: every node back to the leaves, and every tensor
those nodes saved for backward. ``total += loss`` over an evaluation loop with autograd on therefore
keeps every batch's activations alive until ``total`` goes. :func:`graph_held` walks the graph from a
tensor and counts what it holds, exactly, on any device.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..units import format_bytes

__all__ = ["HeldGraph", "graph_held"]


@dataclass
class HeldGraph:
    """The autograd graph one tensor keeps alive."""

    bytes: int  #: bytes of the distinct storages its nodes saved for backward (excluded ones not counted)
    nodes: Counter[str] = field(default_factory=Counter)  #: node type name -> how many (e.g. "AddBackward0")

    def count(self, node_type: str) -> int:
        """How many nodes of type ``node_type`` (``type(t.grad_fn).__name__``) the graph holds."""
        return self.nodes[node_type]

    def __str__(self) -> str:
        return f"{format_bytes(self.bytes)} saved for backward, held by {sum(self.nodes.values())} graph nodes"


def _saved(node: Any) -> Iterable[torch.Tensor]:
    """The tensors a graph node saved for backward (its ``_saved_*`` attributes); none once freed."""
    for name in dir(node):
        if not name.startswith("_saved_"):
            continue
        try:
            value = getattr(node, name)
        except RuntimeError:  # freed by a backward pass: nothing held any more
            continue
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, torch.Tensor):
                yield item


def graph_held(tensor: Any, *, exclude: Iterable[torch.Tensor] = ()) -> HeldGraph:
    """Count what ``tensor``'s autograd graph keeps alive: saved bytes and nodes by type.

    Args:
        tensor: any value; a tensor without ``grad_fn`` (a leaf, a detached tensor, a Python number)
            holds nothing.
        exclude: tensors held elsewhere anyway (parameters, the input batches): their storages are
            not counted, as in :func:`course_utils.saved_tensors`.

    Storages are counted once, however many nodes or views saved them.
    """
    excluded = {(str(t.device), t.untyped_storage().data_ptr()) for t in exclude}
    stack = [getattr(tensor, "grad_fn", None)]
    seen: set[Any] = set()
    storages: dict[tuple[str, int], int] = {}
    nodes: Counter[str] = Counter()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        nodes[type(node).__name__] += 1
        for t in _saved(node):
            key = (str(t.device), t.untyped_storage().data_ptr())
            if key not in excluded:
                storages[key] = t.untyped_storage().nbytes()
        stack.extend(next_node for next_node, _ in node.next_functions)
    return HeldGraph(sum(storages.values()), nodes)
