"""pytest set-up shared by everything under tests/."""

# tests/browser starts JupyterLab and Chromium, so `pytest tests` (make unit) skips it; make
# test-browser names that folder on the command line, and named paths are always collected.
collect_ignore = ["browser"]
