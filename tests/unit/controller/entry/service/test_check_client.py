"""``check --server``: what is sent for each --parser path, the submission through a mock service
(multipart, then the streamed lines, then the exit code), and the check's record and child
command on the service's side."""

from __future__ import annotations

import argparse
import io
import json
import os
import zipfile
from pathlib import Path

import httpx
import pytest

from agents.ports.errors import TargetError
from agents.ports.run import CheckVerdict
from controller.entry.cli import main
from controller.entry.service import client as remote
from controller.entry.service.client_parts import submission_parts
from controller.platform.store import NewRun
from controller.platform.store.sqlite import SqliteStore
from controller.runner.check_record import check_summary
from controller.runner.dispatch import child
from controller.runner.dispatch.workers import RunWorkers
from tests.unit.controller.entry.service.conftest import make_settings


class TestParts:
    def test_files_zips_and_folders(self, tmp_path: Path):
        """A .py is a parser part, a .zip goes as it is, a folder is zipped without hidden files,
        caches, environments or symlinks."""
        (tmp_path / "p.py").write_text("x = 1\n")
        (tmp_path / "s.zip").write_bytes(b"PK-as-given")
        sub = tmp_path / "alice"
        (sub / "custom_parsers").mkdir(parents=True)
        (sub / "custom_parsers" / "icici_parser.py").write_text("def parse(p): ...\n")
        (sub / "requirements.txt").write_text("pandas\n")
        for skipped in (".git/config", "__pycache__/x.pyc", "venv/lib/y.py", ".env"):
            (sub / skipped).parent.mkdir(parents=True, exist_ok=True)
            (sub / skipped).write_text("secret")
        os.symlink("/etc/passwd", sub / "passwd.py")
        parts = submission_parts([str(tmp_path / "p.py"), str(tmp_path / "s.zip"), str(sub)])
        assert [(kind, name) for kind, (name, _, _) in parts] == [("parser", "p.py"), ("submission", "s.zip"),
                                                                ("submission", "alice.zip")]
        assert parts[1][1][1] == b"PK-as-given"
        with zipfile.ZipFile(io.BytesIO(parts[2][1][1])) as archive:
            assert archive.namelist() == ["custom_parsers/icici_parser.py", "requirements.txt"]

    @pytest.mark.parametrize("name", ["missing.py", "notes.txt"])
    def test_what_cannot_be_sent_is_one_line(self, tmp_path: Path, name: str):
        if name.endswith(".txt"):
            (tmp_path / name).write_text("hi")
        with pytest.raises(TargetError):
            submission_parts([str(tmp_path / name)])


class TestCheckRemote:
    def test_submits_multipart_streams_the_lines_and_exits_like_check(self, tmp_path: Path, monkeypatch):
        (tmp_path / "good.py").write_text("def parse(p): ...\n")
        seen: list[httpx.Request] = []
        end = {"id": "c-1", "status": "failed", "exit_code": 1, "error": ""}
        stream = "".join(f"event: {k}\ndata: {json.dumps(v)}\n\n" for k, v in
                         (("status", {}), ("line", {"text": "  [1/1] FAIL good.py"}),
                          ("line", {"text": "0 passed, 1 failed"}), ("end", end)))

        def handler(request: httpx.Request) -> httpx.Response:
            seen.append(request)
            if request.method == "POST":
                return httpx.Response(202, json={"id": "c-1", "status": "queued"})
            return httpx.Response(200, text=stream, headers={"content-type": "text/event-stream"})

        real_client = httpx.Client
        monkeypatch.setattr(remote.httpx, "Client",
                            lambda **kw: real_client(transport=httpx.MockTransport(handler), **kw))
        args = argparse.Namespace(server="http://svc:1", target="icici", parser=[str(tmp_path / "good.py")],
                                  as_of="2025-01-31", jobs=None)
        out = io.StringIO()
        settings = make_settings(tmp_path).model_copy(update={"token": None})
        assert remote.check_remote(args, settings, out) == 1
        assert out.getvalue().splitlines() == ["==> http://svc:1: accepted as check c-1 (queued)",
                                               "  [1/1] FAIL good.py", "0 passed, 1 failed"]
        post = seen[0]
        assert post.url.path == "/v1/checks" and post.headers["content-type"].startswith("multipart/form-data")
        body = post.read()
        assert b'name="parser"; filename="good.py"' in body and b'name="as_of"' in body and b'name="jobs"' not in body

    def test_other_artefacts_are_refused_before_sending(self, capsys):
        assert main(["check", "--server", "http://127.0.0.1:9", "--target", "icici", "--report", "r.md"]) == 2
        assert capsys.readouterr().err.startswith("error: --server checks parsers (--parser)")


class TestServiceSide:
    def test_the_summary_counts_the_verdicts(self):
        verdicts = [CheckVerdict("a.py", "pass", 3, 0.5, ""), CheckVerdict("b.py", "fail", None, 0.2, "timeout"),
                    CheckVerdict("c.py", "unverified", 2, 0.1, ""), CheckVerdict("d.py", "self-consistent", 2, 0.1, "")]
        summary = check_summary("bank_parser", "icici", 1, verdicts)
        assert (summary["kind"], summary["status"], summary["passed"], summary["failed"], summary["unverified"]) == \
            ("check", "failed", 2, 1, 1)
        assert summary["verdicts"][1] == {"name": "b.py", "status": "fail", "rows": None, "seconds": 0.2,
                                          "first_difference": "timeout"}
        assert (child.status_of(1, summary) == "failed"
                and child.status_of(0, {**summary, "status": "passed"}) == "passed")

    @pytest.mark.parametrize("paths", [None, [], ["../x.py"], ["_submissions/../../x.py"], ["/etc/passwd"],
                                       ["other/x.py"], ["_submissions"], [3]])
    def test_a_check_row_with_foreign_paths_gets_no_command(self, tmp_path: Path, paths):
        store = SqliteStore(tmp_path / "s.sqlite")
        store.submit(NewRun("c-1", "alice", "bank_parser", "icici", {"kind": "check", "paths": paths}),
                     quota=9, queue_limit=9)
        with pytest.raises(ValueError, match="no valid paths"):
            child.command(store.get("c-1"), tmp_path / "runs" / "c-1")

    def test_a_dead_workers_check_starts_again(self, tmp_path: Path):
        """A check has no checkpoint to resume: taken over, it is queued to run again from the start."""
        settings = make_settings(tmp_path)
        store = SqliteStore(tmp_path / "runs" / "service.sqlite")
        store.submit(NewRun("c-1", "alice", "bank_parser", "icici", {"kind": "check", "paths": ["_submissions/a.py"]}),
                     quota=9, queue_limit=9)
        store.claim("dead", -1.0)
        RunWorkers(settings, store, worker_id="me", env={}).take_over_expired()
        row = store.get("c-1")
        assert (row.status, row.takeovers, row.error) == ("queued", 1, "")
        assert child.command(row, settings.runs_dir / "c-1")[3:7] == ["check", "--watch-stdin", "--run-id", "c-1"]

    def test_a_checks_lines_leave_the_services_folders_out(self, tmp_path: Path):
        """The lines streamed for a check name its uploads as sent, not where the service keeps them."""
        from controller.runner.dispatch.journal import (  # lazy: the worker's journal, for this test
            RunJournal,
            Scrubber,
        )

        run = NewRun("c-1", "alice", "bank_parser", "icici", {"kind": "check", "paths": ["_submissions/a.py"]})
        store = SqliteStore(tmp_path / "s.sqlite")
        store.submit(run, quota=9, queue_limit=9)
        store.submit(NewRun("r-1", "alice", "bank_parser", "icici"), quota=9, queue_limit=9)
        prefix = child.uploads_prefix(store.get("c-1"), tmp_path / "runs" / "c-1")
        assert prefix == f"{tmp_path}/runs/uploads/c-1/_submissions/"
        assert child.uploads_prefix(store.get("r-1"), tmp_path / "runs" / "r-1") is None
        settings = make_settings(tmp_path)
        store.claim("w", 30.0)
        (tmp_path / "runs" / "c-1").mkdir(parents=True)
        with RunJournal(store, "c-1", tmp_path / "runs" / "c-1", holder="w", journaled=0, notify=lambda: None,
                        scrub=Scrubber.for_service(settings, prefix)) as journal:
            journal.copy(io.StringIO(f"PASS {prefix}a.py: equal\nsaved {tmp_path}/runs/c-1/x.txt\n"))
        lines = [e.data["text"] for e in store.events("c-1", after=0, limit=9) if e.kind == "line"]
        assert lines == ["PASS a.py: equal", "saved runs/c-1/x.txt"]
        assert (tmp_path / "runs" / "c-1" / "console.txt").read_text() == "PASS a.py: equal\nsaved runs/c-1/x.txt\n"


def test_a_refused_check_is_the_services_line(tmp_path: Path, monkeypatch, capsys):
    """A 413 for a zip bomb is the service's one line, exit 2."""
    (tmp_path / "bomb.zip").write_bytes(b"PK")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(413, json={"status": 413,
                                         "detail": "bomb.zip: the member 'z' inflates to more than 8 bytes"})

    real_client = httpx.Client
    monkeypatch.setattr(remote.httpx, "Client", lambda **kw: real_client(transport=httpx.MockTransport(handler), **kw))
    assert main(["check", "--server", "http://svc:1", "--target", "icici", "--parser", str(tmp_path / "bomb.zip")]) == 2
    assert capsys.readouterr().err == ("error: the service refused it (413): bomb.zip: the member 'z' inflates to "
                                       "more than 8 bytes\n")
