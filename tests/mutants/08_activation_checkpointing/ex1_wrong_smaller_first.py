# kind: logic
# why: the larger segments come last (the remainder spread from the end), not first as tensor_split does
def segment_bounds(num_layers, segments):
    if num_layers < 1 or segments < 1 or segments > num_layers:
        raise ValueError(f"cannot split {num_layers} layers into {segments} segments")
    size, extra = divmod(num_layers, segments)
    bounds, start = [], 0
    for i in range(segments):
        end = start + size + (1 if i >= segments - extra else 0)
        bounds.append((start, end))
        start = end
    return bounds
