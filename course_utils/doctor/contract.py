"""The doctor's side of a learner's script: load it without running it, and build one run of it.

A script the doctor reads defines one function (the rest of the script is the learner's own)::

    def make_training(device: torch.device) -> dict:
        return {"model": model,          # an nn.Module on ``device``
                "optimizer": optimizer,  # over the model's parameters
                "loss_fn": loss_fn,      # loss_fn(output, target) -> a scalar tensor
                "loader": loader,        # re-iterable (inputs, targets) batches, e.g. a DataLoader
                # optional:
                "train_step": train_step,  # train_step(model, batch, optimizer, loss_fn) -> loss
                "evaluate": evaluate,      # evaluate(model) -> a float
                "scheduler": scheduler}    # stepped once after each train_step

Each call builds fresh objects: the doctor calls it once for every arm it times. Any other key is
an error (a misspelt optional part would otherwise be ignored without a word). The script is
imported under a name of its own, never as ``__main__`` (its ``if __name__ == "__main__":`` block
does not run), and no byte-code is written beside it. Anything wrong with the script is a
:class:`DoctorError` with a one-line message.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

__all__ = ["ENTRY", "DoctorError", "Training", "build", "load_script", "plain_step"]

#: The function a script defines for the doctor.
ENTRY = "make_training"
_REQUIRED = ("model", "optimizer", "loss_fn", "loader")
_OPTIONAL = ("train_step", "evaluate", "scheduler")


class DoctorError(ValueError):
    """The script cannot be diagnosed; the message is one line that says why."""


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text[:200]}" if text else type(e).__name__


def load_script(path: str | Path) -> types.ModuleType:
    """Import the script at ``path`` as a module (its ``__main__`` block does not run, no ``__pycache__``).

    Raises:
        DoctorError: no such file, not a ``.py`` file, the import raised, or no :data:`ENTRY` function.
    """
    path = Path(path)
    if not path.is_file():
        raise DoctorError(f"{path}: no such file (give the path of a training script)")
    if path.suffix != ".py":
        raise DoctorError(f"{path.name}: not a Python file (the doctor reads a .py script)")
    name = f"_doctor_script_{abs(hash(path.resolve()))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DoctorError(f"{path.name}: Python cannot import it")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its classes pickle by module name (DataLoader workers)
    before, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    except BaseException as e:  # noqa: BLE001 -- a script's error, SystemExit included, is one line
        sys.modules.pop(name, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        raise DoctorError(f"{path.name}: importing it raised {_one_line(e)}") from None
    finally:
        sys.dont_write_bytecode = before
    if not callable(getattr(module, ENTRY, None)):
        raise DoctorError(f"{path.name}: defines no {ENTRY}(device) function; the doctor calls it to get the "
                          "model, optimizer, loss_fn and loader (see `python -m course_utils.doctor --help`)")
    module.__doctor_path__ = str(path)  # type: ignore[attr-defined]
    return module


def plain_step(model: torch.nn.Module, batch: Any, optimizer: torch.optim.Optimizer,
               loss_fn: Callable[..., torch.Tensor]) -> torch.Tensor:
    """The step a script gets when it gives no ``train_step``: batch to the model's device, then one update."""
    device = next(model.parameters()).device
    inputs, targets = (t.to(device, non_blocking=True) for t in batch[:2])
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss


@dataclass
class Training:
    """One run of a script: what :data:`ENTRY` returned, and how the doctor steps it.

    ``wrap`` (context managers entered around each step) and ``batch_fn`` (applied to each batch
    before the step) are how a fix changes a run without touching the script.
    """

    name: str
    device: torch.device
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    loss_fn: Callable[..., torch.Tensor]
    loader: Any
    train_step: Callable[..., Any] = plain_step
    evaluate: Callable[[torch.nn.Module], Any] | None = None
    scheduler: Any = None
    custom_step: bool = False  #: the script gave its own train_step
    wrap: tuple[Callable[[], Any], ...] = ()
    eval_wrap: tuple[Callable[[], Any], ...] = ()
    batch_fn: Callable[[Any], Any] | None = None
    _feed: Generator[Any, None, None] | None = field(default=None, repr=False)

    def next_batch(self) -> Any:
        """The loader's next batch (it starts again at the end of an epoch); ``batch_fn`` applied."""
        if self._feed is None:
            self._feed = self._cycle()
        batch = next(self._feed)
        return self.batch_fn(batch) if self.batch_fn is not None else batch

    def _cycle(self) -> Generator[Any, None, None]:
        while True:
            empty = True
            for batch in self.loader:
                empty = False
                yield batch
            if empty:
                raise DoctorError(f"{self.name}: the loader gave no batch (an empty dataset, or drop_last with "
                                  "fewer examples than one batch)")

    def run_step(self, batch: Any) -> Any:
        """One training step on ``batch``, under the run's ``wrap`` contexts; the scheduler stepped after it."""
        from contextlib import ExitStack

        with ExitStack() as stack:
            for make in self.wrap:
                stack.enter_context(make())
            loss = self.train_step(self.model, batch, self.optimizer, self.loss_fn)
        if self.scheduler is not None:
            self.scheduler.step()
        return loss

    def step(self) -> Any:
        """Fetch a batch, then one training step: what the doctor times."""
        return self.run_step(self.next_batch())

    def run_evaluate(self) -> Any:
        """The script's evaluation under the run's ``eval_wrap`` contexts (None when it gave none)."""
        from contextlib import ExitStack

        if self.evaluate is None:
            return None
        with ExitStack() as stack:
            for make in self.eval_wrap:
                stack.enter_context(make())
            return self.evaluate(self.model)

    def close(self) -> None:
        """Stop fetching: the loader's iterator ends, so its worker processes stop now, not at a garbage collection.

        (The batch generator refers to this run and the run to it: a cycle that only the collector frees, and a
        collector run in a forked child would try to stop workers that are not its own.)
        """
        if self._feed is not None:
            self._feed.close()
            self._feed = None

    def but(self, **changes: Any) -> Training:
        """A copy with ``changes`` (a fix's new parts); its batches start afresh."""
        return replace(self, _feed=None, **changes)


def build(module: types.ModuleType, device: torch.device) -> Training:
    """Call the script's :data:`ENTRY` with ``device`` and check what it returned.

    Raises:
        DoctorError: it raised, returned no dict, lacks a required part, gave a part of the wrong type,
            or put the model anywhere but ``device``.
    """
    name = Path(getattr(module, "__doctor_path__", module.__name__)).name
    try:
        parts = getattr(module, ENTRY)(device)
    except Exception as e:  # noqa: BLE001 -- the learner's error, as one line
        raise DoctorError(f"{name}: {ENTRY}(device) raised {_one_line(e)}") from None
    if not isinstance(parts, dict):
        raise DoctorError(f"{name}: {ENTRY}(device) must return a dict with {', '.join(_REQUIRED)}; "
                          f"it returned {type(parts).__name__}")
    missing = [k for k in _REQUIRED if k not in parts]
    if missing:
        raise DoctorError(f"{name}: the dict {ENTRY}(device) returned lacks {', '.join(map(repr, missing))} "
                          f"(it needs {', '.join(_REQUIRED)})")
    unknown = sorted(set(parts) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise DoctorError(f"{name}: {ENTRY}(device) returned unknown key(s) {', '.join(map(repr, unknown))} "
                          f"(known: {', '.join(_REQUIRED + _OPTIONAL)})")
    model, optimizer = parts["model"], parts["optimizer"]
    if not isinstance(model, torch.nn.Module):
        raise DoctorError(f"{name}: 'model' must be a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise DoctorError(f"{name}: 'optimizer' must be a torch.optim.Optimizer, got {type(optimizer).__name__}")
    for key in ("loss_fn", "train_step", "evaluate"):
        if parts.get(key) is not None and not callable(parts[key]):
            raise DoctorError(f"{name}: {key!r} must be callable, got {type(parts[key]).__name__}")
    if not hasattr(parts["loader"], "__iter__"):
        raise DoctorError(f"{name}: 'loader' must be iterable (a DataLoader), got {type(parts['loader']).__name__}")
    places = {p.device for p in model.parameters()}
    if not places:
        raise DoctorError(f"{name}: the model has no parameters to train")
    wrong = sorted(str(d) for d in places if d.type != device.type or (d.index or 0) != (device.index or 0))
    if wrong:
        raise DoctorError(f"{name}: the model's parameters are on {', '.join(wrong)}, not on {device} as asked: "
                          f"{ENTRY} must move the model to the device it is given")
    return Training(name=name, device=device, model=model, optimizer=optimizer, loss_fn=parts["loss_fn"],
                    loader=parts["loader"], train_step=parts.get("train_step") or plain_step,
                    evaluate=parts.get("evaluate"), scheduler=parts.get("scheduler"),
                    custom_step=parts.get("train_step") is not None)
