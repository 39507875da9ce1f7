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
    assert cu.lesson.checks.rel_error(torch.tensor([1.0]), torch.tensor([1.1])) == pytest.approx(0.1 / 1.1)


# --- cu.lesson.checks.spy: which functions ran, by their code, whatever name they were called by ---

from course_utils.lesson.checks import spy  # noqa: E402


def _checkpointed(x, layer):
    from torch.utils.checkpoint import checkpoint as ckpt  # an alias import, as a learner may write it

    return ckpt(layer, x, use_reentrant=False)


def test_spy_sees_a_function_called_through_an_alias():
    layer, x = torch.nn.Linear(3, 3), torch.randn(2, 3, requires_grad=True)
    with spy("torch.utils.checkpoint.checkpoint", yours=_checkpointed) as seen:
        _checkpointed(x, layer).sum().backward()
    seen.assert_called("yours")
    seen.assert_called("torch.utils.checkpoint.checkpoint")
    assert seen.fired and seen.count("torch.utils.checkpoint.checkpoint") == 1 and "yours" in seen
    import torch.utils.checkpoint as tuc

    with spy(tuc.checkpoint) as by_object:  # the function itself (decorated: its inner code is watched)
        _checkpointed(x, layer)
    assert by_object.calls == ["torch.utils.checkpoint.checkpoint"]
    with spy(tuc.checkpoint) as plain:
        layer(x)
    assert not plain.fired
    with pytest.raises(AssertionError, match="torch.utils.checkpoint.checkpoint never ran"):
        plain.assert_called("torch.utils.checkpoint.checkpoint")


def test_spy_catches_a_reimplementation_that_calls_what_it_reimplements():
    from course_utils.measure.stats import median_ci as hidden  # aliased, and reached through another module

    def median_interval(values, level=0.95):
        return hidden(values, level)

    def written_out(values, level=0.95):
        v = sorted(values)
        return v[0], v[-1]

    values = [3.0, 1.0, 2.0, 5.0, 4.0, 7.0, 6.0]
    with spy({"cu.measure.stats.median_ci": cu.measure.stats.median_ci}, yours=median_interval) as seen:
        median_interval(values)
    seen.assert_called("yours")
    with pytest.raises(AssertionError,
                       match=r"your code calls cu\.measure\.stats\.median_ci, which this exercise asks you to write"):
        seen.assert_not_called("cu.measure.stats.median_ci")
    with pytest.raises(AssertionError, match="write the rule yourself"):
        seen.assert_not_called("cu.measure.stats.median_ci", message="write the rule yourself")
    with spy(cu.measure.stats) as module:  # a module: every function defined in it
        written_out(values)
    module.assert_not_called()
    with spy(cu.measure.stats) as module:
        median_interval(values)
    assert "course_utils.measure.stats.median_ci" in module.calls
    with pytest.raises(AssertionError, match="course_utils.measure.stats.median_ci"):
        module.assert_not_called()


def test_spy_names_targets_and_refuses_unknown_names():
    with spy(cu.pick_amp_dtype, torch.tensor) as seen:  # named cu.<name> when course_utils exports it
        cu.pick_amp_dtype("cpu", bf16_real=False)
    assert seen.watched == ["cu.pick_amp_dtype", "torch.tensor"]
    assert seen.calls == ["cu.pick_amp_dtype"]
    with pytest.raises(KeyError, match="does not watch"):
        seen.assert_called("pick_amp_dtype")
    with pytest.raises(ValueError, match="cannot import"):
        with spy("no_such_module_anywhere.f"):
            pass
    with pytest.raises(TypeError, match="cannot watch"):
        with spy(42):
            pass


def test_spy_watches_builtins_partials_and_methods():
    import functools

    import numpy as np

    array = np.zeros(3, dtype=np.float32)
    with spy(copying=torch.tensor) as seen:  # a builtin: seen through the profiler's c_call events
        torch.as_tensor(array)
    assert not seen.fired
    with spy(copying=torch.tensor) as seen:
        torch.tensor(array)
    assert seen.calls == ["copying"]

    class Model:
        def step(self, k):
            return k + 1

    model = Model()
    with spy(step=model.step, partial=functools.partial(cu.measure.stats.median_ci, level=0.9)) as seen:
        Model().step(1)
        cu.measure.stats.median_ci([1.0] * 20, 0.9)
    assert seen.calls == ["step", "partial"]


def test_the_canary_message_tells_the_learner_it_is_not_their_mistake():
    def yours():
        return 1

    with spy(yours=yours) as seen:
        pass
    with pytest.raises(AssertionError, match="the test's call detector saw nothing: run this cell again"):
        seen.assert_called("yours")


def test_spy_restores_the_previous_profiler_and_feeds_an_enclosing_spy():
    import sys

    events = []

    def previous(frame, event, arg):
        events.append(event)

    before = sys.getprofile()
    sys.setprofile(previous)
    try:
        with spy(cu.measure.stats.median_ci):
            cu.measure.stats.median_ci([1.0] * 10)
        assert sys.getprofile() is previous
        with pytest.raises(RuntimeError, match="boom"), spy(cu.measure.stats.median_ci):
            raise RuntimeError("boom")
        assert sys.getprofile() is previous
    finally:
        sys.setprofile(before)
    assert sys.getprofile() is before
    with spy(outer=cu.measure.stats.median_ci) as outer:
        with spy(inner=cu.measure.stats.order_statistic_ranks) as inner:
            cu.measure.stats.median_ci([1.0] * 10)
        assert outer.calls == ["outer"] and "inner" in inner.calls  # both saw what ran inside the inner block
    assert sys.getprofile() is before
