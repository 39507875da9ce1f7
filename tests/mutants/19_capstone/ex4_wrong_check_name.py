# kind: logic
# why: the finding's check is named after the function it calls, not "tensors_from_data" (the report and
# cu.capstone.versus_doctor look it up by name)
# fails-with: not 'tensors_from_data'
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    n = probe.ops.get("lift_fresh", 0)
    if n == 0:
        return None
    return cu.doctor.Finding(check="torch.tensor", problem="the step builds tensors from Python or NumPy data",
                             evidence=f"{n} tensors built per step", value=n, lesson="07, 12",
                             change="build them once, on the device, before the loop")
