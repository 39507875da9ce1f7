"""A lesson's spies cannot be fooled: run 08's real test cell against crafted answers, in-process.

The grading round-trip proves every lesson gives full marks to its solution and zero to a blank
release; this proves the other side on one exercise: an answer that skips the trick fails with a
message that names the mistake (the spy saw nothing), and a correct answer written with an alias
import (which fooled the old spy) passes.
"""

import copy

import nbformat
import pytest
import torch
from torch import nn

import course_utils as cu
from tests.test_structure import ROOT, nbg

LESSON = ROOT / "solutions" / "08_activation_checkpointing" / "08_activation_checkpointing.ipynb"

PLAIN = '''
class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        self.layers = layers
        self.bounds = segment_bounds(len(layers), segments)

    def forward(self, x):
        return self.layers(x)  # runs every layer plainly: nothing is checkpointed
'''

ALIASED = '''
from torch.utils.checkpoint import checkpoint as ck

class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        self.layers = layers
        self.bounds = segment_bounds(len(layers), segments)

    def forward(self, x):
        last = len(self.bounds) - 1
        for i, (a, b) in enumerate(self.bounds):
            seg = self.layers[a:b]
            use = self.training and torch.is_grad_enabled() and i < last
            x = ck(seg, x, use_reentrant=False) if use else seg(x)
        return x
'''


def cell(nb, grade_id):
    return next(c.source for c in nb.cells if nbg(c).get("grade_id") == grade_id)


def run_tests(answer: str) -> None:
    nb = nbformat.read(LESSON, as_version=4)
    ns = {"torch": torch, "nn": nn, "copy": copy, "cu": cu}
    exec(compile(cell(nb, "ex1_answer"), "ex1_answer", "exec"), ns)  # segment_bounds, the solution's
    exec(compile(answer, "answer", "exec"), ns)
    exec(compile(cell(nb, "ex2_tests"), "ex2_tests", "exec"), ns)


def test_an_answer_that_skips_checkpointing_fails_because_the_spy_saw_nothing():
    with pytest.raises(AssertionError, match="nothing was checkpointed"):
        run_tests(PLAIN)


def test_a_correct_answer_with_an_alias_import_passes():
    run_tests(ALIASED)
