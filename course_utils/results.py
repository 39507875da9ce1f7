"""Save every measurement with its environment record, and read them back as a scoreboard.

Results live in ``results/<machine-id>/<notebook>.json``; reference runs on GPUs are committed
under ``results/reference/<machine-id>/``. The scoreboard puts each measured effect beside the
source's claim, kept in :data:`CLAIMS`.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .env import Env

__all__ = ["CLAIMS", "Effect", "Scoreboard", "machine_id", "references", "results_dir", "save",
           "scoreboard"]

#: The sources' claim per lesson (from TRICKS.md), shown beside every measured effect.
CLAIMS: dict[str, str] = {
    "00_measuring": "naive timing invents speed-ups; interleaving + an A/A control does not",
    "01_lr_schedules": "super-convergence: ~10× fewer iterations (Smith & Topin, ResNet-56, CIFAR-10)",
    "02_dataloader_workers": "2× epoch speed with 4 workers + pinned memory (Migacz)",
    "03_batch_size": "batch 64 → 512 gave 4× (Huynh, with 1cycle); double batch ⇒ double LR",
    "04_mixed_precision": "~2×, up to 5.5× on V100 (Huang et al.); up to 3× (tuning guide); halves memory",
    "05_optimizers": "AdamW beats Adam in error and time; fused Adam ~5 % (apex)",
    "06_cudnn_benchmark": "+70 % forward, +27 % forward+backward on a conv (Migacz)",
    "07_host_device_sync": "transfers and syncs are expensive; stored losses keep graphs alive",
    "08_activation_checkpointing": "slightly slower, much less memory; O(√n) memory (Chen et al.)",
    "09_gradient_accumulation": "simulates a large batch when memory is short",
    "10_distributed_data_parallel": "DDP faster than DataParallel even on one node",
    "11_zero_grad_set_to_none": "a modest speed-up; fewer memsets",
    "12_as_tensor_from_numpy": "torch.tensor always copies",
    "13_debug_tools_off": "debugging APIs slow training",
    "14_gradient_clipping": "clipping can speed convergence",
    "15_no_bias_before_batchnorm": "a small speed-up; BatchNorm's mean subtraction cancels the bias",
    "16_no_grad_validation": "less memory, faster evaluation",
    "17_input_normalization": "you are probably already doing this",
}


@dataclass
class Effect:
    """A measured effect that is not a timing comparison (a memory ratio, steps to target …)."""

    description: str
    value: float
    low: float | None = None
    high: float | None = None
    unit: str = "×"

    def __str__(self) -> str:
        ci = f" [{self.low:.3g}, {self.high:.3g}]" if self.low is not None and self.high is not None else ""
        return f"{self.description}: {self.value:.3g}{self.unit}{ci}"

    def to_dict(self) -> dict[str, Any]:
        """Return the effect as a JSON-serialisable dict (``kind`` = ``"effect"``)."""
        return {"kind": "effect", **asdict(self)}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def machine_id(record: dict[str, Any]) -> str:
    """A readable folder name for the hardware of an environment record (``nvidia-h200``)."""
    if record.get("device") == "cuda" and record.get("gpu_name"):
        return _slug(record["gpu_name"])
    return f"{record.get('device', 'cpu')}-{_slug(record.get('cpu') or 'unknown')}-{record.get('cpu_count')}c"


def _course_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / "nbgrader_config.py").exists() and (folder / "course_utils").is_dir():
            return folder
    return None


def results_dir() -> Path:
    """Return the results folder.

    ``$COURSE_RESULTS_DIR`` when set, else ``results/`` of the course checkout that contains the
    working directory, else ``./results``.
    """
    if os.environ.get("COURSE_RESULTS_DIR"):
        return Path(os.environ["COURSE_RESULTS_DIR"])
    root = _course_root(Path.cwd().resolve())
    return (root / "results") if root else Path("results")


def _as_json(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    return value


def save(notebook: str, env: Env, *, headline: str, root: str | Path | None = None,
         **measurements: Any) -> Path:
    """Save a notebook's measurements with its environment record as JSON.

    Args:
        notebook: the lesson slug, e.g. ``"04_mixed_precision"``.
        env: the :class:`~course_utils.env.Env` from ``cu.setup()``.
        headline: the name of the measurement the scoreboard shows for this lesson.
        root: results folder; :func:`results_dir` when omitted.
        **measurements: named results (``Comparison``, ``Effect``, ``TargetResult``, numbers …).

    Returns:
        The path written, ``<root>/<machine-id>/<notebook>.json``.

    Raises:
        ValueError: ``headline`` names none of ``measurements``.
    """
    if headline not in measurements:
        raise ValueError(f"headline {headline!r} is not one of the measurements: {sorted(measurements)}")
    folder = Path(root) if root is not None else results_dir()
    path = folder / machine_id(env.record) / f"{notebook}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "notebook": notebook,
        "profile": env.profile,
        "machine": machine_id(env.record),
        "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "claim": CLAIMS.get(notebook),
        "env": env.record,
        "headline": headline,
        "measurements": _as_json(measurements),
    }
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    print(f"saved       {path}")
    return path


def describe(measurement: dict[str, Any]) -> str:
    """One line for a saved measurement: value, interval and verdict."""
    kind = measurement.get("kind") if isinstance(measurement, dict) else None
    if kind == "comparison":
        lo, hi = measurement["ci"]
        return f"{measurement['speedup']:.2f}× [{lo:.2f}, {hi:.2f}] {measurement['verdict']}"
    if kind == "effect":
        e = Effect(**{k: v for k, v in measurement.items() if k != "kind"})
        return str(e)
    if kind == "target":
        med = measurement.get("median_steps")
        return (f"{med:g} steps to {measurement['target']:.0%}" if med is not None
                else f"target {measurement['target']:.0%} not reached")
    return json.dumps(measurement)[:60]


def _headline_value(measurement: dict[str, Any]) -> tuple[float, float, float] | None:
    kind = measurement.get("kind")
    if kind == "comparison":
        return measurement["speedup"], *measurement["ci"]
    if kind == "effect" and measurement.get("unit") == "×":
        v = measurement["value"]
        return v, measurement.get("low") or v, measurement.get("high") or v
    return None


@dataclass
class Scoreboard:
    """Every saved result, one row per lesson and machine, beside the source's claim."""

    rows: list[dict[str, Any]]

    def _table(self) -> list[tuple[str, str, str, str, str]]:
        return [(r["notebook"], r["machine"] + (" (reference)" if r["reference"] else ""),
                 r["profile"], r["measured"], r["claim"] or "") for r in self.rows]

    def __str__(self) -> str:
        if not self.rows:
            return "No results saved yet: run a lesson (or `make run`) first."
        head = ("lesson", "machine", "profile", "measured here", "source claims")
        table = [head, *self._table()]
        widths = [max(len(row[i]) for row in table) for i in range(4)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + "  " + row[4]
                         for row in table)

    def to_markdown(self) -> str:
        """The scoreboard as a Markdown table."""
        if not self.rows:
            return "_No results saved yet._\n"
        lines = ["| lesson | machine | profile | measured here | source claims |", "|---|---|---|---|---|"]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in self._table()]
        return "\n".join(lines) + "\n"

    def _repr_html_(self) -> str:
        if not self.rows:
            return "<p>No results saved yet.</p>"
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in self._table())
        return ("<table><thead><tr><th>lesson</th><th>machine</th><th>profile</th><th>measured here"
                f"</th><th>source claims</th></tr></thead><tbody>{body}</tbody></table>")

    def plot(self, path: str | Path | None = None) -> Any:
        """Speed-up bars of every headline that is a ratio; saved to ``path`` when given."""
        from .plots import plot_speedups

        bars = [(f"{r['notebook']} · {r['machine']}", *r["value"]) for r in self.rows if r["value"]]
        ax = plot_speedups(bars or [("no ratio results yet", 1.0, 1.0, 1.0)],
                           title="measured effect per lesson (median, 95 % CI)",
                           xlabel="× better than the baseline: speed, memory or steps (log scale)")
        if path is not None:
            ax.figure.savefig(path, dpi=110, bbox_inches="tight")
        return ax


def scoreboard(root: str | Path | None = None) -> Scoreboard:
    """Read every saved result under ``root`` (and ``root/reference``) into a :class:`Scoreboard`."""
    folder = Path(root) if root is not None else results_dir()
    rows = []
    for path in sorted(folder.glob("*/*.json")) + sorted(folder.glob("reference/*/*.json")):
        try:
            d = json.loads(path.read_text())
            m = d["measurements"][d["headline"]]
        except (json.JSONDecodeError, KeyError) as e:
            print(f"WARNING: skipping unreadable result {path}: {type(e).__name__}: {e}")
            continue
        rows.append({"notebook": d["notebook"], "machine": d["machine"], "profile": d["profile"],
                     "reference": "reference" in path.parts[-3:-1], "measured": describe(m),
                     "value": _headline_value(m), "claim": CLAIMS.get(d["notebook"], d.get("claim"))})
    rows.sort(key=lambda r: (r["notebook"], r["reference"], r["machine"]))
    return Scoreboard(rows)


def references(notebook: str, root: str | Path | None = None, *, verbose: bool = True) -> list[dict[str, Any]]:
    """Load the committed reference results of ``notebook`` (GPU runs) and print their headlines."""
    folder = (Path(root) if root is not None else results_dir()) / "reference"
    found = [json.loads(p.read_text()) for p in sorted(folder.glob(f"*/{notebook}.json"))]
    if verbose:
        if not found:
            print(f"No reference result for {notebook} has been recorded yet "
                  "(reference runs on a GPU are committed under results/reference/).")
        for d in found:
            env = d["env"]
            hw = env.get("gpu_name") or env.get("cpu")
            print(f"reference   {hw}, torch {env.get('torch')}, profile {d['profile']}: "
                  f"{describe(d['measurements'][d['headline']])}")
    return found
