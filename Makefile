# Faster PyTorch Training — 17 tricks, measured.
# `make run` and `make test` work on a fresh machine with Python 3.11 and pip: they create .venv
# and install the pinned stack (requirements-lock.txt) first, and again only when it changes.

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
# `PY=python3 make reference` (or `make reference PY=python3`): the reference run with a Python that
# has its own torch, without the course's .venv. Read before PY is set below.
REF_PY_GIVEN := $(filter environment command line,$(origin PY))
REF_PY       := $(PY)
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# JupyterLab refuses to start as root (containers, Colab-like VMs) unless told it may.
ROOT_ARGS := $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root)
# nbgrader reads NBGRADER_* settings; keep grading folders next to this Makefile.
ASSIGNMENTS := $(sort $(notdir $(wildcard solutions/[0-9]*)))

.PHONY: help data run reference wheelhouse test test-grading compat check release-check typecheck nbval lock speedrun doctor calibrate lab lint release autograde autograde-slurm grades feedback collect zip-collect check-submissions formgrader clean distclean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 20

$(STAMP): requirements-lock.txt pyproject.toml
	@test -x $(PY) || { echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	@echo "installing the pinned course environment into $(VENV) (torch is large: a few minutes the first time)"
	$(PY) -m pip install --disable-pip-version-check --quiet -r requirements-lock.txt
	$(PY) -m pip install --disable-pip-version-check --quiet --no-deps --no-build-isolation -e .
	@touch $(STAMP)

data: $(STAMP)  ## Fashion-MNIST into the data cache (Debian package, else download, else say digits)
	$(PY) tools/get_data.py

run: $(STAMP) data  ## execute every lesson (A="02 17": some) headless into build/, then print the scoreboard
	$(PY) tools/run_notebooks.py $(if $(A),--lessons $(A))

# With PY given, or with COURSE_OFFLINE=1, `make reference` needs neither the .venv (pip against the
# registry) nor `make data` (apt-get): tools/make_reference.py installs what is missing from wheelhouse/
# and finds Fashion-MNIST through COURSE_DATA itself.
REF_OFFLINE := $(filter-out 0,$(strip $(COURSE_OFFLINE)))
REF_DEPS    := $(if $(REF_PY_GIVEN)$(REF_OFFLINE),,$(STAMP) data)
REF_RUN     := $(if $(REF_PY_GIVEN),$(REF_PY),$(if $(REF_OFFLINE),$(if $(wildcard $(PY)),$(PY),python3),$(PY)))

reference: $(REF_DEPS)  ## on a CUDA GPU: every lesson in the gpu profile into results/reference/<machine-id>/ (PY=python3: any torch >= 2.5)
	$(REF_RUN) tools/make_reference.py $(if $(A),--lessons $(A)) $(REF_ARGS)

wheelhouse:  ## wheels for `make reference` on a Python without the Jupyter stack (cp311, cp312), + Fashion-MNIST .gz in data/
	$(if $(REF_PY_GIVEN),$(REF_PY),$(if $(wildcard $(PY)),$(PY),$(PYTHON))) tools/wheelhouse.py

test: $(STAMP) data  ## unit tests, structure, every lesson autograded good + blank (smoke profile)
	$(PY) -m pytest -m "not grading and not gpu_profile"

test-grading: $(STAMP)  ## attacks on the grader, JOBS=2 and SLURM against serial (needs bubblewrap; SLURM: root, slurm-wlm, munge)
	$(PY) -m pytest -m grading

compat: $(STAMP)  ## unit tests + every lesson (smoke) on the floor torch and the GPU box's stack, venvs in build/compat/ (STACK=floor|gpu-box, A="14 18")
	$(PY) tools/compat.py $(STACK) $(if $(A),--lessons $(A))

check: lint release-check typecheck  ## ruff, the release check, mypy, then every test not marked slow (no notebook, nbgrader or torchrun run): ~3 min
	$(PY) -m pytest -m "not slow"

release-check: $(STAMP)  ## what `make release` writes is committed: notebooks/ (regenerated into a temporary folder; stale files named) and lessons.json: seconds
	$(PY) tools/release_check.py $(A)
	$(PY) tools/lesson_facts.py --check

typecheck: $(STAMP)  ## mypy on course_utils and tools (settings and known exceptions: [tool.mypy] in pyproject.toml)
	$(PY) -m mypy

# nbval's options live here, not in pyproject.toml's addopts: plain pytest works without nbval.
NBVAL_ARGS := --nbval-lax --nbval-current-env --nbval-sanitize-with=tests/nbval_sanitize.cfg --nbval-cell-timeout=300
nbval: $(STAMP) data  ## one lesson under nbval, smoke profile: every cell runs without error (A=NN_slug or A=NN; ~1 min)
	$(PY) -m pytest -p no:cacheprovider $(NBVAL_ARGS) \
		$(or $(wildcard $(A:%=solutions/%*/*.ipynb)),$(error make nbval A=<NN_slug or NN>: no lesson in solutions/ matches '$(A)'))

lock: $(STAMP)  ## requirements-lock.txt = pip freeze of .venv, header kept (CHECK=1: only show what would change; FRESH=1: resolve anew in build/lock-venv)
	$(PY) tools/lock.py $(if $(filter-out 0,$(CHECK)),--check) $(if $(filter-out 0,$(FRESH)),--fresh)

speedrun: $(STAMP) data  ## the stacked speed-run to a target accuracy, outside a notebook (ARGS="--naive --seeds 6 ..."; ARGS=--help lists the options)
	$(PY) -m course_utils.capstone.cli $(ARGS)

doctor: $(STAMP) data  ## diagnose a training script, each fix timed here (SCRIPT=my_train.py, default the capstone's naive one; ARGS="--no-measure", ARGS=--help)
	$(PY) -m course_utils.doctor $(or $(SCRIPT),course_utils/doctor/examples/naive_train.py) $(ARGS)

calibrate: $(STAMP)  ## real A/A comparisons of real workloads: false-verdict rates with intervals, saved (~10 min; ARGS="--comparisons 100")
	$(PY) -m course_utils.calibration $(ARGS)

lab: $(STAMP)  ## open JupyterLab on the student notebooks (LAB_ARGS=<extra jupyter lab options>)
	$(PY) -m jupyter lab notebooks/ $(ROOT_ARGS) $(LAB_ARGS)

lint: $(STAMP)  ## ruff on the library, tests, tools and the solution notebooks (their rules: pyproject.toml)
	$(PY) -m ruff check course_utils tests tools nbgrader_config.py solutions

clean:  ## remove generated files (keeps .venv, results and grading folders)
	rm -rf build .pytest_cache .ruff_cache
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +

distclean: clean  ## also remove .venv
	rm -rf $(VENV)

# --- grading ---
# nbgrader workflow for instructors; INSTRUCTORS.md walks through it. Optional variables:
# A=<assignment ...> (default: all), STUDENT=<student ...> (autograde only them),
# FROM=<folder of <student>/<assignment>/>, TIMEOUT=<s per cell>, SHOW_HIDDEN=1 (feedback shows
# hidden tests), JOBS=<submissions at once>, UNSAFE=1 (grade without bubblewrap, with your rights),
# LAB_ARGS=<extra jupyter lab options>. nbgrader runs `alembic` from the venv,
# so PATH has the venv first.
GRADING := PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) tools/grading.py

release: $(STAMP)  ## regenerate notebooks/ from solutions/ with nbgrader (no gradebook), and the lessons' facts (lessons.json)
	$(GRADING) release $(A)
	$(PY) tools/lesson_facts.py

collect: $(STAMP)  ## copy FROM=<folder>/<student>/<assignment>/ into submitted/
	@test -n "$(FROM)" || { echo "usage: make collect FROM=<folder of <student>/<assignment>/>"; exit 2; }
	$(GRADING) collect "$(FROM)"

zip-collect: $(STAMP)  ## import LMS files downloaded/<a>/archive/<student>__<a>.ipynb
	$(GRADING) zip-collect $(A)

check-submissions: $(STAMP)  ## name every damaged submission in submitted/ and what is wrong
	$(PY) tools/check_submissions.py $(A)

autograde: $(STAMP)  ## grade submitted/: each kernel in a sandbox, JOBS at once (default: CPUs); damaged set aside
	COURSE_PROFILE=smoke $(GRADING) autograde $(A) $(if $(TIMEOUT),--timeout $(TIMEOUT)) \
		$(if $(JOBS),--jobs $(JOBS)) $(if $(filter-out 0,$(UNSAFE)),--unsafe) $(foreach s,$(STUDENT),--student $(s))

autograde-slurm: $(STAMP)  ## grade submitted/ as a SLURM job array (PER_TASK=<n>, SBATCH_ARGS="...", SUBMIT=0, WAIT=1); then make grades
	COURSE_PROFILE=smoke $(GRADING) autograde-slurm $(A) $(if $(TIMEOUT),--timeout $(TIMEOUT)) \
		$(if $(PER_TASK),--per-task $(PER_TASK)) $(if $(filter 0,$(SUBMIT)),--no-submit) $(if $(filter-out 0,$(WAIT)),--wait) \
		$(if $(SBATCH_ARGS),--sbatch-args "$(SBATCH_ARGS)") $(if $(filter-out 0,$(UNSAFE)),--unsafe) $(foreach s,$(STUDENT),--student $(s))

grades: $(STAMP)  ## score finished SLURM runs, then merge into grades.csv (A=<one> keeps the other rows): student, assignment, score, status
	$(GRADING) grades $(A)

feedback: $(STAMP)  ## write feedback/<student>/<a>/<a>.html (hidden tests hidden)
	COURSE_FEEDBACK_SHOW_HIDDEN=$(SHOW_HIDDEN) $(GRADING) feedback $(A)

formgrader: $(STAMP)  ## JupyterLab at the course root, to grade written answers
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m jupyter lab --ServerApp.root_dir="$(CURDIR)" \
		--LabApp.default_url=/formgrader $(ROOT_ARGS) $(LAB_ARGS)
