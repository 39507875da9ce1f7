"""cu.needs: a cell that needs an unfinished exercise says which, and hides nothing else."""

import pytest

import course_utils as cu


def stub(x):
    raise NotImplementedError


STUB = compile("def stub_in_notebook(x):\n    raise NotImplementedError\n", "<ipython-input-3>", "exec")


def test_a_missing_name_names_the_exercise(capsys):
    with cu.needs("Exercise 2") as block:
        MEAN_NOT_DEFINED  # noqa: B018, F821
        raise AssertionError("not reached")
    out = capsys.readouterr().out
    assert block.skipped and out.startswith(f"{cu.lesson.exercises.MESSAGE} Exercise 2") and "MEAN_NOT_DEFINED" in out


def test_a_stub_typed_in_the_notebook_is_skipped(capsys):
    scope: dict = {}
    exec(STUB, scope)
    with cu.needs("Exercise 1", "Exercise 3") as block:
        scope["stub_in_notebook"](1)
    assert block.skipped and "Exercise 1 and Exercise 3" in capsys.readouterr().out


def test_a_stub_raised_in_a_dataloader_worker_is_skipped(capsys):
    import torch

    scope: dict = {}
    exec(compile("def item(i):\n    raise NotImplementedError()\n", "<ipython-input-4>", "exec"), scope)
    loader = torch.utils.data.DataLoader(range(2), num_workers=1,
                                         collate_fn=lambda b: scope["item"](b))
    with cu.needs("Exercise 1") as block:
        next(iter(loader))
    assert block.skipped


def test_a_stub_wrapped_by_a_timing_arm_is_skipped(capsys):
    scope: dict = {}
    exec(STUB, scope)
    with cu.needs("Exercise 1") as block:
        cu.measure.clock.call(lambda: scope["stub_in_notebook"](1), "your version")
    assert block.skipped and "Exercise 1" in capsys.readouterr().out


def test_a_real_error_wrapped_by_a_timing_arm_propagates():
    def broken():
        raise ValueError("a real problem")

    with pytest.raises(RuntimeError, match="your version"):
        with cu.needs("Exercise 1"):
            cu.measure.clock.call(broken, "your version")


def test_a_not_implemented_error_with_a_message_propagates():
    scope: dict = {}
    exec(compile("def op(x):\n    raise NotImplementedError('aten::foo is not implemented for MPS')\n",
                 "<ipython-input-5>", "exec"), scope)
    with pytest.raises(NotImplementedError, match="MPS"):
        with cu.needs("Exercise 1"):
            scope["op"](1)


def test_a_library_not_implemented_error_propagates():
    with pytest.raises(NotImplementedError):  # raised outside notebook code: a real error
        with cu.needs("Exercise 1"):
            stub(1)


@pytest.mark.parametrize("error", [AssertionError, RuntimeError, ValueError, KeyboardInterrupt])
def test_other_errors_propagate(error):
    with pytest.raises(error):
        with cu.needs("Exercise 1"):
            raise error("a real problem")


def test_a_finished_exercise_runs_untouched(capsys):
    with cu.needs("Exercise 1") as block:
        value = 41 + 1
    assert value == 42 and not block.skipped and capsys.readouterr().out == ""


def test_the_exercise_must_be_named():
    with pytest.raises(ValueError, match="name the exercise"):
        cu.needs()
