"""Other processes: the fork server and child runner behind ``cu.in_processes``, ``torchrun`` and SLURM launches.

``launch`` (``torchrun``, what a rank reports), ``slurm`` (a SLURM batch script with every node on this
machine), ``supervise`` (their output streamed, the whole process tree stopped) and ``sources`` (source
written to a file for a fresh process: a module, or a function's source run on N ranks).
"""

from . import launch, slurm, sources, supervise  # noqa: F401  (``cu.procs.<module>.<name>`` always resolves)
