"""One rule for a test whose host lacks what it needs (a program, a server, the engine).

On a developer's machine the test skips with one line naming what is missing; when
``CI=true`` the same line fails it, because CI never counts a skip as a pass.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(what: str) -> NoReturn:
    """Skip the calling test (fail it under CI=true) because ``what`` is missing."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI needs {what}", pytrace=False)
    pytest.skip(what)
