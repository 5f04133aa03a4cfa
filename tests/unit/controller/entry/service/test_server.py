"""The service's listening socket and its exposure rule."""

from __future__ import annotations

import socket

import pytest

from agents.ports.errors import ConfigError
from controller.entry.service.server import bind, check_exposure, is_loopback
from controller.platform.store.sqlite import SqliteStore
from controller.platform.store.tokens import new_token, token_hash


def test_the_listening_socket_says_it_is_tcp_so_answers_are_not_delayed():
    """asyncio sets TCP_NODELAY on accepted sockets only when their protocol is IPPROTO_TCP; with
    proto 0 every answer on a kept-alive connection waited ~40 ms for a delayed ACK."""
    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_a_port_in_use_is_one_line():
    first = bind("127.0.0.1", 0)
    try:
        with pytest.raises(ConfigError, match=r"cannot listen on 127\.0\.0\.1:\d+"):
            bind("127.0.0.1", first.getsockname()[1])
    finally:
        first.close()


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                               ("[::1]", True), ("0.0.0.0", False), ("example.org", False)])
def test_loopback_addresses(host: str, loopback: bool):
    assert is_loopback(host) is loopback


def test_no_listening_beyond_loopback_without_a_token(tmp_path):
    store = SqliteStore(tmp_path / "service.sqlite")
    with pytest.raises(ConfigError, match="refusing to listen on 0.0.0.0 without a token"):
        check_exposure("0.0.0.0", store)
    store.add_token("alice", token_hash(new_token()), admin=False)
    check_exposure("0.0.0.0", store)  # a token exists: allowed
