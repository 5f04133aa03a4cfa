"""Each test configures logging itself (uncached loggers) and gets a clean slate afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from controller.platform.observability.logs import reset_logging


@pytest.fixture(autouse=True)
def clean_logging() -> Iterator[None]:
    """Undo configure_logging after each test: structlog defaults, our root handler removed."""
    yield
    reset_logging()
