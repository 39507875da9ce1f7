import pytest
import torch

import course_utils as cu


def test_assert_close_passes_and_explains_failures():
    cu.assert_close(torch.ones(3), torch.ones(3) + 1e-9)
    with pytest.raises(AssertionError, match=r"loss: got 1\.5, expected 1 \(difference 0\.5"):
        cu.assert_close(1.5, 1.0, name="loss")
    with pytest.raises(AssertionError, match=r"1 of 4 elements differ; first at index \(1, 0\)"):
        cu.assert_close(torch.tensor([[0.0, 0.0], [2.0, 0.0]]), torch.zeros(2, 2))
    with pytest.raises(AssertionError, match="shape"):
        cu.assert_close(torch.zeros(2), torch.zeros(3))


def test_assert_grads_close_names_the_parameter():
    a, b = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
    b.load_state_dict(a.state_dict())
    x = torch.randn(4, 2)
    a(x).sum().backward()
    b(x).sum().backward()
    cu.assert_grads_close(a, b)
    b.bias.grad += 1
    with pytest.raises(AssertionError, match="gradient of bias"):
        cu.assert_grads_close(a, b)
    assert cu.rel_error(torch.tensor([1.0]), torch.tensor([1.1])) == pytest.approx(0.1 / 1.1)
