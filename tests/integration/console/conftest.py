"""The console in a real browser: a real ``serve`` process (real runs in the real engine) and
Debian's Chromium driven by Playwright (``executable_path``: never ``playwright install``).

Every page a test opens goes through :meth:`Browser.look`: axe-core (vendored by
axe-playwright-python, injected into the page) must find no serious or critical violation,
no dialog may have opened, the page's only script is the console's, and a full-page
screenshot is saved with the test results (``<pytest tmp>/console-screens``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import uvicorn
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, Playwright, sync_playwright

from controller.entry.service.app import create_app
from controller.entry.service.state import ServiceState
from controller.platform.settings import PROJECT_ROOT
from tests.host import missing
from tests.integration.blueprints import no_go_target
from tests.integration.service.harness import Service, free_port
from tools.host_packages import CHROMIUM

BLOCKING = ("serious", "critical")
HOSTILE = "<script>alert(1)</script>"


@dataclass
class Browser:
    """One signed-in (or not) browser on the console, and what it saw."""

    page: Page
    base: str
    screens: Path
    dialogs: list[str] = field(default_factory=list)

    def open(self, path: str) -> Page:
        self.page.goto(self.base + path)
        return self.page

    def look(self, name: str) -> None:
        """Accessible (axe), inert (no dialog, one script) and photographed."""
        self.page.wait_for_load_state("load")
        self.page.screenshot(path=str(self.screens / f"{name}.png"), full_page=True)
        violations = Axe().run(self.page).response["violations"]
        blocking = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in violations
                    if v.get("impact") in BLOCKING]
        assert not blocking, f"{name}: {blocking}"
        assert not self.dialogs, f"{name}: a dialog opened: {self.dialogs}"
        assert self.page.evaluate("Array.from(document.scripts).map(s => s.src.replace(location.origin, ''))") == \
            ["/static/console.js"], name


def served(state: ServiceState) -> Iterator[str]:
    """The service's app over ``state`` on uvicorn in a thread (no engine, no ``serve``): its address."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(state), host="127.0.0.1", port=port, log_config=None,
                                           access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    if not Path(CHROMIUM).exists():
        missing(f"{CHROMIUM}, not installed on this host (Debian: apt-get install chromium)")
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def chromium(playwright: Playwright):  # noqa: ANN201
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.getbasetemp() / "console-screens"
    folder.mkdir(exist_ok=True)
    return folder


def hostile_blueprint(data: Path) -> None:
    """acme-research with a company profile whose values are HTML, script and a javascript: link."""
    shutil.copytree(PROJECT_ROOT / "data" / "acme-research", data / "hostile-research")
    profile = data / "hostile-research" / "company.json"
    company = json.loads(profile.read_text())
    company["name"] = f"Acme {HOSTILE} <img src=x onerror=alert(2)> [click me](javascript:alert(3))"
    company["headquarters"] = '<a href="javascript:alert(4)">HQ</a> <iframe src="javascript:alert(5)"></iframe>'
    profile.write_text(json.dumps(company))


def wrong_icici(data: Path) -> None:
    """icici-wrong: ICICI with one balance of its result.csv changed, so every attempt's frame differs there."""
    shutil.copytree(PROJECT_ROOT / "data" / "icici", data / "icici-wrong")
    rows = (data / "icici-wrong" / "result.csv").read_text().splitlines()
    fields = rows[3].split(",")
    fields[-1] = "99999.99"
    rows[3] = ",".join(fields)
    (data / "icici-wrong" / "result.csv").write_text("\n".join(rows) + "\n")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A service with tokens (alice, bob), the ICICI, intake, a failing ICICI, a hostile blueprint target and
    a blueprint whose required tool reads an empty file (a no-go)."""
    root = tmp_path_factory.mktemp("console")
    data = root / "data"
    for target in ("icici", "intake-cross-node"):
        shutil.copytree(PROJECT_ROOT / "data" / target, data / target)
    (data / "intake-cross-node" / "replies.txt").unlink()  # the replies come from the page
    hostile_blueprint(data)
    wrong_icici(data)
    no_go_target(data)
    env = {**os.environ, "SBX_DATA_DIR": str(data), "SBX_RUNS_DIR": str(root / "runs"),
           "SBX_PARSERS_DIR": str(root / "custom_parsers"), "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
           "SBX_LOG_FORMAT": "json", "SBX_PARALLEL_RUNS": "2", "SBX_SERVICE__POLL_SECONDS": "0.2"}
    svc = Service(root, env, free_port())
    svc.tokens = {name: _token(svc, name) for name in ("alice", "bob")}  # type: ignore[attr-defined]
    svc.start()
    yield svc
    if svc.proc is not None:
        svc.stop(signal.SIGTERM)


def _token(service: Service, name: str) -> str:
    made = service.cli("tokens", "add", name)
    assert made.returncode == 0, made.stderr
    return made.stdout.splitlines()[0]


def new_browser(chromium, base: str, screens: Path, width: int = 1280, *,  # noqa: ANN001
                scheme: str = "light", script: bool = True) -> Iterator[Browser]:
    """A fresh browser context on ``base`` (its own cookies), closed after; dialogs are recorded and dismissed."""
    context = chromium.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme,
                                   java_script_enabled=script)
    browser = Browser(context.new_page(), base, screens)
    browser.page.on("dialog", lambda dialog: (browser.dialogs.append(dialog.message), dialog.dismiss()))
    yield browser
    context.close()


def browser_for(chromium, service: Service, screens: Path, who: str | None) -> Iterator[Browser]:  # noqa: ANN001
    for browser in new_browser(chromium, service.url, screens):
        if who is not None:
            sign_in(browser, service.tokens[who])  # type: ignore[attr-defined]
        yield browser


def sign_in(browser: Browser, token: str) -> None:
    page = browser.open("/sign-in")
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_url(browser.base + "/")


@pytest.fixture
def alice(chromium, service: Service, screens: Path) -> Iterator[Browser]:  # noqa: ANN001
    yield from browser_for(chromium, service, screens, "alice")


@pytest.fixture
def bob(chromium, service: Service, screens: Path) -> Iterator[Browser]:  # noqa: ANN001
    yield from browser_for(chromium, service, screens, "bob")


@pytest.fixture
def stranger(chromium, service: Service, screens: Path) -> Iterator[Browser]:  # noqa: ANN001
    yield from browser_for(chromium, service, screens, None)
