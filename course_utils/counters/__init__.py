"""Deterministic metrics of one call: host syncs, saved tensors, peak memory, autograd graphs, profiler tables.

No verdicts and no clock-based statistics: what these count is the same on every run.
"""

# ``cu.counters.<module>.<name>`` always resolves:
from . import graphs, memory, profiling, sync_patches, sync_rules, syncs  # noqa: F401
