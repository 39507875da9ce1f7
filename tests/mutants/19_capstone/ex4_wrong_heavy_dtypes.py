# kind: logic
# why: looks at the dtypes of the step's matmuls (a float32 step is "built from data") instead of lift_fresh
# fails-with: value is|reported
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    n = probe.heavy_dtypes.get("float32", 0) + probe.heavy_dtypes.get("float64", 0)
    if not n:
        return None
    return cu.doctor.Finding(check="tensors_from_data", problem="the step computes on tensors from host data",
                             evidence=f"{n} tensor(s) from host data per step", value=n, lesson="07, 12",
                             change="build them once, on the device, before the loop")
