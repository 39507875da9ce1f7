import pytest
import torch

import course_utils as cu


@pytest.mark.parametrize("profile", ["smoke", "cpu", "gpu"])
def test_models_per_profile_produce_logits(profile):
    mlp = cu.make_mlp(cu.MLPConfig.for_profile(profile, in_features=64))
    assert mlp(torch.randn(3, 1, 8, 8)).shape == (3, 10)
    cnn = cu.make_convnet(cu.ConvNetConfig.for_profile(profile, in_channels=3))
    assert cnn(torch.randn(2, 3, 32, 32)).shape == (2, 10)


def test_conv_bias_switch():
    with_bias = cu.make_convnet(cu.ConvNetConfig(1, width=4, depth=2, conv_bias=True))
    without = cu.make_convnet(cu.ConvNetConfig(1, width=4, depth=2, conv_bias=False))
    # one bias per output channel of each conv: 4 + 8
    assert cu.param_count(with_bias) - cu.param_count(without) == 4 + 8
    convs = [m for m in without.modules() if isinstance(m, torch.nn.Conv2d)]
    assert all(c.bias is None for c in convs)
