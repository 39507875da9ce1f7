# kind: logic
# why: checkpoint_sequential's split: equal segments and the whole remainder in the last one
def segment_bounds(num_layers, segments):
    if num_layers < 1 or segments < 1 or segments > num_layers:
        raise ValueError(f"cannot split {num_layers} layers into {segments} segments")
    size = num_layers // segments
    bounds = [(i * size, (i + 1) * size) for i in range(segments - 1)]
    return bounds + [((segments - 1) * size, num_layers)]
