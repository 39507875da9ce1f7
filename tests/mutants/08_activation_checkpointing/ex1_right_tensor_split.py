def segment_bounds(num_layers, segments):
    if not 1 <= segments <= num_layers:
        raise ValueError(f"cannot split {num_layers} layers into {segments} non-empty segments")
    parts = torch.tensor_split(torch.arange(num_layers), segments)
    return [(int(p[0]), int(p[-1]) + 1) for p in parts]
