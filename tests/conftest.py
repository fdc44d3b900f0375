"""Shared test settings.  Tests that need ngspice or openvaf-r never skip silently: the
set-up (make test) installs them, and their absence is a failure."""

from __future__ import annotations

import os

# Under pytest-xdist every worker is one process on one core: one numba thread each, so
# that two workers on two cores do not fight over four threads.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
