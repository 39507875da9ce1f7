# kind: logic
# why: cuts at round(i * n / k): sizes differ by at most one, but the larger ones are not all first
def segment_bounds(num_layers, segments):
    if num_layers < 1 or segments < 1 or segments > num_layers:
        raise ValueError(f"cannot split {num_layers} layers into {segments} segments")
    cuts = [round(i * num_layers / segments) for i in range(segments + 1)]
    return list(zip(cuts, cuts[1:]))
