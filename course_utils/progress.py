"""Progress bars that leave their final state, or nothing, in a saved notebook.

In a Jupyter kernel ``tqdm.auto`` draws an ipywidgets bar, and the notebook file keeps only the
text form it had when first shown ("  0%|          | 0/12 [00:00<?, ?it/s]"), even with
``leave=False``; without ipywidgets it writes one stderr output per refresh, every one kept.
:func:`progress_bar` shows the bar (the widget, or its text) under a display id and replaces that
output when the bar closes: by the final state ("100%|██████████| 12/12 [...]"), or by nothing
when ``leave=False``. Outside a kernel it is plain tqdm on stderr.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["progress_bar"]


def in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel, whose outputs a notebook saves (tqdm's own test)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and "IPKernelApp" in shell.config


class _LatestLine:
    """A file for tqdm's text bar: each write replaces the text of one display output."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def write(self, text: str) -> None:
        line = text.split("\r")[-1].rstrip()
        if line:  # not the newline or the blanks that end a bar
            self.handle.update({"text/plain": line}, raw=True)

    def flush(self) -> None:
        pass


def progress_bar(total: int | None, desc: str = "", *, leave: bool = True, unit: str = "it",
                 disable: bool = False) -> tqdm:
    """A tqdm bar of ``total`` steps (advance it with ``update``; ``close`` it, or use ``with``).

    In a kernel the saved output is the bar's final state (where it stopped, when it closed short
    of ``total``); with ``leave=False`` it is nothing.
    """
    from tqdm.std import tqdm as text_bar

    kw: dict[str, Any] = dict(total=total, desc=desc, leave=leave, unit=unit, disable=disable)
    if disable or not in_kernel():
        return text_bar(**kw)
    from IPython.display import display
    from tqdm.notebook import IProgress, tqdm_notebook

    if IProgress is not None:  # ipywidgets: the widget, under a display id
        bar: tqdm = tqdm_notebook(**kw, display=False)
        handle = display(bar.container, display_id=True)
    else:
        handle = display({"text/plain": ""}, raw=True, display_id=True)
        bar = text_bar(**kw, file=_LatestLine(handle), ascii=False, position=0)  # its own output: no cursor moves
    close = bar.close

    def close_and_publish() -> None:
        if bar.disable:  # closed already (``with`` and the garbage collector close it too)
            return
        close()
        final = {"text/plain": str(bar)} if leave else {}
        if leave and IProgress is not None:  # the widget stays; its text (else as first shown) is the final state
            final = {**bar.container._repr_mimebundle_(), **final}
        handle.update(final, raw=True)

    bar.close = close_and_publish
    return bar
