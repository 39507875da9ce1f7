# kind: spy
# why: reads the host syncs the probe counted (lesson 07's counter) instead of the tensors the step builds
# fails-with: returned None|reported
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    if probe.syncs_per_step < 1:
        return None
    return cu.doctor.Finding(check="tensors_from_data", problem="the step copies data from the host every step",
                             evidence=f"{probe.syncs_per_step:g} host syncs per step", value=probe.syncs_per_step,
                             lesson="07, 12", change="build them once, on the device, before the loop")
