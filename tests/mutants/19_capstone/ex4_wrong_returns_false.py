# kind: dtype
# why: returns False when nothing is found; a check returns a Finding or None (the doctor refuses anything else)
# fails-with: could not use your check
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    n = probe.ops.get("lift_fresh", 0)
    return n > 0 and cu.doctor.Finding(check="tensors_from_data",
                                       problem="the step builds tensors from Python or NumPy data",
                                       evidence=f"{n} tensors built per step", value=n, lesson="07, 12",
                                       change="build them once, on the device, before the loop")
