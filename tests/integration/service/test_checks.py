"""Checks through the real service: ``serve`` in a subprocess, the real engine, real HTTP.

The ICICI target's expected CSV is replaced by one a tiny parser can produce (its page count),
so that a check of a correct parser passes and one of a wrong parser fails in seconds; the
client ``check --server`` ends like a local ``check`` (the same count line, the same exit
code). Hostile zips are refused with 413/422 and leave nothing on disk; another tenant sees
nothing of a check (404).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from controller.platform.settings import PROJECT_ROOT
from tests.integration.service.harness import wait_for
from tests.integration.service.test_service import Service, add_token, follow
from tests.integration.service.test_service import service as service  # noqa: PLC0414 - the fixture

pytestmark = pytest.mark.usefixtures("no_leftovers")

GOOD = "import pdfplumber\nimport pandas as pd\n\n\ndef parse(pdf_path):\n" \
       "    with pdfplumber.open(pdf_path) as pdf:\n" \
       "        return pd.DataFrame({'pages': [len(pdf.pages)], 'kind': ['statement']})\n"
WRONG = "import pandas as pd\n\n\ndef parse(pdf_path):\n" \
        "    return pd.DataFrame({'pages': [7], 'kind': ['statement']})\n"


def page_target(service: Service) -> None:
    """An expected CSV the tiny parsers can produce: the statement's page count."""
    (service.root / "data" / "icici" / "result.csv").write_text("pages,kind\n2,statement\n")


def uploads(service: Service) -> list[Path]:
    root = service.root / "runs" / "uploads"
    return sorted(root.rglob("*")) if root.exists() else []


def bomb() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, archive.open("icici_parser.py", "w") as member:
        for _ in range(1024):
            member.write(bytes(1 << 20))
    return buffer.getvalue()


def test_a_good_parser_passes_a_wrong_one_fails_and_the_client_ends_like_check(service: Service, tmp_path: Path):
    page_target(service)
    auth = add_token(service, "alice")
    service.start()
    files = [("parser", ("good.py", GOOD.encode(), "text/x-python")),
             ("parser", ("wrong.py", WRONG.encode(), "text/x-python"))]
    accepted = httpx.post(f"{service.url}/v1/checks", data={"target": "icici"}, files=files, headers=auth, timeout=60)
    assert accepted.status_code == 202, accepted.text
    check = accepted.json()
    events = follow(f"{service.url}{check['links']['events']}", auth)
    end = events[-1][1]
    assert (end["status"], end["exit_code"]) == ("failed", 1), end
    lines = [data["text"] for kind, data in events if kind == "line"]
    assert lines[-1] == "1 passed, 1 failed", lines
    assert any(line.startswith("good.py ") for line in lines) and not any("uploads" in line for line in lines), lines
    document = httpx.get(f"{service.url}/v1/checks/{check['id']}", headers=auth).json()
    verdicts = {v["name"]: (v["status"], v["rows"]) for v in document["summary"]["verdicts"]}
    assert verdicts == {"good.py": ("pass", 1), "wrong.py": ("fail", 1)}, document
    assert (document["summary"]["passed"], document["summary"]["failed"]) == (1, 1)
    wrong = next(v for v in document["summary"]["verdicts"] if v["name"] == "wrong.py")
    assert wrong["first_difference"] == "row 0 'pages': expected np.int64(2) (int64), got np.int64(7) (int64)", wrong

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "good.py").write_text(GOOD)
    token = auth["Authorization"][7:]
    remote = service.cli("check", "--server", service.url, "--target", "icici", "--parser", str(folder),
                         SBX_TOKEN=token)
    local = service.cli("check", "--target", "icici", "--parser", str(folder))
    assert (remote.returncode, local.returncode) == (0, 0), remote.stdout + remote.stderr + local.stderr
    assert remote.stdout.splitlines()[0].startswith(f"==> {service.url}: accepted as check ")
    assert remote.stdout.strip().splitlines()[-1] == local.stdout.strip().splitlines()[-1] == "1 passed, 0 failed"
    assert "PASS " in remote.stdout

    (folder / "wrong.py").write_text(WRONG)
    remote = service.cli("check", "--server", service.url, "--target", "icici", "--parser", str(folder / "wrong.py"),
                         SBX_TOKEN=token)
    assert remote.returncode == 1 and remote.stdout.strip().splitlines()[-1] == "0 passed, 1 failed", remote.stdout


def test_hostile_zips_are_refused_and_a_check_is_only_its_owners(service: Service):
    alice, bob = add_token(service, "alice"), add_token(service, "bob")
    service.start()

    def submit(name: str, data: bytes, who: dict[str, str]) -> httpx.Response:
        return httpx.post(f"{service.url}/v1/checks", data={"target": "icici"}, headers=who, timeout=120,
                          files=[("submission", (name, data, "application/zip"))])

    refused = submit("bomb.zip", bomb(), alice)
    assert refused.status_code == 413 and refused.headers["content-type"] == "application/problem+json"
    assert "bomb.zip: the member 'icici_parser.py' inflates to more than" in refused.json()["detail"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("custom_parsers/icici_parser.py", GOOD)
        archive.writestr("../../../escape.py", GOOD)
    traversal = submit("sub.zip", buffer.getvalue(), alice)
    assert traversal.status_code == 422 and "'..' part" in traversal.json()["detail"], traversal.text
    assert uploads(service) == [] and not (service.root / "escape.py").exists()
    assert httpx.get(f"{service.url}/v1/runs", headers=alice).json()["runs"] == []

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("icici_parser.py", WRONG)
    accepted = submit("mine.zip", buffer.getvalue(), alice)
    assert accepted.status_code == 202, accepted.text
    check = accepted.json()
    assert httpx.get(f"{service.url}/v1/checks/{check['id']}", headers=bob).status_code == 404
    assert httpx.get(f"{service.url}/v1/runs/{check['id']}/events", headers=bob).status_code == 404
    assert httpx.post(f"{service.url}/v1/runs/{check['id']}/cancel", headers=bob).status_code == 404
    end = follow(f"{service.url}{check['links']['events']}", alice)[-1][1]
    assert (end["status"], end["exit_code"]) == ("failed", 1), end
    verdicts = httpx.get(f"{service.url}/v1/checks/{check['id']}", headers=alice).json()["summary"]["verdicts"]
    assert [(v["name"], v["status"]) for v in verdicts] == [("icici_parser.py", "fail")]


def test_check_server_refuses_what_the_service_does_not_check(tmp_path: Path):
    """--server with --module, or an unknown URL: one line, exit 2, nothing sent."""
    env = {**os.environ, "SBX_RUNS_DIR": str(tmp_path / "runs")}
    proc = subprocess.run([sys.executable, "-m", "controller", "check", "--server", "http://127.0.0.1:9",
                           "--target", "icici", "--module", "x.idr"], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        "error: --server checks parsers (--parser) (check modules, conversations and reports locally)"], proc.stderr


def test_a_submission_folder_is_checked_in_its_environment_through_the_client(service: Service):
    """A submission folder (custom_parsers/, no requirements) is zipped by the client, extracted by
    the service and checked as a submission: the same table row and count line as a local check."""
    page_target(service)
    submission = PROJECT_ROOT / "tests" / "fixtures" / "env_submissions" / "d_no_requirements"
    service.start()
    remote = service.cli("check", "--server", service.url, "--target", "icici", "--as-of", "2025-08-31",
                         "--parser", str(submission))
    local = service.cli("check", "--target", "icici", "--as-of", "2025-08-31", "--parser", str(submission))
    assert (remote.returncode, local.returncode) == (0, 0), remote.stdout + remote.stderr + local.stdout + local.stderr

    def row(stdout: str) -> list[str]:
        return next(line.split()[:2] for line in stdout.splitlines() if line.startswith("d_no_requirements "))

    assert row(remote.stdout) == row(local.stdout) == ["d_no_requirements", "pass"], remote.stdout
    assert remote.stdout.strip().splitlines()[-1] == local.stdout.strip().splitlines()[-1] == "1 passed, 0 failed"
    check_id = remote.stdout.splitlines()[0].split("accepted as check ")[1].split()[0]
    verdicts = httpx.get(f"{service.url}/v1/checks/{check_id}").json()["summary"]["verdicts"]
    assert [(v["name"], v["status"]) for v in verdicts] == [("d_no_requirements", "pass")]


def test_a_cancelled_check_stops_at_once_without_a_kill(service: Service):
    """Issue 42: the service's cancel of a running check ended only by SIGKILL, 11.1 s later: the
    check's parsers wait in a thread pool, which the child's SIGINT did not reach. Now the child
    stops itself (exit 130) within seconds and its container is removed."""
    service.start()
    sleepy = ("import time\nimport pandas as pd\n\n\ndef parse(pdf_path):\n    time.sleep(25)\n"
              "    return pd.DataFrame()\n")
    accepted = httpx.post(f"{service.url}/v1/checks", data={"target": "icici"}, timeout=60,
                          files=[("parser", ("sleepy.py", sleepy.encode(), "text/x-python"))])
    assert accepted.status_code == 202, accepted.text
    check = accepted.json()
    wait_for(lambda: httpx.get(f"{service.url}/v1/checks/{check['id']}").json()["status"] == "running",
             "the check to start", 120)
    time.sleep(6.0)  # its parser sleeps (25 s) in its sandbox by now
    cancelled = time.monotonic()
    assert httpx.post(f"{service.url}{check['links']['cancel']}", timeout=30).status_code == 202
    wait_for(lambda: httpx.get(f"{service.url}/v1/checks/{check['id']}").json()["status"] == "cancelled",
             "the check to end", 60)
    document = httpx.get(f"{service.url}/v1/checks/{check['id']}").json()
    assert time.monotonic() - cancelled < 8.0  # the kill came only after CANCEL_GRACE_SECONDS (10 s)
    assert document["exit_code"] == 130, document  # it stopped itself: -9 would be the kill
