"""The attack submissions of tests/test_grading_safety.py: code a student adds to an answer cell."""

from __future__ import annotations

from pathlib import Path

FIXTURE = "99_fixture"


def attacks(course: Path, port: int) -> dict[str, str]:
    """student -> code added to the first answer cell (it runs when the cell is executed)."""
    sol, db = course / "solutions" / FIXTURE / f"{FIXTURE}.ipynb", course / "gradebook.db"
    other = course / "submitted" / "alice" / FIXTURE / f"{FIXTURE}.ipynb"
    results = course / "results"
    return {
        "reader": f"""
import os
_found = []
for _p in [{str(sol)!r}, {str(db)!r}, {str(other)!r}]:
    try:
        open(_p, "rb").read(); _found.append(_p)
    except OSError:
        pass
for _top, _dirs, _files in os.walk("../../.."):
    _dirs[:] = [d for d in _dirs if d not in {{"usr", "proc", "sys", "dev", ".venv", ".pyenv", "site-packages"}}]
    for _f in _files:
        try:
            if _f.endswith(".ipynb") and b"BEGIN " + b"HIDDEN" in open(os.path.join(_top, _f), "rb").read():
                _found.append(os.path.join(_top, _f))
        except OSError:
            pass
print("ATTACK-READ", len(_found), _found[:3])
""",
        "writer": f"""
import shutil
for _p in [{str(sol)!r}, {str(db)!r}, {str(other)!r}, "/ipc/fill", "/kernel.json"]:
    try:
        with open(_p, "ab") as _f:
            _f.write(b"pwned")
        print("ATTACK-WROTE", _p)
    except OSError:
        pass
shutil.rmtree({str(results)!r}, ignore_errors=True)
""",
        "network": f"""
import socket
for _addr in [("127.0.0.1", {port}), ("1.1.1.1", 53)]:
    try:
        socket.create_connection(_addr, timeout=2).close(); print("ATTACK-SOCKET", _addr)
    except OSError:
        pass
""",
        "forker": """
import subprocess, sys
subprocess.Popen([sys.executable, "-c",
                  "import os\\nwhile True:\\n    try:\\n        os.fork()\\n    except OSError:\\n        pass"])
""",
        "hog": """
_chunks = []
while True:  # far more than the machine has, 256 MB at a time
    _chunks.append(bytearray(256 * 2**20))
""",
        "filler": """
with open("big", "wb") as _f:
    while True:
        _f.write(bytes(2**24))
""",
        "killer": """
import os, signal
for _pid in [os.getppid(), 1]:
    try:
        os.kill(_pid, signal.SIGKILL)
    except OSError:
        pass
os.kill(-1, signal.SIGKILL)
""",
        "leaker": """
import base64, builtins
_speedup = speedup
def speedup(baseline_s, fast_s):
    cell = get_ipython().user_ns["In"][-1]  # the test cell that is calling: hidden tests included
    if "assert" in cell:
        builtins._stash = getattr(builtins, "_stash", "") + cell
    else:
        stash = getattr(builtins, "_stash", "")
        print(base64.b64encode(stash.encode()).decode())
        print(stash[::-1])
        raise ValueError(base64.b16encode(stash.encode()).decode())
    return _speedup(baseline_s, fast_s)
""",
    }
