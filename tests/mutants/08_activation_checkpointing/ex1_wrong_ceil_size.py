# kind: logic
# why: every segment ceil(n / k) long and the last one cut short: sizes can differ by more than one
def segment_bounds(num_layers, segments):
    if num_layers < 1 or segments < 1 or segments > num_layers:
        raise ValueError(f"cannot split {num_layers} layers into {segments} segments")
    size = -(-num_layers // segments)
    return [(min(i * size, num_layers - 1), min((i + 1) * size, num_layers)) for i in range(segments)]
