"""The timing engine and every verdict: the clock, interleaved rounds, the loop, the statistics, compare and sweep.

Layers, bottom up: ``clock`` and ``rounds`` (time calls, plan rounds), ``engine`` (the one measurement
loop), ``stats`` and ``analysis`` (per-round times in, a verdict out: no clock, tested on injected times),
``comparison``, ``formatting`` and ``wording`` (what a verdict prints), ``compare`` and ``sweep`` (the entry points),
``processes`` (arms in fresh processes), ``convergence``, ``target_comparison`` and ``rates`` (seed-level
verdicts), ``forcing`` (forced verdicts for tests). It imports only ``env``, ``units``, ``devices``,
``hardware``, ``progress`` and ``procs`` below it.
"""

# ``cu.measure.<module>.<name>`` always resolves:
from . import (  # noqa: F401
    analysis,
    clock,
    compare,
    comparison,
    convergence,
    engine,
    figures,
    forcing,
    formatting,
    options,
    processes,
    rates,
    rounds,
    stats,
    sweep,
    target_comparison,
    wording,
)
