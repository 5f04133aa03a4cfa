"""``make test``'s host programs (tools/host_packages.py): installed as root with apt-get, else named.

No package is really installed: apt-get's commands are recorded instead of run.
"""

from __future__ import annotations

import subprocess

import pytest

from controller.platform import apt
from tools import host_packages
from tools.host_packages import HostProgram


def _programs(monkeypatch: pytest.MonkeyPatch, present: dict[str, bool]) -> None:
    programs = tuple(HostProgram(name, (f"{name}-pkg",), f"{name}'s tests", lambda name=name: present[name])
                     for name in present)
    monkeypatch.setattr(host_packages, "PROGRAMS", programs)


class TestHostPackages:
    def test_nothing_missing_says_nothing(self, monkeypatch, capsys) -> None:
        """With every program present nothing is printed and nothing installed."""
        _programs(monkeypatch, {"tesseract": True, "chromium": True})
        monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("nothing to install"))
        assert host_packages.main() == 0
        assert capsys.readouterr().out == ""

    def test_root_with_apt_installs_the_missing_in_one_line(self, monkeypatch, capsys) -> None:
        """As root with apt-get only the missing programs' packages are installed, said in one line."""
        _programs(monkeypatch, {"tesseract": False, "chromium": True, "postgresql": False})
        monkeypatch.setattr(apt, "can_install", lambda: True)
        ran: list[list[str]] = []
        monkeypatch.setattr(subprocess, "run", lambda command, **_: ran.append(command)
                            or subprocess.CompletedProcess(command, 0, "", ""))
        assert host_packages.main() == 0
        out = capsys.readouterr().out.splitlines()
        assert out == ["==> installing tesseract-pkg postgresql-pkg with apt-get "
                       "(tesseract's tests; postgresql's tests)"]
        assert ran == apt.install_commands(["tesseract-pkg", "postgresql-pkg"])

    def test_elsewhere_one_line_names_what_will_skip(self, monkeypatch, capsys) -> None:
        """Without root or apt-get nothing runs; one line names the packages and that their tests skip."""
        _programs(monkeypatch, {"chromium": False})
        monkeypatch.setattr(apt, "can_install", lambda: False)
        monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("cannot install here"))
        assert host_packages.main() == 0
        assert capsys.readouterr().out.splitlines() == [
            "==> not installed: chromium-pkg (chromium's tests skip; as root on Debian make test installs them)"]
