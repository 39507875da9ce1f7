# kind: work
# why: adds the host syncs to the count ("both are host-device traffic"): a step that logs loss.item() and builds
# nothing from data is reported
# fails-with: no tensor from Python or NumPy data
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    n = probe.ops.get("lift_fresh", 0) + probe.syncs_per_step
    if n == 0:
        return None
    return cu.doctor.Finding(check="tensors_from_data", problem="the step moves data between host and device",
                             evidence=f"{n:g} host-device transfers per step", value=n, lesson="07, 12",
                             change="build them once, on the device, before the loop")
