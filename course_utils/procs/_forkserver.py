"""Imports modules once, then forks one fresh child per request (``in_processes(preload=...)``).

``python -m course_utils.procs._forkserver torch,course_utils`` prints ``ready``, then reads one JSON
request per line on stdin (``target``, ``args``, ``out``, ``log``, ``env``), forks, prints the
child's ``{"pid": ...}``, and when it ends ``{"status": exit code}``. The child writes its stdout
and stderr to ``log`` and its result to ``out`` (see :func:`course_utils.procs._child.child_main`).
:class:`ForkServer` is
the parent's side.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


class ForkServer:
    """A process that imported ``preload`` once and forks every run (``course_utils.procs._forkserver``)."""

    def __init__(self, preload: Sequence[str], env: Mapping[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "course_utils.procs._forkserver", ",".join(preload)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env={**os.environ, **env})
        import queue
        import threading

        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        line = self._line(120.0)
        if line != "ready":
            self.close()
            if line and line.startswith("error: "):
                raise RuntimeError(line.removeprefix("error: "))
            raise RuntimeError(f"the preloading process could not import {list(preload)}")

    def _read(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            self.lines.put(line.strip())

    def _line(self, timeout: float) -> str | None:
        import queue

        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def run(self, target: str, kwargs: Mapping[str, Any], *, env: Mapping[str, str], timeout: float,
            arm: str) -> tuple[dict[str, Any], float]:
        """One run in a child forked from the server; as ``processes._run_one``."""
        import signal

        with tempfile.TemporaryDirectory(prefix="course-process-") as tmp:
            args_path, out_path, log = Path(tmp) / "kwargs.json", Path(tmp) / "result.json", Path(tmp) / "log"
            args_path.write_text(json.dumps(dict(kwargs)))
            started = time.perf_counter()
            req = {"target": target, "args": str(args_path), "out": str(out_path), "log": str(log), "env": dict(env)}
            self.proc.stdin.write(json.dumps(req) + "\n")  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
            pid = json.loads(self._line(60.0) or "{}").get("pid")
            reply = self._line(timeout)
            if reply is None:
                if pid:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                self._line(10.0)
                raise RuntimeError(f"arm {arm!r}: the process ran past its {timeout:.0f} s timeout")
            wall = time.perf_counter() - started
            status = json.loads(reply).get("status")
            if status != 0 or not out_path.exists():
                text = log.read_text() if log.exists() else ""
                tail = "\n".join(text.strip().splitlines()[-12:])
                raise RuntimeError(f"arm {arm!r}: the process running {target} failed (exit {status}):\n{tail}")
            return json.loads(out_path.read_text()), wall

    def close(self) -> None:
        """End the server (its children have all been waited for)."""
        if self.proc.poll() is None:
            self.proc.stdin.close()  # type: ignore[union-attr]
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _child(req: dict) -> int:
    fd = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.environ.update(req["env"])
    try:
        from course_utils.procs._child import child_main

        return child_main([req["target"], req["args"], req["out"]])
    except BaseException:
        import traceback

        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def main() -> None:
    names = list(filter(None, sys.argv[1].split(",")))
    for name in names:
        __import__(name)
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        # A forked child cannot use a CUDA context its parent created: every run would fail with a CUDA
        # initialization error. The preload (or a sitecustomize) must not touch CUDA at import.
        print(f"error: importing {', '.join(names)} initialised CUDA in the preloading process; forked children "
              "could not use the GPU (import without calling torch.cuda, or run without preload)", flush=True)
        sys.exit(3)
    print("ready", flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            os._exit(_child(req))
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    main()
