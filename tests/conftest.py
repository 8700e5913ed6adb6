"""Test-session settings.

Hypothesis explores new random examples on every local run (that is how it finds bugs), while CI
(``make test`` sets ``HYPOTHESIS_PROFILE=ci``) runs a fixed, derandomized set of examples so that a
landing is reproducible: the same commit gives the same verdict.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
