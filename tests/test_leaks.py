"""Hidden-test text is withheld from feedback however a student's code encodes it (no nbgrader run)."""

from __future__ import annotations

import base64
import bz2
import codecs
import gzip
import json
import lzma
import random
import sys
import time
import urllib.parse
import zlib
from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import leaks  # noqa: E402
from tools.nbgrader_plugins import HideHiddenTests  # noqa: E402

SHARED = "assert model.fc1.weight.shape == (128, 784), \"fc1 maps 784 pixels to 128 units\""
HIDDEN = "\n".join([
    SHARED,  # also a visible test: not secret
    "_x = torch.randn(64, 784, generator=torch.Generator().manual_seed(7))",
    "_logits = model(_x)",
    "assert _logits.shape == (64, 10), f\"expected (64, 10) logits, got {tuple(_logits.shape)}\"",
    "assert torch.allclose(_logits.sum(), torch.tensor(-3.2817), atol=1e-3), \"the seeded forward pass changed\"",
    "_opt = make_optimizer(model, lr=0.05)",
    "assert isinstance(_opt, torch.optim.SGD) and _opt.defaults[\"momentum\"] == 0.9, \"SGD with momentum 0.9\"",
    "assert abs(_opt.param_groups[0][\"lr\"] - 0.05) < 1e-12, \"the learning rate you were given\"",
    "_loss = train_one_epoch(model, _opt, tiny_loader(seed=11))",
    "assert 0.41 < _loss < 0.47, f\"one epoch on the tiny loader gives a loss ≈ 0.44 ± 0.03, got {_loss:.3f}\"",
])
VISIBLE = "\n".join([
    "# Exercise 3: a two-layer MLP trained with SGD",
    "import torch",
    "from torch import nn",
    "class MLP(nn.Module):",
    "    def __init__(self):",
    "        super().__init__()",
    "        self.fc1, self.fc2 = nn.Linear(784, 128), nn.Linear(128, 10)",
    "    def forward(self, x):",
    "        return self.fc2(torch.relu(self.fc1(x)))",
    "model = MLP()",
    "def make_optimizer(model, lr):",
    "    return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)",
    SHARED,
    "assert model(torch.zeros(2, 784)).shape == (2, 10), \"the forward pass returns 10 logits per image\"",
    "print(\"visible tests passed\")",
])
PRINTS = leaks.fingerprints(HIDDEN, VISIBLE)


ATTACKS = {  # what a student's cell could print -> the encoding leak() must name
    "plain": HIDDEN,
    "reversed": HIDDEN[::-1],
    "rot13": codecs.encode(HIDDEN, "rot13"),
    "base64": base64.b64encode(HIDDEN.encode()).decode(),
    "urlsafe-base64": base64.urlsafe_b64encode(HIDDEN.encode("utf-16")).decode(),  # its BOM gives "__"
    "base32": base64.b32encode(HIDDEN.encode()).decode(),
    "base85": base64.b85encode(HIDDEN.encode()).decode(),
    "ascii85": base64.a85encode(HIDDEN.encode()).decode(),
    "hex": HIDDEN.encode().hex(),
    "percent": urllib.parse.quote(HIDDEN, safe=""),
    "escapes": "".join(f"\\x{ord(c):02x}" for c in HIDDEN),
    "char codes": str([ord(c) for c in HIDDEN]),
    "html": "".join(f"&#{ord(c)};" for c in HIDDEN),
    "zlib+base64": base64.b64encode(zlib.compress(HIDDEN.encode())).decode(),
    "gzip+base64": base64.b64encode(gzip.compress(HIDDEN.encode())).decode(),
    "bz2+base64": base64.b64encode(bz2.compress(HIDDEN.encode())).decode(),
    "lzma+base64": base64.b64encode(lzma.compress(HIDDEN.encode())).decode(),
    "zlib+hex": zlib.compress(HIDDEN.encode()).hex(),
    "zlib+escapes": repr(zlib.compress(HIDDEN.encode())),
    "base64+base64": base64.b64encode(base64.b64encode(HIDDEN.encode())).decode(),
    "base64+reversed": base64.b64encode(HIDDEN.encode()).decode()[::-1],
}
MORE_ATTACKS = [  # other ways to print the same encodings
    ("plain", "".join(f"\x1b[3{i % 8}m{c}" for i, c in enumerate(HIDDEN))),  # colours between letters
    ("plain", "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in HIDDEN)),  # fullwidth
    ("plain", " ".join(HIDDEN)),
    ("base64", base64.encodebytes(HIDDEN.encode()).decode()),  # wrapped at 76 columns
    ("base64", "\n".join(base64.b64encode(HIDDEN.encode()).decode()[j : j + 10] for j in range(0, 900, 10))),
    ("base64", "Exception: " + base64.b64encode(HIDDEN.encode("utf-16")).decode()),
    ("hex", HIDDEN.encode().hex(" ")),
    ("hex", ", ".join(f"0x{b:02x}" for b in HIDDEN.encode())),
    ("char codes", "\n".join(str(ord(c)) for c in HIDDEN)),
    ("char codes", str(list(HIDDEN.encode()))),
    ("escapes", "".join(f"\\u{ord(c):04x}" for c in HIDDEN)),
    ("html", f"<pre>{''.join(f'<span>{c}</span>' for c in HIDDEN)}</pre>"),
]
SAMPLES = list(ATTACKS.values())


def test_fingerprints_leave_out_what_the_notebook_shows():
    assert len(PRINTS) > 300 and all(len(p) == leaks.K for p in PRINTS)
    shared = leaks.normalise(SHARED)
    assert not any(p in shared for p in PRINTS)
    assert leaks.leak(SHARED, PRINTS) is None and leaks.leak(VISIBLE, PRINTS) is None
    assert leaks.fingerprints("assert f(2) == 'secret value'", "assert f(1) == 1") == {"assertf2secretvalue"}
    assert leaks.fingerprints("x = 1", "") == set()  # too short to tell from ordinary output
    assert set("-_") & set(ATTACKS["urlsafe-base64"])  # the attack below is not plain base64


@pytest.mark.parametrize("name", list(ATTACKS))
def test_each_encoding_is_found_and_named(name):
    assert leaks.leak(ATTACKS[name], PRINTS) == name
    assert leaks.leak(f"epoch 3: loss 0.4412\n{ATTACKS[name]}\ndone\n", PRINTS) == name


@pytest.mark.parametrize(("name", "text"), MORE_ATTACKS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(MORE_ATTACKS)])
def test_other_prints_of_an_encoding_are_found(name, text):
    assert leaks.leak(text, PRINTS) == name


def test_a_leak_in_a_later_part_of_the_hidden_text_is_found():
    tail = HIDDEN[len(HIDDEN) // 2 :]
    assert leaks.leak(base64.b32encode(tail.encode()).decode(), PRINTS) == "base32"
    assert leaks.leak("assert 0.41 < _loss < 0.47, f\"one epoch on", PRINTS) == "plain"


def test_a_leak_split_over_three_outputs_is_found_and_narrowed():
    norm = leaks.normalise(HIDDEN)
    pieces = [norm[200:210], norm[210:220], norm[220:230]]  # two of them are shorter than a fingerprint
    texts = ["loss 0.52", "visible tests passed", *pieces, "accuracy 0.91"]
    assert all(leaks.leak(t, PRINTS) is None for t in texts)
    assert leaks.leaking_window(texts, PRINTS) == (2, 5, "plain")
    packed = base64.b64encode(bz2.compress(HIDDEN.encode())).decode()  # bz2 inflates whole blocks only
    third = len(packed) // 3
    thirds = [packed[:third], packed[third : 2 * third], packed[2 * third :]]
    texts = ["step 1", *thirds, "step 2"]
    assert all(leaks.leak(t, PRINTS) is None for t in texts)
    assert leaks.leaking_window(texts, PRINTS) == (1, 4, "bz2+base64")
    assert leaks.leaking_window(["a", "b", "loss 0.3"], PRINTS) is None


TRACEBACK = "\n".join([  # of the student's own mistake
    "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
    "\x1b[0;31mRuntimeError\x1b[0m                              Traceback (most recent call last)",
    "Cell \x1b[0;32mIn[5]\x1b[0m, line 3",
    "\x1b[1;32m      1\x1b[0m model \x1b[38;5;241m=\x1b[39m MLP()",
    "\x1b[0;32m----> 3\x1b[0m _ \x1b[38;5;241m=\x1b[39m model(torch\x1b[38;5;241m.\x1b[39mzeros("
    "\x1b[38;5;241m2\x1b[39m, 100))",
    "File \x1b[0;32m~/course/.venv/lib/python3.11/site-packages/torch/nn/modules/linear.py:116\x1b[0m, "
    "in Linear.forward",
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x100 and 784x128)",
])
ORDINARY = {
    "numbers": "0.4412\n3.14159\n[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n",
    "passed": "visible tests passed\n",
    "own traceback": TRACEBACK,
    "tensor": str([[round(random.Random(i).random(), 4) for i in range(j, j + 10)] for j in range(0, 100, 10)]),
    "log": "\n".join(f"epoch {e} step {s}: loss {0.9 / (1 + e + s / 100):.6f} lr 0.05 momentum 0.9"
                     for e in range(20) for s in range(0, 500, 50)),
    "png": base64.b64encode(b"\x89PNG\r\n\x1a\n" + random.Random(0).randbytes(150_000)).decode(),
    "visible source": VISIBLE,
    "hash": "sha256 " + "".join(random.Random(1).choice("0123456789abcdef") for _ in range(64)),
}


@pytest.mark.parametrize("name", list(ORDINARY))
def test_ordinary_output_is_not_a_leak(name):
    assert leaks.leak(ORDINARY[name], PRINTS) is None


def test_an_image_output_is_read_by_its_text_chunks():
    def chunk(kind: bytes, body: bytes) -> bytes:
        return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")

    pixels = chunk(b"IDAT", zlib.compress(random.Random(2).randbytes(100_000)))
    plot = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", bytes(13)) + pixels
    ordinary = {"output_type": "display_data", "metadata": {},
                "data": {"image/png": base64.b64encode(plot + chunk(b"IEND", b"")).decode(), "text/plain": "<Figure>"}}
    assert leaks.leak(leaks.output_text(ordinary), PRINTS) is None
    hidden_text = chunk(b"zTXt", b"Comment\x00\x00" + zlib.compress(HIDDEN.encode()))
    ordinary["data"]["image/png"] = base64.b64encode(plot + hidden_text + chunk(b"IEND", b"")).decode()
    assert leaks.leak(leaks.output_text(ordinary), PRINTS) == "plain"  # inflated by output_text


def test_a_huge_output_is_withheld_in_bounded_time():
    huge = "abcdefghij 0123456789\n" * 230_000
    start = time.perf_counter()
    assert leaks.leak(huge, PRINTS) == leaks.TOO_BIG
    assert leaks.leaking_window(["ok", huge], PRINTS) == (1, 2, leaks.TOO_BIG)
    assert time.perf_counter() - start < 2
    start = time.perf_counter()
    nested = base64.b64encode(base64.b85encode(random.Random(4).randbytes(600_000))).decode()
    assert leaks.leak(nested[:900_000], PRINTS) in (None, leaks.TOO_BIG)  # never more than the budget
    assert time.perf_counter() - start < leaks.SECONDS + 2


# --- HideHiddenTests on a notebook ------------------------------------------------------------

def _grade_cell(source: str, outputs: list, count: int) -> dict:
    cell = new_code_cell(source, execution_count=count, outputs=outputs)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": f"test_{count}", "locked": True, "points": 1,
                                 "solution": False, "schema_version": 3, "task": False}
    return cell


def _widgets(value: str) -> dict:
    state = {"m1": {"model_name": "TextModel", "model_module": "@jupyter-widgets/controls", "state": {"value": value}}}
    return {"application/vnd.jupyter.widget-state+json": {"state": state, "version_major": 2, "version_minor": 0}}


def _notebook():
    hidden_block = f"### BEGIN HIDDEN TESTS\n{HIDDEN}\n### END HIDDEN TESTS"
    b64 = ATTACKS["base64"]
    norm = leaks.normalise(HIDDEN)
    tb = ["Cell \x1b[0;32mIn[4]\x1b[0m, line 1", "----> 1 assert check(model)", "AssertionError: " + b64]
    return new_notebook(cells=[
        new_markdown_cell("# Exercise 3\nTrain the MLP with SGD."),
        new_code_cell(VISIBLE, execution_count=1, outputs=[new_output("stream", name="stdout", text="ok\n")]),
        _grade_cell(f"{SHARED}\nprint(\"visible tests passed\")\n{hidden_block}", count=2, outputs=[
            new_output("stream", name="stdout", text="visible tests passed\n"),
            new_output("error", ename=ATTACKS["base32"], evalue="", traceback=[  # a class named by the student
                "Cell \x1b[0;32mIn[2]\x1b[0m, line 5", "----> 5 _logits = model(_x)"])]),
        new_code_cell("import base64\nprint(base64.b64encode(get_ipython().user_ns['In'][2].encode()).decode())",
                      execution_count=3, outputs=[
                          new_output("stream", name="stdout", text="epoch 1: loss 0.52\n"),
                          new_output("stream", name="stdout", text=b64 + "\n"),
                          new_output("display_data", data={"text/html": f"<code>{ATTACKS['hex']}</code>",
                                                           "text/plain": "<IPython.core.display.HTML object>"}),
                          new_output("error", ename="ValueError", evalue=ATTACKS["rot13"], traceback=[])]),
        _grade_cell("assert check(model)", count=4, outputs=[
            new_output("error", ename="AssertionError", evalue=b64, traceback=tb)]),
        new_code_cell("print(_stash[200:210])", execution_count=5,
                      outputs=[new_output("stream", name="stdout", text=norm[200:210] + "\n")]),
        new_code_cell("print(_stash[210:220])", execution_count=6,
                      outputs=[new_output("stream", name="stdout", text=norm[210:220] + "\n")]),
        new_code_cell("print(_stash[220:230]); print(1 + 1)", execution_count=7, outputs=[
            new_output("stream", name="stdout", text=norm[220:230] + "\n"),
            new_output("execute_result", data={"text/plain": "2"}, execution_count=7)]),
    ])


def test_hide_hidden_tests_withholds_every_encoded_leak():
    nb = _notebook()
    nb.metadata["widgets"] = _widgets(ATTACKS["hex"])  # an ipywidgets Text the student showed
    nb, resources = HideHiddenTests(public_packages=["course_utils"]).preprocess(nb, {})
    assert "widgets" not in nb.metadata and (-1, "hex") in resources["course_leaks"]
    norm = leaks.normalise(HIDDEN)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            text = leaks.output_text(output)
            assert leaks.leak(text, PRINTS) is None, (cell.source, text)
            dumped = json.dumps(output)
            assert not any(sample[200:240] in dumped for sample in SAMPLES), dumped
            assert not any(norm[i : i + 10] in leaks.normalise(text) for i in range(200, 230, 10)), text
    assert (3, "base64") in resources["course_leaks"] and (3, "hex") in resources["course_leaks"]
    assert (3, "rot13") in resources["course_leaks"] and (4, "base64") in resources["course_leaks"]
    assert (2, "base32") in resources["course_leaks"]  # the message "A hidden test failed: <ename>" is checked too
    assert [(i, n) for i, n in resources["course_leaks"] if "split" in n] == [
        (5, "plain, split over 3 outputs"), (6, "plain, split over 3 outputs"), (7, "plain, split over 3 outputs")]
    assert nb.cells[3].outputs[0].text == "epoch 1: loss 0.52\n"  # the student's own output stays
    assert nb.cells[3].outputs[1].text == "(an output that held hidden-test text, encoded as base64, was removed)\n"
    assert nb.cells[7].outputs[-1].data["text/plain"] == "2"
    assert "# (hidden tests: not shown)" in nb.cells[2].source and "_logits" not in nb.cells[2].source


def test_hide_hidden_tests_leaves_an_ordinary_notebook_alone():
    nb = _notebook()
    nb.cells = nb.cells[:3] + [new_code_cell("x", execution_count=3, outputs=[
        new_output("stream", name="stdout", text=text) for text in ORDINARY.values()])]
    nb.metadata["widgets"] = _widgets("100%|██████████| 938/938 [00:12<00:00, 75.1it/s]")  # a tqdm bar
    before = json.dumps([nb.cells[3].outputs, nb.metadata["widgets"]])
    nb, resources = HideHiddenTests(public_packages=[]).preprocess(nb, {})
    assert json.dumps([nb.cells[3].outputs, nb.metadata["widgets"]]) == before
    assert resources["course_leaks"] == [(2, "base32")]


def test_text_students_can_read_in_public_packages_is_not_secret():
    hidden = "with pytest.raises(TypeError) as _e:\n    parse(7)\n" \
             "assert str(_e.value).startswith('the JSON object must be str, bytes or bytearray')"
    message = "the JSON object must be str, bytes or bytearray, not int"

    def notebook():
        own_error = new_output("error", ename="TypeError", evalue=message, traceback=[f"TypeError: {message}"])
        return new_notebook(cells=[_grade_cell(f"### BEGIN HIDDEN TESTS\n{hidden}\n### END HIDDEN TESTS", [], 1),
                                   new_code_cell("json.loads(7)", execution_count=2, outputs=[own_error])])

    _, resources = HideHiddenTests(public_packages=["json"]).preprocess(notebook(), {})
    assert resources["course_leaks"] == []  # the message is in json's source: the student's own error stays
    _, resources = HideHiddenTests(public_packages=[]).preprocess(notebook(), {})
    assert resources["course_leaks"] == [(1, "plain")]


def test_past_max_split_leaks_everything_left_is_withheld():
    hide = HideHiddenTests(public_packages=[])
    hide.MAX_SPLIT_LEAKS = 1
    nb, resources = hide.preprocess(_notebook(), {})
    assert resources["course_leaks"][-1] == (7, leaks.TOO_BIG)  # cells 5-7 leak joined, then "2" is withheld
    assert nb.cells[7].outputs[-1].text == "(an output too big to check for hidden-test text was removed)\n"
