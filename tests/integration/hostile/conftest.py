"""Fixtures of the hostile-parser suite: a run folder per test, the baseline memory of a
benign ``check``, and the limits every test reads its bounds from."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from controller.platform.settings import Settings
from tests.conftest import ICICI
from tests.integration.hostile.harness import MIB, controller_env, run_controller, tree

#: Limits of this suite (small where the point is shape, not volume): 8 MiB collected;
#: a generous timeout, since nothing here should hang (a busy machine runs slowly).
SUITE_ENV = {
    "SBX_SANDBOX__COLLECT_BYTES": str(8 * MIB),
    "SBX_SANDBOX__TIMEOUT_SECONDS": "60",
}
#: The timeout of the tests whose parsers hang on purpose.
HANG_TIMEOUT = {"SBX_SANDBOX__TIMEOUT_SECONDS": "20"}
#: Memory the controller may use above a benign check's peak while handling any attack:
#: a few times the collect cap (raw bytes, text, parsed values) plus slack for threads.
HEADROOM = 160 * MIB
BENIGN = "import pandas as pd\n\ndef parse(pdf_path):\n    return pd.DataFrame({'a': [1]})\n"


@pytest.fixture(scope="session", autouse=True)
def _runtime_registered(sandbox_runtime: str) -> str:
    """The suite runs under SBX_SANDBOX_RUNTIME (make test-gvisor: runsc), which the engine must list."""
    return sandbox_runtime


@pytest.fixture(scope="session")
def suite_settings() -> Settings:
    """The settings the controller children run with (read back from SUITE_ENV)."""
    return Settings(_env_file=None, sandbox={"collect_bytes": 8 * MIB, "timeout_seconds": 60})  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def baseline_rss(tmp_path_factory: pytest.TempPathFactory, parser_image: str) -> int:
    """Peak RSS of ``check`` on two benign parsers: what any controller here needs anyway."""
    root = tmp_path_factory.mktemp("baseline")
    data = root / "data"
    shutil.copytree(ICICI, data / "icici")
    for name in ("one", "two"):
        (root / f"{name}.py").write_text(BENIGN)
    finished = run_controller(root, controller_env(root, data, **SUITE_ENV), "check", "--target", "icici",
                              "--parser", str(root / "one.py"), str(root / "two.py"))
    assert finished.code == 1, finished.stdout + finished.stderr  # both run, both mismatch
    return finished.peak_rss


@pytest.fixture
def workspace(tmp_path: Path, parser_image: str):  # noqa: ANN201
    """A data folder with icici, a parsers folder, and a snapshot to compare the tree with."""
    data = tmp_path / "data"
    shutil.copytree(ICICI, data / "icici")
    (tmp_path / "parsers").mkdir()
    return tmp_path, data


def assert_nothing_written_outside_runs(tmp_path: Path, before: dict[str, tuple[int, int]]) -> None:
    """Only runs/ may have changed under the controller's working folder."""
    after = {k: v for k, v in tree(tmp_path).items() if not k.startswith("runs/")}
    assert after == {k: v for k, v in before.items() if not k.startswith("runs/")}
