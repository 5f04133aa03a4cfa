"""``make gvisor`` (tools/gvisor.py) without touching the machine: the merge of daemon.json keeps
every other key and runtime, the file is backed up and replaced with its mode, a registered runtime
is left alone, and a user who cannot do it gets one line and exit 2. The engine, apt and dockerd
are replaced by recorders (test doubles, here)."""

from __future__ import annotations

import json
import signal

import pytest

from tools import gvisor

ENTRY = gvisor.runtime_entry("/usr/bin/runsc", "ptrace")


class TestMerge:
    def test_every_other_key_and_runtime_is_kept(self):
        config = {"log-driver": "json-file", "runtimes": {"kata": {"path": "/usr/bin/kata"}}, "bridge": "none"}
        merged = gvisor.merged(config, ENTRY)
        assert merged == {"log-driver": "json-file", "bridge": "none",
                          "runtimes": {"kata": {"path": "/usr/bin/kata"}, "runsc": ENTRY}}
        assert config["runtimes"] == {"kata": {"path": "/usr/bin/kata"}}  # the input is not changed

    def test_the_entry_names_the_platform_and_no_network(self):
        assert gvisor.runtime_entry("/usr/bin/runsc", "systrap") == {
            "path": "/usr/bin/runsc", "runtimeArgs": ["--platform=systrap", "--network=none"]}

    def test_a_runtimes_key_that_is_no_object_is_left_to_a_person(self):
        with pytest.raises(gvisor.Failed, match="not an object"):
            gvisor.merged({"runtimes": ["runsc"]}, ENTRY)


class TestFile:
    def test_backed_up_and_replaced_with_its_mode(self, tmp_path):
        path = tmp_path / "daemon.json"
        path.write_text('{"debug": true}\n')
        path.chmod(0o600)
        backup = gvisor.write_config(path, gvisor.merged(gvisor.read_config(path), ENTRY), now=lambda: 0.0)
        assert backup == tmp_path / "daemon.json.bak-19700101T000000Z"
        assert backup.read_text() == '{"debug": true}\n'
        assert json.loads(path.read_text()) == {"debug": True, "runtimes": {"runsc": ENTRY}}
        assert path.stat().st_mode & 0o777 == 0o600

    def test_no_file_yet(self, tmp_path):
        path = tmp_path / "docker" / "daemon.json"
        assert gvisor.read_config(path) == {}
        assert gvisor.write_config(path, {"runtimes": {"runsc": ENTRY}}) is None
        assert json.loads(path.read_text())["runtimes"]["runsc"] == ENTRY

    def test_a_file_that_is_no_json_object_is_refused(self, tmp_path):
        path = tmp_path / "daemon.json"
        path.write_text("[1]")
        with pytest.raises(gvisor.Failed, match="not a JSON object"):
            gvisor.read_config(path)


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """runsc installed, root, one dockerd; records SIGHUPs; the engine lists runsc once signalled."""
    state = {"listed": False, "signals": [], "root": True}
    monkeypatch.setattr(gvisor.shutil, "which", lambda name: "/usr/bin/runsc" if name == "runsc" else None)
    monkeypatch.setattr(gvisor.os, "geteuid", lambda: 0 if state["root"] else 1000)
    monkeypatch.setattr(gvisor, "dockerd_pid", lambda: 4242)
    monkeypatch.setattr(gvisor, "listed", lambda: state["listed"])

    def kill(pid, sig):  # noqa: ANN001, ANN202
        state["signals"].append((pid, sig))
        state["listed"] = True

    monkeypatch.setattr(gvisor.os, "kill", kill)
    return state


class TestRegister:
    def test_registers_and_reloads_the_engine_without_a_restart(self, machine, tmp_path, capsys):
        path = tmp_path / "daemon.json"
        path.write_text('{"storage-driver": "overlay2"}')
        assert gvisor.main(["--config", str(path)]) == 0
        assert machine["signals"] == [(4242, signal.SIGHUP)]
        assert json.loads(path.read_text()) == {"storage-driver": "overlay2", "runtimes": {"runsc": ENTRY}}
        out = capsys.readouterr().out
        assert out.count("\n") == 1 and "registered" in out and "the engine lists it" in out

    def test_idempotent_nothing_written_nothing_signalled(self, machine, tmp_path, capsys):
        path = tmp_path / "daemon.json"
        path.write_text(json.dumps({"runtimes": {"runsc": ENTRY}}))
        machine["listed"] = True
        before = path.read_text()
        assert gvisor.main(["--config", str(path)]) == 0
        assert machine["signals"] == [] and path.read_text() == before
        assert list(tmp_path.iterdir()) == [path]  # no backup either
        assert "already registered" in capsys.readouterr().out

    def test_a_user_who_is_not_root_gets_one_line_and_exit_2(self, machine, tmp_path, capsys):
        machine["root"] = False
        path = tmp_path / "daemon.json"
        assert gvisor.main(["--config", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "sudo make gvisor" in err and not path.exists()

    def test_no_runsc_and_no_apt_one_line_and_exit_2(self, machine, monkeypatch, tmp_path, capsys):
        monkeypatch.setattr(gvisor.shutil, "which", lambda name: None)
        monkeypatch.setattr(gvisor.apt, "can_install", lambda: False)
        assert gvisor.main(["--config", str(tmp_path / "daemon.json")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "apt-get install runsc" in err

    def test_an_engine_that_never_lists_it_fails_naming_the_backup(self, machine, monkeypatch, tmp_path, capsys):
        monkeypatch.setattr(gvisor.os, "kill", lambda pid, sig: None)
        monkeypatch.setattr(gvisor, "wait_listed", lambda seconds=0: False)
        path = tmp_path / "daemon.json"
        path.write_text("{}")
        assert gvisor.main(["--config", str(path)]) == 1
        assert "daemon.json.bak-" in capsys.readouterr().err
