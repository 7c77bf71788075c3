"""Test-wide settings. In CI (CI=true) hypothesis draws the same examples every run, so a red CI is always
reproducible here; locally it keeps exploring new examples."""
from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
