# kind: dtype
# why: np.array_split gives the right ranges, but as NumPy integers instead of Python ints
# fails-with: int
def segment_bounds(num_layers, segments):
    if num_layers < 1 or segments < 1 or segments > num_layers:
        raise ValueError(f"cannot split {num_layers} layers into {segments} segments")
    return [(part[0], part[-1] + 1) for part in np.array_split(np.arange(num_layers), segments)]
