"""``python -m controller run --server URL --target NAME``: a run on a sandloop service (and
``check --server URL --target NAME --parser PATH…``: a check there).

Submits the run (or the check), prints the run's own lines as the service streams them (the progress lines
and the closing summary a local run prints) and exits with the run's exit code. The
submission carries an ``Idempotency-Key``, so it is sent again after a dropped connection or
while the service restarts without ever making two runs. The stream is resumed after a
dropped connection with ``Last-Event-ID``, so nothing is printed twice or missed. Ctrl-C
cancels the run on the service, as it stops a local run.

``--interactive`` (conversational targets: intake): the run takes its replies from the
service. Each ``question`` event is shown; when stdin is a terminal the reply typed there is
posted (``POST /v1/runs/{id}/input``) and the stream goes on; otherwise the client prints how
to reply with curl and exits 75: the run waits on the service, checkpointed, for the reply.
"""

from __future__ import annotations

import argparse
import json
import logging
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import httpx

from agents.ports.errors import ConfigError, PlatformError, RunPaused
from agents.ports.replies import MAX_REPLY_CHARS
from agents.ports.status import VERDICT_ROWS
from agents.untrusted_text import one_line
from controller.entry.service.client_blueprint import blueprint_body
from controller.entry.service.client_parts import submission_parts
from controller.platform.settings import Settings

RECONNECTS = 30
RECONNECT_SECONDS = 2.0
#: Tries of a submission whose connection failed (the same Idempotency-Key each time), and the
#: first pause between them (doubled each time, at most 8 s: about a minute in all).
SUBMIT_TRIES = 10
SUBMIT_PAUSE = 0.5


class ServiceUnreachable(PlatformError):
    """The service does not answer (exit 2: the user can start it or fix the URL)."""

    exit_code = 2


class LeftWaiting(RunPaused):
    """The run waits on the service for a reply this client cannot read (stdin is no terminal)."""


#: Called with each ``question`` event's data.
OnQuestion = Callable[[dict[str, Any]], None]


class ServiceRefused(PlatformError):
    """The service answered with a problem; exit 2 for a request it refused, 3 for its own fault."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"the service refused it ({status}): {detail}")
        self.exit_code = 2 if status < 500 else 3


def run_remote(args: argparse.Namespace, settings: Settings, out: TextIO = sys.stdout) -> int:
    """Submit ``args.target`` to ``args.server``, follow it, return its exit code.

    Raises:
        ConfigError: a bad URL or an option a service does not take.
        ServiceUnreachable, ServiceRefused: the service cannot be reached or refused the run.
    """
    base = _base_url(args.server)
    if getattr(args, "blueprint", None):  # a blueprint and its files, uploaded: no folder on the service
        options = {"max_attempts": args.max_attempts, "coder": args.coder}
        return submit_and_follow(base, settings, "/v1/runs", "run", out,
                                 **blueprint_body(Path(args.blueprint), options))
    if not args.target:
        raise ConfigError("--server runs one --target or --blueprint", hint="--all and --resume run locally only")
    if args.model:
        raise ConfigError("--model is not sent to a service", hint="the service uses its own SBX_LLM__MODEL")
    interactive = bool(getattr(args, "interactive", False)) or None
    body = {k: v for k, v in (("target", args.target), ("max_attempts", args.max_attempts),
                              ("coder", args.coder), ("interactive", interactive),
                              ("subject", getattr(args, "subject", None))) if v is not None}
    return submit_and_follow(base, settings, "/v1/runs", "run", out, json=body)


def check_remote(args: argparse.Namespace, settings: Settings, out: TextIO = sys.stdout) -> int:
    """Submit a check of ``args.parser`` (files, folders, zips) against ``args.target`` to ``args.server``.

    Raises:
        ConfigError: a bad URL, or artefacts the service does not check.
        TargetError: a path that does not exist or cannot be packed.
        ServiceUnreachable, ServiceRefused: the service cannot be reached or refused the check.
    """
    base = _base_url(args.server)
    if not getattr(args, "parser", None):
        raise ConfigError("--server checks parsers (--parser)", hint="check modules, conversations and reports locally")
    fields = {k: str(v) for k, v in (("target", args.target), ("as_of", args.as_of), ("jobs", args.jobs))
              if v is not None}
    files = submission_parts(args.parser)
    return submit_and_follow(base, settings, "/v1/checks", "check", out, data=fields, files=files)


def submit_and_follow(base: str, settings: Settings, path: str, noun: str, out: TextIO, **body: Any) -> int:
    """POST ``body`` to ``path``, print the accepted line and the lines the service streams; the exit code."""
    httpx_log = logging.getLogger("httpx")
    level = httpx_log.level
    httpx_log.setLevel(logging.WARNING)  # its request lines are not the run's
    headers = {"Accept": "application/json"}
    if settings.token is not None:
        headers["Authorization"] = f"Bearer {settings.token.get_secret_value()}"
    try:
        with httpx.Client(base_url=base, headers=headers, timeout=httpx.Timeout(30.0, read=None)) as client:
            run = _json(submit(client, path, lambda line: print(line, file=out, flush=True), **body))
            run_id = str(run["id"])
            print(f"==> {base}: accepted as {noun} {run_id} ({run['status']})", file=out, flush=True)
            try:
                end = follow(client, run_id, out, answer(client, base, run_id, out))
            except LeftWaiting as waiting:
                print(waiting.one_line(), file=out, flush=True)
                return waiting.exit_code
            except KeyboardInterrupt:
                _call(client, "POST", f"/v1/runs/{run_id}/cancel", ok=(202, 409))
                print(f"interrupted: {noun} {run_id} was cancelled on the service", file=sys.stderr)
                return 130
    finally:
        httpx_log.setLevel(level)
    return exit_code(end)


def submit(client: httpx.Client, path: str, say: Callable[[str], None] = lambda _line: None,
           **body: Any) -> httpx.Response:
    """POST the submission, again after a failed connection (a restarting service), under one
    ``Idempotency-Key``: however often it is sent, the service makes one run of it. The first
    failed connection is said once through ``say``: the tries take about a minute in all.

    Raises:
        ServiceUnreachable, ServiceRefused: it never got through, or the service refused it.
    """
    headers = {"Idempotency-Key": f"sbx-client-{secrets.token_hex(16)}"}
    pause = SUBMIT_PAUSE
    for tried in range(SUBMIT_TRIES - 1):
        try:
            reply = client.request("POST", path, headers=headers, **body)
        except httpx.TransportError as exc:
            if tried == 0:
                say(f"==> {client.base_url}: no answer ({type(exc).__name__}); trying again for about a minute "
                    "(a restarting service), Ctrl-C to stop")
            time.sleep(pause)
            pause = min(pause * 2, 8.0)
            continue
        if reply.status_code not in (200, 202):
            raise _refused(reply)
        return reply
    return _call(client, "POST", path, headers=headers, **body)


def answer(client: httpx.Client, base: str, run_id: str, out: TextIO, read: TextIO | None = None) -> OnQuestion:
    """Reply to each question from the terminal, once per turn; without a terminal (or at its end
    of input) raise :class:`LeftWaiting` with the curl line that replies."""
    source = read or sys.stdin
    answered: set[int] = set()

    def on_question(data: dict[str, Any]) -> None:
        turn = data.get("turn")
        if not isinstance(turn, int) or turn in answered:
            return
        print(f"  ? {one_line(str(data.get('question', '')), 300)}", file=out, flush=True)
        line = ""
        if source.isatty():
            print("  > ", end="", file=out, flush=True)
            line = source.readline(MAX_REPLY_CHARS + 1).strip()
        if not line:
            raise LeftWaiting(f"run {run_id} waits for reply {turn}",
                              hint=f"curl -X POST {base}/v1/runs/{run_id}/input -H 'Authorization: Bearer $SBX_TOKEN' "
                                   "-H 'Content-Type: application/json' -d '{\"reply\": \"...\"}'")
        _call(client, "POST", f"/v1/runs/{run_id}/input", ok=(202, 409), json={"reply": line[:MAX_REPLY_CHARS]})
        answered.add(turn)

    return on_question


def follow(client: httpx.Client, run_id: str, out: TextIO, on_question: OnQuestion | None = None) -> dict[str, Any]:
    """Print the run's lines until its ``end`` event; the final run document. A ``question``
    event (a conversation waiting for a reply) goes to ``on_question``. A dropped stream is
    taken up again after the last event seen (``Last-Event-ID``)."""
    last: int | None = None
    failures = 0
    while True:
        headers = {"Accept": "text/event-stream", **({"Last-Event-ID": str(last)} if last is not None else {})}
        try:
            with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as reply:
                if reply.status_code != 200:
                    reply.read()
                    raise _refused(reply)
                for event_id, event, data in parse_sse_ids(reply.iter_lines()):
                    failures = 0
                    last = event_id if event_id is not None else last
                    if event == "line":
                        print(str(data.get("text", "")), file=out, flush=True)
                    elif event == "question" and on_question is not None:
                        on_question(data)
                    elif event == "end":
                        return data
        except httpx.TransportError as exc:
            failures += 1
            if failures > RECONNECTS:
                raise ServiceUnreachable(f"lost the service while following run {run_id} ({type(exc).__name__})",
                                         hint=f"see GET /v1/runs/{run_id}") from exc
        time.sleep(RECONNECT_SECONDS)  # the stream ended early (a drain, a dropped connection): again


def parse_sse(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event, JSON data) of each Server-Sent Event in ``lines``; comments and bad data skipped."""
    for _, event, data in parse_sse_ids(lines):
        yield event, data


def parse_sse_ids(lines: Iterator[str]) -> Iterator[tuple[int | None, str, dict[str, Any]]]:
    """(id, event, JSON data) of each Server-Sent Event in ``lines``; comments and bad data skipped."""
    event_id: int | None = None
    event, data = "message", ""
    for line in lines:
        if not line:
            if data:
                try:
                    parsed = json.loads(data)
                except ValueError:
                    parsed = None
                if isinstance(parsed, dict):
                    yield event_id, event, parsed
            event_id, event, data = None, "message", ""
        elif line.startswith("id:"):
            value = line[3:].strip()
            event_id = int(value) if value.isascii() and value.isdigit() else None
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()


def exit_code(run: dict[str, Any]) -> int:
    """The exit code a local run would have had, with its error line on stderr when it did not end 0/1."""
    status, code = run.get("status"), run.get("exit_code")
    if status in VERDICT_ROWS and code in (0, 1):
        return int(code)
    if status == "cancelled":
        print(f"error: run {run.get('id')} was cancelled", file=sys.stderr)
        return 130
    print(f"error: {run.get('error') or 'the run ended in error'}", file=sys.stderr)
    return int(code) if isinstance(code, int) and code in (2, 3) else 3


def _base_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--server {url[:200]!r} is not an http(s) URL", hint="e.g. http://127.0.0.1:9466")
    if parts.username or parts.password:
        raise ConfigError("--server must not carry credentials", hint="put the token in SBX_TOKEN")
    return url.rstrip("/")


def _call(client: httpx.Client, method: str, path: str, *, ok: tuple[int, ...] = (200, 202),
          **body: Any) -> httpx.Response:
    try:
        reply = client.request(method, path, **body)
    except httpx.TransportError as exc:
        raise ServiceUnreachable(f"cannot reach the service at {client.base_url} ({type(exc).__name__})",
                                 hint="is `python -m controller serve` running there?") from exc
    if reply.status_code not in ok:
        raise _refused(reply)
    return reply


def _refused(reply: httpx.Response) -> ServiceRefused:
    try:
        detail = str(reply.json().get("detail", "")) or reply.reason_phrase
    except (ValueError, AttributeError):
        detail = reply.reason_phrase
    return ServiceRefused(reply.status_code, detail[:500])


def _json(reply: httpx.Response) -> dict[str, Any]:
    data = reply.json()
    if not isinstance(data, dict) or "id" not in data:
        raise ServiceRefused(reply.status_code, "the answer is not a run or check document")
    return data
