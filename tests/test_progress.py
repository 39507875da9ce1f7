"""course_utils.progress: a bar leaves its final state, or nothing, in an executed notebook.

tqdm.auto alone saves "  0%|          | 0/5 [00:00<?, ?it/s]" (the widget's text when first shown)
even for a finished bar, and even with ``leave=False``.
"""

from __future__ import annotations

import json

import nbformat
import pytest
from tqdm.notebook import tqdm_notebook
from tqdm.std import tqdm as text_bar

from course_utils.progress import in_kernel, progress_bar
from tools.run_notebooks import execute_notebook

pytestmark = pytest.mark.slow  # executes notebooks in a kernel: not in `make check`

CELLS = {  # name -> code run in one kernel, in this order
    "widget": "from course_utils.progress import progress_bar\n"
              "with progress_bar(5, 'widget') as bar:\n    for _ in range(5): bar.update(1)",
    "widget gone": "with progress_bar(5, 'widget gone', leave=False) as bar:\n    for _ in range(5): bar.update(1)",
    "widget short": "bar = progress_bar(5, 'widget short')\nbar.update(2)\nbar.close()",
    "widget short gone": "bar = progress_bar(5, 'widget short gone', leave=False)\nbar.update(2)\nbar.close()",
    "text": "import tqdm.notebook\ntqdm.notebook.IProgress = None  # as without ipywidgets\n"
            "with progress_bar(5, 'text') as bar:\n    for _ in range(5): bar.update(1)",
    "text gone": "with progress_bar(5, 'text gone', leave=False) as bar:\n    for _ in range(5): bar.update(1)",
    "disabled": "with progress_bar(5, 'disabled', disable=True) as bar:\n    for _ in range(5): bar.update(1)",
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, list[dict]]:
    """name -> the outputs its cell left in the executed notebook."""
    tmp = tmp_path_factory.mktemp("progress")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS.values()]),
                   tmp / "bars.ipynb")
    run = execute_notebook(tmp / "bars.ipynb", tmp, timeout=60)
    assert not run.error, run.error
    return {name: [dict(o) for o in cell.outputs] for name, cell in zip(CELLS, run.nb.cells)}


def texts(outputs: list[dict]) -> list[str]:
    return [o.get("data", {}).get("text/plain", "") if o["output_type"] != "stream" else o["text"] for o in outputs]


@pytest.mark.notebooks
@pytest.mark.parametrize("name", ["widget", "text"])
def test_a_finished_bar_saves_its_final_state(saved, name):
    (out,) = saved[name]
    assert out["output_type"] == "display_data"
    assert out["data"]["text/plain"].startswith(f"{name}: 100%|") and "| 5/5 [" in out["data"]["text/plain"]
    assert ("application/vnd.jupyter.widget-view+json" in out["data"]) is (name == "widget")


@pytest.mark.notebooks
@pytest.mark.parametrize("name", ["widget gone", "widget short gone", "text gone", "disabled"])
def test_a_bar_that_leaves_nothing_saves_nothing(saved, name):
    assert not any(texts(saved[name])), saved[name]


@pytest.mark.notebooks
def test_a_bar_closed_short_of_its_total_keeps_where_it_stopped(saved):
    (text,) = texts(saved["widget short"])
    assert text.startswith("widget short:  40%|") and "| 2/5 [" in text


@pytest.mark.notebooks
def test_no_saved_output_shows_a_stale_start(saved):
    assert " 0%|" not in json.dumps(saved, ensure_ascii=False)


def test_outside_a_kernel_it_is_tqdm_on_stderr(capsys):
    assert not in_kernel()
    with progress_bar(3, "plain", unit="run") as bar:
        for _ in range(3):
            bar.update(1)
    assert type(bar) is text_bar and not isinstance(bar, tqdm_notebook)
    assert "plain: 100%" in capsys.readouterr().err and str(bar).startswith("plain: 100%") and "3/3" in str(bar)
    with progress_bar(3, "off", disable=True) as bar:
        bar.update(3)
    assert capsys.readouterr() == ("", "")
