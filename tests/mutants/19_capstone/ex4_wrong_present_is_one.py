# kind: logic
# why: reports whether lift_fresh is there (value 1), not how many tensors the step builds
# fails-with: number of such tensors per step
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    if "lift_fresh" not in probe.ops:
        return None
    return cu.doctor.Finding(check="tensors_from_data", problem="the step builds tensors from Python or NumPy data",
                             evidence="tensors built from Python or NumPy data every step", value=1.0,
                             lesson="07, 12", change="build them once, on the device, before the loop")
