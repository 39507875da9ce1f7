import torch
from torch import nn

import course_utils as cu


def small_net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def test_saved_bytes_equal_the_hand_computed_number():
    net, x = small_net(), torch.randn(5, 8)
    # Activations autograd keeps for backward (float32 = 4 bytes):
    #   the input of the first Linear, 5×8 → 160 B; the ReLU output, 5×16 → 320 B, which is also
    #   the second Linear's input (same storage, counted once). Total 480 B.
    acts = cu.saved_tensors(lambda: net(x), exclude=net.parameters())
    assert acts.bytes == 480 and acts.tensors == 2
    # The second weight is saved too, for the gradient of its input: 4×16×4 = 256 B. The first is
    # not: x does not require a gradient, so autograd needs no gradient of x.
    everything = cu.saved_tensors(lambda: net(x))
    assert everything.bytes == 480 + 256 and acts.excluded_bytes == 256
    x.requires_grad_(True)
    assert cu.saved_tensors(lambda: net(x)).bytes == 480 + 256 + 16 * 8 * 4


def test_nothing_is_saved_without_autograd():
    net, x = small_net(), torch.randn(5, 8)
    with torch.inference_mode():
        assert cu.saved_tensors(lambda: net(x)).bytes == 0


def test_param_count_and_peak_memory_off_cuda():
    net = small_net()
    assert cu.param_count(net) == 8 * 16 + 16 + 16 * 4 + 4
    net[0].weight.requires_grad_(False)
    assert cu.param_count(net, trainable_only=True) == 16 + 16 * 4 + 4
    assert cu.peak_memory(lambda: None, "cpu") is None
    assert cu.format_bytes(1536) == "1.50 KiB" and cu.format_bytes(None) == "n/a"
