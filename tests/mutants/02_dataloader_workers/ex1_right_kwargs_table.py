# A correct alternative: validates everything up front, reads the device type by parsing, and builds the
# worker-only options with a comprehension that drops the ones left at None.
def make_loader(dataset, batch_size, *, device, cpu_count, num_workers=None, persistent=True, prefetch_factor=None,
                multiprocessing_context=None, shuffle=True):
    workers = cpu_count - 1 if num_workers is None else num_workers
    problems = [name for name, bad in (("batch_size", batch_size < 1), ("cpu_count", cpu_count < 1),
                                       ("num_workers", workers < 0),
                                       ("prefetch_factor", prefetch_factor is not None and prefetch_factor < 1)) if bad]
    if problems:
        raise ValueError(f"invalid {', '.join(problems)}")
    kind = str(device).split(":", 1)[0]
    options = {"persistent_workers": persistent, "prefetch_factor": prefetch_factor,
               "multiprocessing_context": multiprocessing_context} if workers else {}
    return DataLoader(dataset, batch_size, shuffle, num_workers=workers, pin_memory=kind == "cuda",
                      **{k: v for k, v in options.items() if v is not None})
