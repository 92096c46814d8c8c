"""Shared test settings: Hypothesis profiles.

Locally the "dev" profile runs Hypothesis' usual 100 examples without a deadline. CI
(env `CI` set, e.g. `CI=true`) selects the "ci" profile: at least 200 examples of every
property and of the core's state machine (tests/unit/test_state_machine.py), over the
fakes and over SQLite. `HYPOTHESIS_PROFILE=<name>` picks a profile explicitly.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", deadline=None)
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)
