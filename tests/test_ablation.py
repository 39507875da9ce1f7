"""The capstone's ablation: the engine's verdicts over seeds, proven on injected times, and one real run."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from course_utils import ablation, speedrun
from course_utils.ablation import FULL, FULL_COPY, NAIVE, NAIVE_COPY, Ablation, compare_times
from course_utils.fixes import Stack


def _verdicts(n_sims: int, seeds: int, effect: float, noise: float, rng: np.random.Generator) -> list[str]:
    out = []
    for _ in range(n_sims):
        base, copy, trick = (np.exp(rng.normal(0, noise, seeds)) for _ in range(3))
        seed_effect = np.exp(rng.normal(0, noise, seeds))  # a seed that converges slowly is slow in every arm
        out.append(compare_times(list(base * seed_effect), list(copy * seed_effect),
                                 list(trick * seed_effect / effect), names=("a", "b")).verdict)
    return out


@pytest.mark.parametrize("seeds", [6, 8, 12])
def test_false_verdicts_under_the_null_are_at_most_five_percent(seeds: int) -> None:
    v = _verdicts(4000, seeds, 1.0, 0.2, np.random.default_rng(seeds))
    false = sum(x in ("faster", "slower") for x in v) / len(v)
    assert false <= 0.05, false


def test_a_real_effect_is_found_at_six_seeds() -> None:
    v = _verdicts(2000, 6, 1.5, 0.1, np.random.default_rng(1))
    assert sum(x == "faster" for x in v) / len(v) >= 0.8


def test_runs_that_never_reach_the_target() -> None:
    t = [1.0, 1.1, 0.9, 1.2, 1.0, 1.05]
    never = compare_times(t, t[::-1], [None] * 6, names=("a", "b"))
    assert never.verdict == "slower" and any("never reached" in w for w in never.warnings)
    both = compare_times([None] + t[1:], t, [None] + t[1:], names=("a", "b"))
    assert both.verdict == "not resolvable on this hardware"
    assert any("neither side" in w for w in both.warnings)
    few = compare_times(t[:3], t[:3], [x / 2 for x in t[:3]], names=("a", "b"))
    assert few.verdict == "not resolvable with 3 seeds" and "only 3 seeds" in few.warnings[0]
    with pytest.raises(ValueError, match="one time per seed"):
        compare_times(t, t, t[:5], names=("a", "b"))


def test_removed_rows_read_as_the_speed_up_of_having_the_fix() -> None:
    rng = np.random.default_rng(3)
    seeds = list(range(6))
    noisy = lambda x: list(x * np.exp(rng.normal(0, 0.02, 6)))  # noqa: E731
    times = {NAIVE: noisy(4.0), NAIVE_COPY: noisy(4.0), FULL: noisy(1.0), FULL_COPY: noisy(1.0),
             Stack.naive(["amp"]).name: noisy(2.0), Stack.full(["amp"]).name: noisy(2.0)}
    a = Ablation(target=0.5, seeds=seeds, fixes=["amp"], times=times)
    (k1, f1, alone), (k2, f2, removed) = a.rows()
    assert (k1, f1, k2, f2) == ("alone", "amp", "removed", "amp")
    assert alone.verdict == removed.verdict == "faster"
    assert alone.speedup == pytest.approx(2.0, rel=0.1) and removed.speedup == pytest.approx(2.0, rel=0.1)
    assert removed.ci[0] <= removed.speedup <= removed.ci[1]
    assert a.headline().speedup == pytest.approx(4.0, rel=0.1)
    with pytest.raises(ValueError, match="baseline"):
        a.compare("naive + amp", FULL)
    json.dumps(a.to_dict())
    import matplotlib

    matplotlib.use("Agg")
    from course_utils.plots import plot_waterfall

    ax = plot_waterfall(a)
    assert len(ax.patches) == 2  # one fix, then the interactions bar


def test_a_real_ablation_runs_every_arm_once_per_seed(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COURSE_DATA", str(tmp_path))
    prepared = speedrun.prepare("digits", "smoke", verbose=False)
    a = ablation.ablate(prepared, seeds=range(6), fixes=["no_anomaly"], device="cpu", target=0.3,
                        progress=False, warmup=False)
    arms = set(ablation.ablation_arms(["no_anomaly"]))
    assert set(a.times) == arms and all(len(v) == 6 for v in a.times.values())
    assert all(sorted(o) == sorted(arms) for o in a.orders) and len({tuple(o) for o in a.orders}) > 1
    assert all(t is not None and math.isfinite(t) for v in a.times.values() for t in v)
    assert len(a.rows()) == 2 and a.headline().rounds == 6
    json.dumps(a.to_dict())
    with pytest.raises(ValueError, match="unknown fix"):
        ablation.ablation_arms(["ampp"])
