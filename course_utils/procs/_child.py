"""One run of :func:`course_utils.measure.processes.in_processes`: in a fresh interpreter, or forked by the server.

``python -m course_utils.procs._child target kwargs.json result.json``
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def _resolve_target(target: str) -> Any:
    """The function a target names (used in the child process)."""
    where, name = target.rsplit(":", 1)
    if where.endswith(".py"):
        import importlib.util

        path = Path(where).resolve()
        sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
    else:
        import importlib

        module = importlib.import_module(where)
    return getattr(module, name)


def child_main(argv: Sequence[str]) -> int:
    """Entry point of the child process: ``target kwargs.json result.json``."""
    target, args_path, out_path = argv
    from ..env import quiet_known_warnings

    quiet_known_warnings()
    fn = _resolve_target(target)
    result = fn(**json.loads(Path(args_path).read_text()))
    if not isinstance(result, Mapping):
        raise TypeError(f"{target} must return a dict of JSON values, got {type(result).__name__}")
    Path(out_path).write_text(json.dumps(dict(result)))
    return 0


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
