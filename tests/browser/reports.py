"""The reports the browser tests write under build/accessibility/, put together from both xdist workers."""

import fcntl
import json
import os
import uuid

# This run of pytest, the same in each xdist worker (merged_report).
SESSION = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex


def merged_report(path, entries):
    """entries ({name: JSON-able}) merged with those the other workers of this run wrote to path's .json
    sidecar (an earlier run's are dropped); returns them all, for the report at path.

    Each xdist worker checks its own lessons, and both write one report (build/accessibility/)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    store = path.with_suffix(".json")
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            old = json.loads(store.read_text()) if store.exists() else {}
        except ValueError:
            old = {}
        started = old.pop("_session", None) == SESSION
        merged = {**(old if started else {}), **entries}
        store.write_text(json.dumps({"_session": SESSION, **merged}))
    return merged
