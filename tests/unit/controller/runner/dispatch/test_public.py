"""The dispatch package's public face: the names HTTP may use, resolved at first use.

Its ``__init__`` imports nothing of the engine eagerly, because the warm parent imports
``warm_child`` (and so the package) and every run's fork would otherwise carry the workers'
store and engine imports.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from controller.runner import dispatch


def test_every_public_name_is_the_inner_modules_own():
    assert sorted(dispatch.__all__) == sorted(dispatch.PUBLIC)
    for name, module in dispatch.PUBLIC.items():
        assert getattr(dispatch, name) is getattr(importlib.import_module(f"controller.runner.dispatch.{module}"), name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'workers_pool'"):
        dispatch.workers_pool  # noqa: B018


def test_the_warm_parents_module_imports_no_store_or_workers():
    code = ("import sys, controller.runner.dispatch.warm_child; "
            "print(sorted(m for m in sys.modules if m.startswith(('controller.platform.store', "
            "'controller.runner.dispatch.workers', 'sqlalchemy', 'docker'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
