#!/usr/bin/env bash
# tools/gpu_window.sh — one short GPU window, prepared: machine facts, the CUDA tests (tests/test_gpu.py and
# tests/test_syncs.py), then the reference run (tools/make_reference.py, what `make reference` runs) lesson by
# lesson with a watchdog. Everything it keeps is under $OUT, rewritten as it goes, so a window cut short still
# brings back every lesson that finished. All 20 lessons are estimated at <= 9.5 min on an H100/H200
# (tools/estimate_gpu.py); a lesson whose estimate does not fit what is left of the window is skipped.
#
# Before the window, here (a machine that reaches the package registry):
#     make wheelhouse          # wheelhouse/ (18 MB of wheels, cp311 + cp312) and data/fashion-mnist/ (30 MB of .gz)
# Then copy the tree, wheelhouse/ and data/fashion-mnist/ to the GPU machine (both folders are git-ignored;
# ~3 MB + 18 MB + 30 MB) and run there, in the repository root, with at most 10 minutes a command:
#     COURSE_GIT_COMMIT=<git rev-parse HEAD here> OUT=<folder to bring back> bash tools/gpu_window.sh
# (a copy without .git names its commit through COURSE_GIT_COMMIT, so that environment.json records it).
# More than one window: commit what the first brought back (results/reference/<machine-id>/), then make the
# same call again. Lessons saved for this machine by the same code (environment.json's code_digest) are kept,
# not rerun, and the tests run only in the first window (none saved yet); STAGES given explicitly overrides.
#
# What comes back ($OUT takes at most 8 files, 2 folders down):
#     $OUT/window.log         everything printed, with the time of each stage
#     $OUT/facts.txt          nvidia-smi, Python, torch/CUDA/cuDNN, CPU, memory, disk, the relevant packages
#     $OUT/test_gpu.log       pytest tests/test_gpu.py + test_syncs.py's CUDA tests (and test_gpu.xml)
#     $OUT/reference.tar.gz   <machine-id>/: each lesson's results (*.gpu.json) and executed notebook,
#                             environment.json (written first, rewritten after every lesson), failed/ for
#                             lessons that failed, were killed or fell back to digits (never a reference)
# Unpack it into the checkout, then commit what is good:
#     tar -xzf <files_at>/reference.tar.gz -C results/reference/
#
# Settings (environment): PY (default python3: the machine's own, with torch >= 2.5), WINDOW_S (all
# stages end by then, default 570), TESTS_S (test_gpu's limit, default 120), LESSON_S (each lesson's
# limit, default 180), LESSONS ("00 03": only those), STAGES (default "facts tests reference", without
# "tests" once a window saved lessons of this code), COURSE_DATA (default data/fashion-mnist, relative to the
# checkout), COURSE_GIT_COMMIT (and COURSE_GIT_DIRTY=1): the commit, where there is no .git.
# DRY_RUN=1 runs the whole script on a machine without a GPU: the facts, test_gpu.py (every test
# skipped, but collected), the gpu reference run (which must refuse: no GPU), then the same pipeline
# in the smoke profile on LESSONS (default 00) into a scratch folder; $OUT defaults to a temp folder.
set -u -o pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
T0=$(date +%s)
PY=${PY:-python3}
WINDOW_S=${WINDOW_S:-570}
TESTS_S=${TESTS_S:-120}
LESSON_S=${LESSON_S:-180}
STAGES_GIVEN=${STAGES:+1}
STAGES=${STAGES:-facts tests reference}
DRY_RUN=${DRY_RUN:-0}
if [ -z "${OUT:-}" ]; then
    if [ "$DRY_RUN" = 1 ]; then OUT=$(mktemp -d /tmp/gpu-window-out.XXXXXX); else echo "OUT is not set" >&2; exit 2; fi
fi
mkdir -p "$OUT"
export COURSE_OFFLINE=1 PYTHONUNBUFFERED=1
export COURSE_DATA=${COURSE_DATA:-data/fashion-mnist}
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
exec > >(tee -a "$OUT/window.log") 2>&1

elapsed() { echo $(( $(date +%s) - T0 )); }
left() { echo $(( WINDOW_S - $(elapsed) )); }
stage() { echo; echo "=== [$(elapsed) s] $*"; }
wants() { case " $STAGES " in *" $1 "*) return 0;; *) return 1;; esac; }

stage "gpu window: stages '$STAGES', $WINDOW_S s in all, OUT=$OUT, PY=$PY, dry run $DRY_RUN"

if wants facts; then
    stage "facts"
    {
        echo "date: $(date -u +%FT%TZ)"; echo "host: $(uname -a)"; echo "cpus: $(nproc)"
        free -g 2>/dev/null; df -h "$ROOT" 2>/dev/null
        echo "git: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo "no .git here; COURSE_GIT_COMMIT=${COURSE_GIT_COMMIT:-unset}")"
        if command -v nvidia-smi >/dev/null; then
            nvidia-smi
            nvidia-smi --format=csv --query-gpu=index,name,memory.total,driver_version,clocks.max.sm,clocks.sm,power.limit,pstate
        else
            echo "nvidia-smi: not on this machine"
        fi
        echo "python: $(command -v "$PY") $("$PY" --version 2>&1)"
        "$PY" - <<'EOF'
import importlib.metadata as md, os, torch
print("torch", torch.__version__, "cuda build", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
      "cuda available", torch.cuda.is_available(), "threads", torch.get_num_threads(), "cpus", os.cpu_count())
for i in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(i)
    print(f"gpu {i}: {p.name}, {p.total_memory / 2**30:.1f} GiB, sm_{p.major}{p.minor}, {p.multi_processor_count} SMs")
for name in ("torchvision", "numpy", "matplotlib", "scikit-learn", "pillow", "tqdm", "pytest", "nbclient", "nbformat",
             "jupyter_client", "ipykernel", "pyzmq", "tornado", "psutil", "debugpy", "pip"):
    try:
        print(f"  {name}=={md.version(name)}")
    except md.PackageNotFoundError:
        print(f"  {name}: not installed")
EOF
        echo "wheelhouse: $(ls "$ROOT"/wheelhouse/*.whl 2>/dev/null | wc -l) wheels, $(du -sh "$ROOT/wheelhouse" 2>/dev/null | cut -f1)"
        echo "COURSE_DATA=$COURSE_DATA: $(ls "$COURSE_DATA" 2>/dev/null | tr '\n' ' ')"
    } > "$OUT/facts.txt" 2>&1
    cat "$OUT/facts.txt"
fi

if wants tests && [ -z "$STAGES_GIVEN" ] && [ "$DRY_RUN" != 1 ] \
        && "$PY" tools/make_reference.py --saved --resume-from "$ROOT/results/reference" 2>/dev/null; then
    stage "tests: skipped (a window already saved lessons of this code; STAGES=\"facts tests\" runs them)"
    STAGES=${STAGES/tests/}
fi

if wants tests; then
    limit=$TESTS_S; [ "$(left)" -lt "$limit" ] && limit=$(left)
    stage "tests/test_gpu.py tests/test_syncs.py (limit $limit s)"
    # -o addopts="": the device has only the wheelhouse's plugins, so no addopts may name another
    timeout -k 5 "$limit" "$PY" -m pytest -o addopts="" -p no:cacheprovider -v -rs --junitxml="$OUT/test_gpu.xml" \
        tests/test_gpu.py tests/test_syncs.py -k "test_gpu.py or cuda" 2>&1 | tee "$OUT/test_gpu.log"
    echo "CUDA tests exit code: $?"
fi

if wants reference; then
    WORK="$ROOT/build/gpu-window"
    rm -rf "$WORK"; mkdir -p "$WORK"
    lessons=()
    [ -n "${LESSONS:-}" ] && lessons=(--lessons $LESSONS)
    deadline=$(( $(left) - 10 ))  # 10 s to spare: the archive is rewritten after every lesson anyway
    if [ "$DRY_RUN" = 1 ]; then
        stage "reference, gpu profile (no GPU here: must refuse and save nothing)"
        "$PY" tools/make_reference.py --out "$WORK/reference-gpu" --build "$WORK/build"
        echo "exit code: $?; saved: $(find "$WORK/reference-gpu" -type f 2>/dev/null | wc -l) file(s)"
        [ ${#lessons[@]} -eq 0 ] && lessons=(--lessons 00)
        profile=(--profile smoke)
    else
        profile=()
    fi
    stage "reference ${profile[*]:-gpu profile} ${lessons[*]:-every lesson}: $LESSON_S s a lesson, all by $deadline s from now"
    if [ "$deadline" -lt 20 ]; then
        echo "too little time left for the reference run"
    else
        # the outer watchdog: make_reference kills each lesson at its limit; this one catches anything else
        timeout -k 5 $(( deadline + 15 )) "$PY" tools/make_reference.py ${profile[@]+"${profile[@]}"} ${lessons[@]+"${lessons[@]}"} \
            --out "$WORK/reference" --build "$WORK/build" --lesson-timeout "$LESSON_S" --budget "$deadline" \
            --resume-from "$ROOT/results/reference" --archive "$OUT/reference.tar.gz"
        echo "make_reference exit code: $?"
    fi
    [ -f "$OUT/reference.tar.gz" ] && { echo "reference.tar.gz:"; tar -tzf "$OUT/reference.tar.gz"; }
fi

stage "done; $OUT holds: $(ls "$OUT" | tr '\n' ' ')"
