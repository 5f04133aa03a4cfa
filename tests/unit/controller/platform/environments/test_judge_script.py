"""The judge script as the environment image lays it out, run here under the controller's pandas."""

from __future__ import annotations

import ast
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from controller.platform.environments.image import CONTEXT_FILES


def frame_document(dtype: str) -> dict[str, object]:
    return {"schema": "sandloop.frame/1", "status": "ok", "columns": ["pages", "kind"], "dtypes": ["int64", dtype],
            "index": {"kind": "range", "start": 0, "stop": 1, "step": 1}, "data": [[2, "statement"]]}


@pytest.fixture
def judge_dir(tmp_path: Path) -> Path:
    """The judge/ folder of an environment image: judge.py with the controller's decoder and comparison."""
    for name, source in CONTEXT_FILES.items():
        if name.startswith("judge/"):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tmp_path / name)
    return tmp_path / "judge"


def run_judge(judge_dir: Path, document: object) -> dict[str, object]:
    work = judge_dir.parent
    (work / "result.json").write_text(json.dumps(document))
    (work / "expected.csv").write_text("pages,kind\n2,statement\n")
    subprocess.run([sys.executable, "-I", str(judge_dir / "judge.py"), str(work / "result.json"),
                    str(work / "expected.csv"), str(work / "verdict.json")], check=True, timeout=120)
    return json.loads((work / "verdict.json").read_text())


class TestJudgeScript:
    def test_every_project_module_the_judge_imports_is_in_the_image(self, judge_dir):
        """The image holds no sandloop install: each ``agents.*`` import must be a file of judge/."""
        for path in judge_dir.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agents"):
                    module = judge_dir / (node.module.replace(".", "/") + ".py")
                    assert module.is_file(), f"{path.name} imports {node.module}, which the image lacks"

    def test_equal_under_this_pandas_passes(self, judge_dir):
        """The dtype read_csv gives here for text passes, and the verdict names this pandas."""
        dtype = str(pd.read_csv(io.StringIO("k\nx\n"))["k"].dtype)
        verdict = run_judge(judge_dir, frame_document(dtype))
        assert verdict["passed"] is True and verdict["pandas"] == pd.__version__

    @pytest.mark.skipif(not pd.__version__.startswith("3"), reason="pandas 3 reads text as str")
    def test_object_text_fails_under_pandas_3(self, judge_dir):
        """What pandas 2 code returns (object text) is not equal under pandas 3: why judging happens in the env."""
        verdict = run_judge(judge_dir, frame_document("object"))
        assert verdict["passed"] is False and "dtype" in verdict["summary"]

    def test_a_malformed_result_is_an_error_verdict(self, judge_dir):
        """A result that is not a frame document gives status error, not a pass."""
        assert run_judge(judge_dir, {"schema": "nope"})["status"] == "error"
