"""The environment is declared in three places; they must agree, and importing must change nothing."""

import re
import subprocess
import sys
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def lock_pins():
    pins = {}
    for line in (ROOT / "requirements-lock.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"unpinned line in the lock file: {line!r}"
            pins[name.lower().replace("_", "-")] = version
    return pins


def test_lock_pins_the_course_stack():
    pins = lock_pins()
    expected = {"torch": "2.14.1", "torchvision": "0.29.1", "nbgrader": "0.9.6", "nbval": "0.11.0"}
    for name, version in expected.items():
        assert pins[name] == version
    for name in ("jupyterlab", "matplotlib", "pytest", "tqdm", "scikit-learn"):
        assert name in pins


def test_environment_yml_mirrors_the_lock():
    pins = lock_pins()
    text = (ROOT / "environment.yml").read_text()
    assert "python=3.11" in text
    env_pins = dict(re.findall(r"^\s+- ([A-Za-z0-9_.\-]+)==([^\s]+)$", text, flags=re.M))
    assert len(env_pins) >= 10
    for name, version in env_pins.items():
        assert pins.get(name.lower()) == version, f"environment.yml pins {name}=={version}, lock {pins.get(name)}"


def test_pyproject_minimums_are_met_by_the_lock():
    pins = lock_pins()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + project["optional-dependencies"]["dev"]
    for req in map(Requirement, reqs):
        name = req.name.lower()
        assert name in pins, f"{name} is a dependency but not in the lock file"
        assert Version(pins[name]) in req.specifier, f"lock {name}=={pins[name]} violates {req}"
        assert not any(s.operator == "==" for s in req.specifier), f"pyproject must not pin {req}"


def test_makefile_and_ci_use_the_lock_and_the_readme_command():
    make = (ROOT / "Makefile").read_text()
    assert "requirements-lock.txt" in make
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make run" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


STATE = r"""
import json, random, sys, warnings
import numpy as np, torch
def state():
    return json.dumps({
        "threads": torch.get_num_threads(), "dtype": str(torch.get_default_dtype()),
        "torch_rng": torch.random.get_rng_state().sum().item(), "py_rng": hash(random.getstate()),
        "np_rng": int(np.random.get_state()[1].sum()), "grad": torch.is_grad_enabled(),
        "anomaly": torch.is_anomaly_enabled(), "benchmark": torch.backends.cudnn.benchmark,
        "deterministic": torch.backends.cudnn.deterministic,
        "tf32": [torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32],
        "matmul_precision": torch.get_float32_matmul_precision(),
        "warnings": len(warnings.filters), "matplotlib": "matplotlib" in sys.modules,
    }, sort_keys=True)
before = state()
import course_utils
after = state()
print(before == after, before, after)
"""


def test_import_changes_no_global_state():
    out = subprocess.run([sys.executable, "-c", STATE], capture_output=True, text=True, check=True).stdout
    assert out.startswith("True"), out
    assert '"matplotlib": false' in out  # plotting is imported only when a plot is drawn
