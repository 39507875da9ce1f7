# kind: validation
# why: no error for more segments than layers: it returns empty segments
def segment_bounds(num_layers, segments):
    if num_layers < 1 or segments < 1:
        raise ValueError(f"cannot split {num_layers} layers into {segments} segments")
    size, extra = divmod(num_layers, segments)
    bounds, start = [], 0
    for i in range(segments):
        end = start + size + (1 if i < extra else 0)
        bounds.append((start, end))
        start = end
    return bounds
