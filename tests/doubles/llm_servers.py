"""TEST DOUBLES: local HTTP servers that speak the OpenAI chat-completions, Ollama chat and
Gemini generateContent APIs and replay scripted replies.

No model service is reachable from this machine, so these stand in for the real
endpoints. They exist only so that the real HTTP clients (the ``openai``, ``ollama`` and
``google-genai`` SDKs under LangChain) can be tested end to end, over real sockets: the
production code is pointed at them through ``base_url`` like at any other server. They
never generate anything: each chat request takes the next scripted step.

A script is a list of steps:

- :class:`Reply`: answer with this text (and token counts);
- :class:`Fail`: answer with an HTTP error (429 with ``Retry-After``, 500, 401, ...);
- :class:`Stall`: hold the request without answering (the client's timeout fires).

Every request (chat or not) is recorded with its headers and JSON body, so tests can
assert what the client sent: the error and previous code on a retry, the key header.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """Answer the chat request with ``text``."""

    text: str
    tokens_in: int = 120
    tokens_out: int = 80


@dataclass(frozen=True)
class Fail:
    """Answer the chat request with HTTP ``status``."""

    status: int
    message: str = "scripted failure"
    retry_after: float | None = None


@dataclass(frozen=True)
class Stall:
    """Do not answer for ``seconds`` (or until the server stops), then drop the connection."""

    seconds: float = 30.0


Step = Reply | Fail | Stall


@dataclass(frozen=True)
class RecordedRequest:
    """What a client sent."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    def text(self) -> str:
        """All message contents of a chat request, joined (for 'does it mention X' checks)."""
        return json.dumps(self.body, ensure_ascii=False)


@dataclass
class ScriptedLLMServer:
    """Base: a threaded HTTP server on 127.0.0.1 with a script and a request log."""

    script: list[Step] = field(default_factory=list)
    models: tuple[str, ...] = ("test-model",)
    require_key: str | None = None
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    # lifecycle -----------------------------------------------------------------------
    def __enter__(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        """What a client's ``base_url`` should be set to (overridden per API)."""
        return self.origin

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The recorded chat requests, in order."""
        return [r for r in self.requests if self.is_chat(r.method, r.path)]

    def push(self, *steps: Step) -> None:
        """Append steps to the script."""
        with self._lock:
            self.script.extend(steps)

    # what subclasses provide ---------------------------------------------------------
    def is_chat(self, method: str, path: str) -> bool:
        raise NotImplementedError

    def answer(self, method: str, path: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        raise NotImplementedError

    # shared helpers ------------------------------------------------------------------
    def next_step(self) -> Step:
        with self._lock:
            if not self.script:
                return Fail(599, "the test's script has no step left for this request")
            return self.script.pop(0)

    def wait(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)


def _json(status: int, document: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(document).encode()


def _retry_headers(step: Fail) -> dict[str, str]:
    return {"Retry-After": f"{step.retry_after:g}"} if step.retry_after is not None else {}


class OpenAIServer(ScriptedLLMServer):
    """TEST DOUBLE of an OpenAI-compatible server: ``POST /v1/chat/completions``, ``GET /v1/models``."""

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def is_chat(self, method: str, path: str) -> bool:
        return method == "POST" and path == "/v1/chat/completions"

    def answer(self, method: str, path: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if self.require_key and headers.get("authorization") != f"Bearer {self.require_key}":
            return _json(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                         "code": "invalid_api_key"}})
        if method == "GET" and path == "/v1/models":
            return _json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in self.models]})
        if not self.is_chat(method, path):
            return _json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})
        step = self.next_step()
        if isinstance(step, Fail):
            return _json(step.status, {"error": {"message": step.message, "type": "scripted", "code": step.status}},
                         _retry_headers(step))
        assert isinstance(step, Reply)
        return _json(200, {
            "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", ""), "system_fingerprint": None,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": step.text}}],
            "usage": {"prompt_tokens": step.tokens_in, "completion_tokens": step.tokens_out,
                      "total_tokens": step.tokens_in + step.tokens_out},
        })


class OllamaServer(ScriptedLLMServer):
    """TEST DOUBLE of an Ollama server: ``POST /api/chat`` (streamed NDJSON or not), ``GET /api/tags``."""

    def is_chat(self, method: str, path: str) -> bool:
        return method == "POST" and path == "/api/chat"

    def answer(self, method: str, path: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if self.require_key and headers.get("authorization") != f"Bearer {self.require_key}":
            return _json(401, {"error": "unauthorized"})
        if method == "GET" and path == "/api/tags":
            return _json(200, {"models": [{"name": m, "model": m, "modified_at": "2026-01-01T00:00:00Z",
                                           "size": 1, "digest": "0" * 64} for m in self.models]})
        if not self.is_chat(method, path):
            return _json(404, {"error": f"no route {path}"})
        step = self.next_step()
        if isinstance(step, Fail):
            return _json(step.status, {"error": step.message}, _retry_headers(step))
        assert isinstance(step, Reply)
        model = body.get("model", "")
        if not body.get("stream", True):
            return _json(200, self._chunk(model, step.text, done=True, step=step))
        pieces = [step.text[i:i + 40] for i in range(0, len(step.text), 40)] or [""]
        lines = [self._chunk(model, piece) for piece in pieces] + [self._chunk(model, "", done=True, step=step)]
        payload = "".join(json.dumps(line) + "\n" for line in lines).encode()
        return 200, {"Content-Type": "application/x-ndjson"}, payload

    @staticmethod
    def _chunk(model: str, text: str, *, done: bool = False, step: Reply | None = None) -> dict[str, Any]:
        chunk: dict[str, Any] = {"model": model, "created_at": "2026-01-01T00:00:00Z",
                                 "message": {"role": "assistant", "content": text}, "done": done}
        if done and step is not None:
            chunk.update(done_reason="stop", total_duration=1_000_000, load_duration=1,
                         prompt_eval_count=step.tokens_in, eval_count=step.tokens_out)
        return chunk


class GeminiServer(ScriptedLLMServer):
    """TEST DOUBLE of the Gemini Developer API: ``POST /v1beta/models/<m>:generateContent``,
    ``GET /v1beta/models/<m>``."""

    def is_chat(self, method: str, path: str) -> bool:
        return method == "POST" and path.endswith(":generateContent")

    def answer(self, method: str, path: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if self.require_key and headers.get("x-goog-api-key") != self.require_key:
            return self._error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT")
        if method == "GET" and path.startswith("/v1beta/models/"):
            name = path.removeprefix("/v1beta/models/")
            if name not in self.models:
                return self._error(404, f"models/{name} is not found", "NOT_FOUND")
            return _json(200, {"name": f"models/{name}", "displayName": name, "version": "001",
                               "supportedGenerationMethods": ["generateContent"]})
        if not self.is_chat(method, path):
            return self._error(404, f"no route {path}", "NOT_FOUND")
        step = self.next_step()
        if isinstance(step, Fail):
            status = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}.get(step.status, "UNKNOWN")
            return self._error(step.status, step.message, status, _retry_headers(step))
        assert isinstance(step, Reply)
        return _json(200, {
            "candidates": [{"content": {"parts": [{"text": step.text}], "role": "model"},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": step.tokens_in, "candidatesTokenCount": step.tokens_out,
                              "totalTokenCount": step.tokens_in + step.tokens_out},
            "modelVersion": path.split("/")[-1].split(":")[0],
        })

    @staticmethod
    def _error(code: int, message: str, status: str,
               headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        return _json(code, {"error": {"code": code, "message": message, "status": status}}, headers)


def _handler_for(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._handle("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._handle("POST")

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?", 1)[0]
            server.record(RecordedRequest(method, path, headers, body))
            if server.is_chat(method, path) and server.script and isinstance(server.script[0], Stall):
                stall = server.next_step()
                assert isinstance(stall, Stall)
                server.wait(stall.seconds)
                self.close_connection = True
                return
            status, extra, payload = server.answer(method, path, body, headers)
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
            return

    return Handler


def closed_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens (for 'unreachable endpoint' tests)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def steps(items: Iterable[Step]) -> list[Step]:
    """A script from any iterable of steps."""
    return list(items)
