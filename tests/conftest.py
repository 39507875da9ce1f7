"""The session's environment (smoke profile, temporary results) is set in the root conftest.py."""

# Tests and the clock (CI and learners run the tests on busy machines):
# - An assertion that depends on the wall clock (a speed ratio or verdict on real work, calls per block or
#   rounds planned from measured times, "took less than N s", a budget or deadline kept, a throughput)
#   either runs on injected times (preferred: tests/clock.py's inject_arm_seconds for cu.compare / cu.sweep,
#   VirtualClock for a module's `time`, or the planning logic such as course_utils.measure.rounds.plan_calls given
#   seconds per call), or is marked @pytest.mark.clock and retries its measurement with tests/clock.py's
#   retried, so that it fails by chance less than once in 1,000 runs.
# - A timeout that only stops a hung test is no assertion about time; leave it many times what the work takes.
# - Tests that execute notebooks, run nbgrader or torchrun, or train for long are marked @pytest.mark.slow:
#   `make check` leaves them out, `make test` runs them. Those that execute a notebook or run nbgrader are also
#   marked @pytest.mark.notebooks (`pytest -m "not notebooks"`); tests/test_markers.py finds unmarked ones.

# Fixture notebooks are inputs of the grading tests, not notebooks for nbval to execute.
collect_ignore_glob = ["fixtures/*"]

