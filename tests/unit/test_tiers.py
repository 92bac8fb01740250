"""The tiers hold: each test carries its directory's mark, and a unit test cannot start a
process or a server (tests/conftest.py)."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest


def test_a_unit_test_is_marked_unit_and_not_integration(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("unit") is not None
    assert request.node.get_closest_marker("integration") is None


def test_a_unit_test_that_starts_a_process_fails_saying_where_it_belongs() -> None:
    with pytest.raises(pytest.fail.Exception, match="move this test to tests/integration"):
        subprocess.run(["true"], check=False)
    with pytest.raises(pytest.fail.Exception, match=r"os\.fork"):
        os.fork()


def test_a_unit_test_that_listens_on_a_socket_fails() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))  # binding alone (to learn a free port) is allowed
        with pytest.raises(pytest.fail.Exception, match=r"socket\.listen"):
            sock.listen()
