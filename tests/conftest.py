"""The session's environment (smoke profile, temporary results) is set in the root conftest.py."""

# Fixture notebooks are inputs of the grading tests, not notebooks for nbval to execute.
collect_ignore_glob = ["fixtures/*"]
