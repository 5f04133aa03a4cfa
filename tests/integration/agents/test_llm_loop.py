"""The LLM coders end to end: the real CLI, the real sandbox (Docker), the real PDF, and the
real HTTP clients talking to local scripted OpenAI / Ollama servers (tests/doubles; no
model service is reachable here).

Pins: a parser that crashes in the sandbox is fixed on attempt 2 after the error and the
code are fed back; a reply without code costs an attempt, not the run; the next run on the
target starts with the lessons of the last one; the API key reaches the model's endpoint
and nothing else (not the run folder, the parser, the output).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from controller.platform.settings import PROJECT_ROOT
from tests.doubles.llm_servers import OllamaServer, OpenAIServer, Reply, ScriptedLLMServer

pytestmark = pytest.mark.usefixtures("no_leftovers", "parser_image")

KEY = "sk-integration-3b1f9c0d7e2a4b6c"
GOOD = textwrap.dedent('''\
    import csv
    import io

    import pandas as pd
    import pdfplumber


    def parse(pdf_path):
        header, rows = None, []
        with pdfplumber.open(pdf_path) as pdf:
            for page in pdf.pages:
                for table in page.extract_tables():
                    for row in table:
                        cells = [(cell or "").strip() for cell in row]
                        if cells and cells[0] == "Date":
                            header = cells
                        elif any(cells):
                            rows.append(cells)
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(header)
        writer.writerows(rows)
        buffer.seek(0)
        return pd.read_csv(buffer)
''')
BROKEN = GOOD.replace('cells[0] == "Date"', 'cells[cells.index("Txn Date")] == "Date"')


def run_cli(tmp_path: Path, data_dir: Path, server: ScriptedLLMServer, coder: str) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
        "SBX_DATA_DIR": str(data_dir),
        "SBX_RUNS_DIR": str(tmp_path / "runs"),
        "SBX_PARSERS_DIR": str(tmp_path / "custom_parsers"),
        "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
        "SBX_LLM__BASE_URL": server.base_url,
        "SBX_LLM__MODEL": "test-model",
        "SBX_LLM__BACKOFF_SECONDS": "0",
        "OPENAI_API_KEY": KEY,
        "OLLAMA_API_KEY": KEY,
    }
    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--target", "icici", "--coder", coder],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )


def fenced(code: str, prose: str) -> str:
    return f"{prose}\n\n```python\n{code}```\n\nLet me know if the layout changes."


def user_message(request) -> str:  # noqa: ANN001
    return next(m["content"] for m in request.body["messages"] if m["role"] == "user")


def summaries(tmp_path: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted((tmp_path / "runs").glob("*/summary.json"))]


def key_free(*roots: Path) -> bool:
    files = [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]
    return bool(files) and all(KEY.encode() not in p.read_bytes() for p in files)


class TestOpenAICompatibleLoop:
    def test_crash_fixed_on_attempt_2_and_learned_by_the_next_run(self, tmp_path, icici_copy):
        """Attempt 1 raises ValueError in the sandbox; the 2nd request has the error and the code;
        attempt 2 passes; a second run's first prompt carries the lesson."""
        with OpenAIServer(models=("test-model",), require_key=KEY) as server:
            server.push(Reply(fenced(BROKEN, "Here is a parser for this statement:")),
                        Reply(fenced(GOOD, "The header cell is 'Date', not 'Txn Date'. Fixed:")))
            first = run_cli(tmp_path, icici_copy, server, "openai")
            assert first.returncode == 0, first.stdout + first.stderr
            assert re.search(r"\[attempt 1\] execute +execution_error", first.stdout)
            assert "PASSED" in first.stdout and "coder openai:test-model" in first.stdout

            fix_prompt = user_message(server.chat_requests[1])
            assert "ValueError" in fix_prompt and "'Txn Date' is not in list" in fix_prompt
            assert 'cells[cells.index("Txn Date")]' in fix_prompt

            server.push(Reply(fenced(GOOD, "Here you go.")))
            second = run_cli(tmp_path, icici_copy, server, "openai")
            assert second.returncode == 0, second.stdout + second.stderr
            learned = user_message(server.chat_requests[2])

        assert "Lessons from earlier runs" in learned and "parse() raised ValueError" in learned
        run1, run2 = summaries(tmp_path)
        assert (run1["attempts"], run1["failures"], run1["coder"]) == (2, ["execution_error"], "openai:test-model")
        assert (run2["status"], run2["attempts"]) == ("passed", 1)
        run2_dir = Path(str(run2["run_dir"]))
        run2_dir = run2_dir if run2_dir.is_absolute() else tmp_path / run2_dir
        assert "fixed later by attempt 2 (openai:test-model/fix-execution)" in (run2_dir / "lessons.md").read_text()
        attempt_1 = tmp_path / "runs" / str(run1["run_id"]) / "attempts" / "1"
        assert {"prompt.md", "reply.md", "llm.json", "parser.py", "sandbox.json"} <= {
            p.name for p in attempt_1.iterdir()}
        assert (tmp_path / "custom_parsers" / "icici_parser.py").read_text() == GOOD

        assert server.chat_requests[0].headers["authorization"] == f"Bearer {KEY}"
        assert key_free(tmp_path / "runs", tmp_path / "custom_parsers")
        assert KEY not in first.stdout + first.stderr + second.stdout + second.stderr


class TestOllamaLoop:
    def test_reply_without_code_costs_one_attempt(self, tmp_path, icici_copy):
        """Ollama answers with prose first: attempt 1 is no_code (never sandboxed), attempt 2 passes."""
        with OllamaServer(models=("test-model",)) as server:
            server.push(Reply("To parse this statement I would first look at the table header."),
                        Reply(fenced(GOOD, "Sorry, here is the code:")))
            proc = run_cli(tmp_path, icici_copy, server, "ollama")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert re.search(r"\[attempt 1\] generate +no_code", proc.stdout) and "PASSED" in proc.stdout
        (summary,) = summaries(tmp_path)
        assert (summary["attempts"], summary["failures"]) == (2, ["no_code"])
        attempts = tmp_path / "runs" / str(summary["run_id"]) / "attempts"
        assert not (attempts / "1" / "sandbox.json").exists() and (attempts / "2" / "sandbox.json").exists()
        assert "could not be used" in user_message(server.chat_requests[1])
