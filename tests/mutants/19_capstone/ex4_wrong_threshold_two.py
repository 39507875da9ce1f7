# kind: inputs
# why: a threshold above one tensor per step: one tensor rebuilt every step (the naive script's weights) is missed
# fails-with: returned None
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    n = probe.ops.get("lift_fresh", 0)
    if n < 2:  # one small constant is harmless
        return None
    return cu.doctor.Finding(check="tensors_from_data", problem="the step builds tensors from Python or NumPy data",
                             evidence=f"{n} tensors built per step", value=n, lesson="07, 12",
                             change="build them once, on the device, before the loop")
