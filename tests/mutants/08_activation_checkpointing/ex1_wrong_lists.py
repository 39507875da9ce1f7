# kind: structure
# why: returns [start, end] lists instead of (start, end) tuples
# fails-with: tuple
def segment_bounds(num_layers, segments):
    if num_layers < 1 or segments < 1 or segments > num_layers:
        raise ValueError(f"cannot split {num_layers} layers into {segments} segments")
    size, extra = divmod(num_layers, segments)
    starts = [i * size + min(i, extra) for i in range(segments + 1)]
    return [[a, b] for a, b in zip(starts, starts[1:])]
