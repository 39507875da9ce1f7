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


# --- releases: one version, a changelog that covers every moved name, a reproducible lock -----------------------

def changelog_sections() -> dict[str, str]:
    """``## [X.Y.Z]`` section of CHANGELOG.md -> its text."""
    text = (ROOT / "CHANGELOG.md").read_text()
    parts = re.split(r"^## \[([^\]]+)\].*$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def moved_rows(section: str) -> dict[str, str]:
    """``| `cu.old` | `cu.new` |`` rows of a changelog section: old name -> new path."""
    return dict(re.findall(r"^\| `cu\.([\w.]+)` \| `([\w.]+)` \|$", section, flags=re.M))


def test_the_version_is_written_once_and_the_changelog_has_its_section():
    import course_utils as cu

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "course_utils.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", cu.__version__)
    sections = changelog_sections()
    assert cu.__version__ in sections, f"CHANGELOG.md has no section ## [{cu.__version__}]"
    assert sections[cu.__version__].strip(), "the release's section is empty"
    versions = [v for v in sections if v != "Unreleased"]
    assert versions == sorted(versions, key=Version, reverse=True), "sections newest first"


def test_the_changelog_lists_every_moved_name_with_its_new_path():
    import course_utils as cu

    rows = moved_rows(changelog_sections()["0.2.0"])
    expected = {old: ((f"{module}.{attr}" if attr else module).replace("course_utils.", "cu.", 1))
                for old, (module, attr) in cu._MOVED.items()}
    table = "\n".join(f"| `cu.{old}` | `{new}` |" for old, new in sorted(expected.items(), key=lambda r: r[0].lower()))
    missing = sorted(expected.keys() - rows.keys())
    assert not missing, f"moved but not in CHANGELOG.md: {missing}; the rows _MOVED gives:\n{table}"
    wrong = {old: (rows[old], new) for old, new in expected.items() if rows[old] != new}
    assert not wrong, f"CHANGELOG.md gives another new path (changelog, _MOVED): {wrong}; the rows:\n{table}"


def test_the_changelog_check_fails_on_a_missing_or_wrong_row():
    section = "| `cu.stats` | `cu.measure.stats` |\n| `cu.Stack` | `cu.capstone.fixes.Stack` |\n"
    assert moved_rows(section) == {"stats": "cu.measure.stats", "Stack": "cu.capstone.fixes.Stack"}
    assert "timing" not in moved_rows(section)


def test_the_lock_is_what_make_lock_writes():
    from tools import lock

    text = (ROOT / "requirements-lock.txt").read_text()
    assert "make lock" in "\n".join(lock.header(text)) and "\nlock:" in (ROOT / "Makefile").read_text()
    body = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lock.pins("\n".join(body)) == body, "the lock is not in make lock's order (sorted by lower-cased name)"
    freeze = "Zope==1.0\n-e /work/course\ncourse_utils==0.2.0\nalpha-b==2\n# comment\nalpha==1\nBeta==3\n"
    assert lock.pins(freeze) == ["alpha-b==2", "alpha==1", "Beta==3", "Zope==1.0"]


def test_pre_commit_hooks_run_commands_that_exist():
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert all(repo["repo"] == "local" for repo in config["repos"])  # nothing downloaded
    assert {"ruff", "stripped-notebooks", "release-check"} <= {hook["id"] for hook in hooks}
    targets = set(re.findall(r"^([a-z-]+):", (ROOT / "Makefile").read_text(), flags=re.M))
    for hook in hooks:
        assert hook["language"] == "system", hook
        words = hook["entry"].split()
        if words[0] == "make":
            assert words[-1] in targets, f"{hook['id']}: no make target {words[-1]}"
        else:
            assert (ROOT / words[0]).name == "python" or (ROOT / words[0]).exists(), hook["entry"]
        for path in re.findall(r"(?:tests|tools)/[\w/]+\.py", hook["entry"]):
            assert (ROOT / path).exists(), f"{hook['id']}: {path} does not exist"


def test_ci_runs_lint_the_release_check_nbval_and_the_tests():
    ci = (ROOT / ".ci" / "run").read_text()
    steps = [line.split("#")[0].strip() for line in ci.splitlines() if line.strip().startswith("make ")]
    names = [s.split()[1] for s in steps]
    assert names[:4] == ["data", "lint", "release-check", "typecheck"], names
    assert "nbval" in names and "test" in names and names.index("nbval") < names.index("test")
    make = (ROOT / "Makefile").read_text()
    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"].get("addopts", "")
    assert "nbval" not in addopts, "plain pytest must work without nbval's flags"
    assert "--nbval-lax" in make and "\nnbval:" in make
