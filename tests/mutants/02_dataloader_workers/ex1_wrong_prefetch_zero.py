# kind: validation
# why: `if prefetch_factor and ...` skips the check for prefetch_factor=0 (falsy), which then silently becomes the default
# fails-with: prefetch_factor
def make_loader(dataset, batch_size, *, device, cpu_count, num_workers=None, persistent=True, prefetch_factor=None,
                multiprocessing_context=None, shuffle=True):
    if batch_size < 1 or cpu_count < 1:
        raise ValueError("batch_size and cpu_count must be >= 1")
    if num_workers is None:
        num_workers = max(cpu_count - 1, 0)
    if num_workers < 0:
        raise ValueError("num_workers must be >= 0")
    if prefetch_factor and prefetch_factor < 1:
        raise ValueError("prefetch_factor must be >= 1")
    extra = {}
    if num_workers > 0:
        extra = dict(persistent_workers=persistent, multiprocessing_context=multiprocessing_context,
                     prefetch_factor=prefetch_factor or 2)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, num_workers=num_workers,
                      pin_memory=torch.device(device).type == "cuda", **extra)
