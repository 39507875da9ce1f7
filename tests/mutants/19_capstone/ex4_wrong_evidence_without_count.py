# kind: logic
# why: the evidence says what was found but not the measured number (every finding carries its number)
# fails-with: does not state the count
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    n = probe.ops.get("lift_fresh", 0)
    if n == 0:
        return None
    return cu.doctor.Finding(check="tensors_from_data", problem="the step builds tensors from Python or NumPy data",
                             evidence="torch.tensor / torch.as_tensor / torch.from_numpy called inside the step",
                             value=n, lesson="07, 12", change="build them once, on the device, before the loop")
