def segment_bounds(num_layers, segments):
    if num_layers < 1 or segments < 1 or segments > num_layers:
        raise ValueError("need 1 <= segments <= num_layers")
    size, extra = divmod(num_layers, segments)
    start = lambda i: i * size + min(i, extra)  # noqa: E731
    return [(start(i), start(i + 1)) for i in range(segments)]
