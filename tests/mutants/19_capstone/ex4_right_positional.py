# Indexes the Counter (0 when absent) and builds the Finding positionally, as the library's own checks do.
def tensors_from_data(probe: cu.doctor.Probe) -> cu.doctor.Finding | None:
    """A finding when one training step builds tensors from Python or NumPy data; None when it builds none."""
    count = probe.ops["lift_fresh"]
    return cu.doctor.Finding("tensors_from_data", "tensors made from Python/NumPy data every step",
                             f"{count:.0f} per step (torch.tensor, torch.as_tensor, torch.from_numpy)", count,
                             "07, 12", "hoist them out of the step and put them on the device once") if count else None
