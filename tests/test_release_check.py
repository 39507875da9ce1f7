"""tools/release_check.py (`make release-check`): a stale, missing or orphaned student notebook is named.

The comparison is tested here on small folders; `make check` and .ci/run run the real check (nbgrader
generates the release into a temporary folder and it is compared with the committed notebooks/).
"""

import json

from tools import release_check as rc

NB = {"cells": [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": "# 00 · Title"}],
      "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def write(folder, lesson, name, nb, indent=1):
    path = folder / lesson / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, indent=indent))
    return path


def test_the_same_notebooks_differ_in_nothing_whatever_their_json_layout(tmp_path):
    fresh, committed = tmp_path / "fresh", tmp_path / "notebooks"
    write(fresh, "00_x", "00_x.ipynb", NB, indent=4)
    write(committed, "00_x", "00_x.ipynb", NB, indent=1)
    assert rc.differences(fresh, committed, ["00_x"]) == []
    assert rc.orphans(committed, ["00_x"]) == []


def test_a_stale_a_missing_and_an_extra_notebook_are_each_named(tmp_path):
    fresh, committed = tmp_path / "fresh", tmp_path / "notebooks"
    write(fresh, "00_x", "00_x.ipynb", NB)
    write(committed, "00_x", "00_x.ipynb", {**NB, "cells": [{**NB["cells"][0], "source": "# 00 · Old title"}]})
    write(fresh, "01_y", "01_y.ipynb", NB)
    write(fresh, "02_z", "02_z.ipynb", NB)
    write(committed, "02_z", "02_z.ipynb", NB)
    write(committed, "02_z", "old_name.ipynb", NB)
    problems = rc.differences(fresh, committed, ["00_x", "01_y", "02_z"])
    assert problems == ["notebooks/00_x/00_x.ipynb is stale: run make release A=00_x",
                        "notebooks/01_y/01_y.ipynb is missing: run make release A=01_y",
                        "notebooks/02_z/old_name.ipynb is not in a fresh release (no source in solutions/02_z/): "
                        "remove it"], problems


def test_a_committed_lesson_without_a_source_is_named(tmp_path):
    committed = tmp_path / "notebooks"
    write(committed, "00_x", "00_x.ipynb", NB)
    write(committed, "07_gone", "07_gone.ipynb", NB)
    assert rc.orphans(committed, ["00_x"]) == ["notebooks/07_gone/ has no lesson in solutions/: remove it"]


def test_an_unknown_lesson_is_refused_before_nbgrader_runs(capsys):
    assert rc.main(["99_no_such_lesson"]) == 2
    assert "no such lesson in solutions/: 99_no_such_lesson" in capsys.readouterr().out
