"""Every collected test has a node id of its own (tests/conftest.py): pytest-xdist keys its scope
queue by node id, so tests sharing one were silently run once in a parallel ``make test``."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import pytest

from controller.platform.settings import PROJECT_ROOT
from tests.conftest import _own_node_ids


@dataclass
class _Item:
    nodeid: str
    name: str
    parent: None = None


def test_the_schema_tests_each_have_an_id():
    """schemathesis makes one item per API operation; each must carry its operation in its id."""
    listed = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                             "tests/unit/controller/entry/service/test_schema.py"],
                            cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, check=True)
    ids = [line for line in listed.stdout.splitlines() if "::" in line]
    assert len(ids) > 10
    assert len(set(ids)) == len(ids)
    assert any(line.endswith("[GET /v1/runs]") for line in ids)


def test_a_shared_id_that_cannot_be_told_apart_stops_the_session():
    with pytest.raises(pytest.UsageError, match="1 node id"):
        _own_node_ids([_Item("tests/x.py::t", "t"), _Item("tests/x.py::t", "t")])  # type: ignore[list-item]


def test_distinct_ids_pass():
    _own_node_ids([_Item("tests/x.py::t", "t"), _Item("tests/x.py::u", "u")])  # type: ignore[list-item]
