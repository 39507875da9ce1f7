# kind: logic
# why: the finding names lesson 12 only; the copy every step is lesson 07's (host-device traffic)
# fails-with: lessons 07 and 12
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    n = probe.ops.get("lift_fresh", 0)
    if n == 0:
        return None
    return cu.doctor.Finding(check="tensors_from_data", problem="the step builds tensors from Python or NumPy data",
                             evidence=f"{n} tensors built per step", value=n, lesson="12",
                             change="build them once, on the device, before the loop")
