# Sums every overload-free name that starts with lift_fresh, returns a float value, words of its own.
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    n = sum(probe.ops[k] for k in probe.ops if k.startswith("lift_fresh"))
    if not n:
        return None
    return cu.doctor.Finding(check="tensors_from_data",
                             problem="constants are re-created from host data inside the training step",
                             evidence=f"lift_fresh dispatched {n} times in one step", value=float(n),
                             lesson="12 and 07", change="create the tensors once, already on the device")
