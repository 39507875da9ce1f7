# kind: logic
# why: always asks for persistent workers, ignoring persistent=False
# fails-with: persistent
def make_loader(dataset, batch_size, *, device, cpu_count, num_workers=None, persistent=True, prefetch_factor=None,
                multiprocessing_context=None, shuffle=True):
    if batch_size < 1 or cpu_count < 1:
        raise ValueError("batch_size and cpu_count must be >= 1")
    if num_workers is None:
        num_workers = max(cpu_count - 1, 0)
    if num_workers < 0 or (prefetch_factor is not None and prefetch_factor < 1):
        raise ValueError("num_workers must be >= 0 and prefetch_factor >= 1")
    extra = {}
    if num_workers > 0:
        extra = dict(persistent_workers=True, multiprocessing_context=multiprocessing_context)
        if prefetch_factor is not None:
            extra["prefetch_factor"] = prefetch_factor
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, num_workers=num_workers,
                      pin_memory=torch.device(device).type == "cuda", **extra)
