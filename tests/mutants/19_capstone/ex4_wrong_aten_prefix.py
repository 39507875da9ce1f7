# kind: logic
# why: looks the operator up as "aten::lift_fresh" (cu.op_counts' names); the probe's names have no namespace
# fails-with: returned None
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    n = probe.ops.get("aten::lift_fresh", 0)
    if n == 0:
        return None
    return cu.doctor.Finding(check="tensors_from_data", problem="the step builds tensors from Python or NumPy data",
                             evidence=f"{n} tensors built per step", value=n, lesson="07, 12",
                             change="build them once, on the device, before the loop")
