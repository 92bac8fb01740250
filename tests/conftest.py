"""Shared fixtures: a real Redis for integration tests, isolated key prefixes, hypothesis
profiles, and the tiers.

Tiers are directories, marked here so no file has to remember a mark:

- ``tests/unit`` (``unit``): no services, no processes, no servers. Enforced: in a test not
  marked ``integration``, starting a process or listening on a socket fails the test, and
  asking for the real Redis is an error. Property tests (hypothesis) live here too and
  carry hypothesis's own ``hypothesis`` mark.
- ``tests/golden`` (``golden``): pinned result bytes, in process.
- ``tests/integration`` (``integration``): a real Redis, real ``celery worker`` processes,
  MCP servers over stdio and HTTP, the CLI in a subprocess.
- ``tests/crosspython`` (``crosspython`` and ``integration``): builds a virtual environment
  of another CPython with pip and runs the engine in it. Run by default (so CI runs it);
  ``-m "not integration"`` leaves it out with the rest of the integration tier.

Redis is found in this order: ROOKHAVEN_TEST_REDIS_URL, database 15 of a server answering
on 127.0.0.1:6379 (the suite's own database, so it never writes beside other data in db 0),
else a throwaway ``redis-server`` started here on a free port. Like rq, the suite refuses a
database that already holds keys: set ROOKHAVEN_TEST_REDIS_ALLOW_NONEMPTY=1 to share one
anyway (every test still writes only under its own key prefix and deletes it).
"""

from __future__ import annotations

import _posixsubprocess
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest
from hypothesis import settings as hypothesis_settings

from tests import kernelcache

if TYPE_CHECKING:
    from tests.integration.tls import TlsFiles

hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, max_examples=150)
hypothesis_settings.register_profile("dev", deadline=None)
hypothesis_settings.load_profile("ci" if os.environ.get("CI") else "dev")

# A contributor who followed the README's pipeline section has ROOKHAVEN_REDIS_URL (and
# more) exported: no test may read those, or a command run in-process would reach their
# store. The suite reads only its own ROOKHAVEN_TEST_* settings.
for _name in [n for n in os.environ
              if n.startswith("ROOKHAVEN_") and not n.startswith("ROOKHAVEN_TEST_")]:
    del os.environ[_name]

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
TESTS = Path(__file__).resolve().parent
# Directory -> the marks every test under it carries.
TIERS = {"unit": ("unit",), "golden": ("golden",), "integration": ("integration",),
         "crosspython": ("crosspython", "integration")}
NEEDS_SERVICES = "unit tests start no process and no server; move this test to tests/integration"
# Fixtures that reach a real Redis (or start one): only the integration tier may use them.
REAL_REDIS_FIXTURES = ("redis_url", "key_prefix")
# The database the suite owns on a Redis it finds on 127.0.0.1:6379 (db 0 is left to others).
SUITE_DB = 15
SUITE_REDIS = f"redis://127.0.0.1:6379/{SUITE_DB}"
_KERNELS = pytest.StashKey[Path]()


@pytest.hookimpl(tryfirst=True)  # before pytest's own -m selection reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test with the tier of the directory it lives in (see TIERS), then order
    the files for xdist (pyproject turns off its own order): those marked ``no_kernels``,
    then those holding the most ``slow`` tests."""
    for item in items:
        path = item.path.resolve()
        parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
        for name in TIERS.get(parts[0], ()) if len(parts) > 1 else ():
            item.add_marker(name)
    # xdist hands out whole files as processes free up: a minute-long file handed out last
    # runs alone while the others idle (the README test did, on 2 cores). Files that call no
    # kernel come first (they run while the kernels compile), then the longest, then the
    # rest by size as xdist would order them (ADR 0032).
    free: dict[Path, bool] = {}
    slow: dict[Path, int] = {}
    size: dict[Path, int] = {}
    for item in items:
        free[item.path] = item.get_closest_marker("no_kernels") is not None
        slow[item.path] = slow.get(item.path, 0) + (item.get_closest_marker("slow") is not None)
        size[item.path] = size.get(item.path, 0) + 1
    items.sort(key=lambda item: (not free[item.path], -slow[item.path], -size[item.path]))


def pytest_configure(config: pytest.Config) -> None:
    """With test processes (xdist), compile the kernels once for all of them (tests/
    kernelcache.py); this process is the controller, and starts it before they start."""
    if (not hasattr(config, "workerinput") and config.getoption("numprocesses", None)
            and not config.getoption("collectonly")):
        config.stash[_KERNELS] = kernelcache.start(ROOT)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _KERNELS in config.stash:
        kernelcache.clean(config.stash[_KERNELS])


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Wait for the session's one compile of the kernels unless the test is marked
    ``no_kernels`` (before any fixture: a module's workers would compile too); refuse a
    real Redis to tests outside the integration tier, before it is set up."""
    if item.get_closest_marker("no_kernels") is None:
        kernelcache.wait()
    if item.get_closest_marker("integration") is None:
        wanted = [f for f in REAL_REDIS_FIXTURES if f in getattr(item, "fixturenames", ())]
        if wanted:
            pytest.fail(f"{NEEDS_SERVICES} (it asks for {', '.join(wanted)}: a real Redis)",
                        pytrace=False)


def _refuse(what: str) -> Callable[..., NoReturn]:
    def refuse(*args: object, **kwargs: object) -> NoReturn:
        pytest.fail(f"{NEEDS_SERVICES} (it called {what})", pytrace=True)
    return refuse


def _refuse_popen(self: subprocess.Popen[bytes], *args: object, **kwargs: object) -> NoReturn:
    self._child_created = False  # type: ignore[attr-defined]  # so Popen.__del__ stays quiet
    pytest.fail(f"{NEEDS_SERVICES} (it called subprocess.Popen({args[0] if args else ''!r}))",
                pytrace=True)


@pytest.fixture(autouse=True)
def _no_processes_or_servers_outside_integration(request: pytest.FixtureRequest,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the integration tier, starting a process or listening on a socket fails."""
    if request.node.get_closest_marker("integration") is not None:
        return
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse_popen)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "popen",
                 "execv", "execve", "execvp", "execvpe", "spawnv", "spawnve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, _refuse(f"os.{name}"))
    monkeypatch.setattr(_posixsubprocess, "fork_exec", _refuse("_posixsubprocess.fork_exec"))
    monkeypatch.setattr(socket.socket, "listen", _refuse("socket.listen"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def _pings(port: int, **client: Any) -> bool:
    import redis

    try:
        return bool(redis.Redis(port=port, socket_connect_timeout=1, **client).ping())
    except redis.RedisError:
        return False


def wait_until(condition, timeout: float, interval: float = 0.05, what: str = "condition"):  # type: ignore[no-untyped-def]
    """Poll ``condition`` until it returns a truthy value; fail the test after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def stop_groups(procs: list[subprocess.Popen[bytes]], timeout: float = 30) -> None:
    """SIGTERM the process group each of ``procs`` leads and wait until every process in
    those groups is gone (SIGKILL past ``timeout``): a leader that exits first (a shell
    running a worker) would leave its children writing after the test cleaned up."""
    # Every group, even one whose leader has exited: its children may live on.
    groups = [proc.pid for proc in procs]
    for group in groups:
        _signal_group(group, signal.SIGTERM)

    def gone() -> bool:
        for proc in procs:  # reap the leaders, so their group can empty
            proc.poll()
        return not any(_signal_group(group, 0) for group in groups)

    deadline = time.monotonic() + timeout
    while not gone():
        if time.monotonic() > deadline:
            for group in groups:
                _signal_group(group, signal.SIGKILL)
            wait_until(gone, 10, what="killed process groups to exit")
            return
        time.sleep(0.05)


def _signal_group(group: int, signum: int) -> bool:
    """Send ``signum`` to process group ``group``; False if no process is left in it."""
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        return False
    return True


def start_redis_server(directory: Path, port: int, *extra: str,
                       tls: TlsFiles | None = None) -> subprocess.Popen[bytes]:
    """Start ``redis-server`` in the foreground (a child we can SIGKILL) and wait for PING;
    with ``tls``, it listens on ``port`` over TLS only (no plaintext port)."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    listen = ["--port", str(port)] if tls is None else [
        "--port", "0", "--tls-port", str(port), *tls.server_args()]
    proc = subprocess.Popen(
        [binary, *listen, "--bind", "127.0.0.1", "--dir", str(directory),
         "--save", "", "--logfile", str(directory / "redis.log"), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    client = {} if tls is None else tls.client_kwargs()
    wait_until(lambda: _pings(port, **client), 20, what=f"redis on {port}")
    return proc


def refuse_nonempty(url: str) -> None:
    """Stop the session if the database at ``url`` holds keys, unless told to share it."""
    import redis

    from rookhaven.store.urls import redact

    if os.environ.get("ROOKHAVEN_TEST_REDIS_ALLOW_NONEMPTY") == "1":
        return
    client = redis.Redis.from_url(url, socket_connect_timeout=5)
    try:
        keys = int(client.dbsize())
        if keys and os.environ.get("PYTEST_XDIST_WORKER"):
            # Run in parallel (pytest-xdist), the other workers' tests hold keys under
            # their own prefixes already: only a key outside every test prefix is foreign.
            keys = sum(1 for k in client.scan_iter(count=1000)
                       if not k.startswith(TEST_PREFIX.encode()))
    except redis.RedisError as exc:
        pytest.exit(f"the test Redis {redact(url)} does not answer: {exc}", returncode=4)
    finally:
        client.close()
    if keys:
        pytest.exit(f"the test Redis {redact(url)} holds {keys} key{'s' * (keys != 1)} and the "
                    "tests want an empty database: point ROOKHAVEN_TEST_REDIS_URL at an empty "
                    "one, or set ROOKHAVEN_TEST_REDIS_ALLOW_NONEMPTY=1 to share it",
                    returncode=4)


# Every key a test writes to the shared test Redis starts with this (``key_prefix``).
TEST_PREFIX = "rh-test-"


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a real, empty Redis database for this test session (see the module docstring)."""
    url = os.environ.get("ROOKHAVEN_TEST_REDIS_URL") or (
        SUITE_REDIS if _answers(SUITE_REDIS) else None)
    if url:
        refuse_nonempty(url)
        yield url
        return
    with private_redis(tmp_path_factory.mktemp("redis"), SUITE_DB) as url:
        yield url


@contextmanager
def private_redis(directory: Path, db: int = 0) -> Iterator[str]:
    """The URL of a redis-server of the caller's own (no persistence), stopped after."""
    port = free_port()
    proc = start_redis_server(directory, port)
    try:
        yield f"redis://127.0.0.1:{port}/{db}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# Each test's prefix and the test, so keys written after a test's cleanup (a process it
# left running) are reported with the test's name at the end of the session.
_PREFIXES: dict[str, str] = {}
_LEAK_URL: list[str] = []


@pytest.fixture
def key_prefix(redis_url: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A key prefix no other test uses; its keys are deleted before and after the test."""
    import redis

    prefix = f"{TEST_PREFIX}{uuid.uuid4().hex[:12]}"
    _PREFIXES[prefix] = request.node.nodeid
    _LEAK_URL[:] = [redis_url]
    client = redis.Redis.from_url(redis_url)

    def clean() -> None:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)

    clean()
    yield prefix
    clean()
    client.close()


LEAKS = ROOT / ".cache" / "leaks"  # one file per test process, read by the summary


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Find keys that outlived their test's cleanup (a process the test left running wrote
    them), delete them, and leave their tests' names for the terminal summary."""
    import redis

    if not _LEAK_URL:
        return
    client = redis.Redis.from_url(_LEAK_URL[0])
    lines = []
    try:
        left: dict[str, list[bytes]] = {}
        for key in client.scan_iter(match=f"{TEST_PREFIX}*", count=1000):
            prefix = key.decode(errors="replace").split(":", 1)[0]
            if prefix in _PREFIXES:
                left.setdefault(prefix, []).append(key)
        for prefix, keys in left.items():
            shown = b", ".join(sorted(keys)[:5]).decode(errors="replace")
            lines.append(f"{_PREFIXES[prefix]} left {len(keys)} key(s): {shown}")
            client.delete(*keys)
    except redis.RedisError:
        return
    finally:
        client.close()
    if lines:
        LEAKS.mkdir(parents=True, exist_ok=True)
        (LEAKS / f"{os.getpid()}.txt").write_text("\n".join(lines) + "\n")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if _KERNELS in terminalreporter.config.stash:
        terminalreporter.write_line(kernelcache.outcome(terminalreporter.config.stash[_KERNELS]))
    if not LEAKS.is_dir():
        return
    for report in sorted(LEAKS.glob("*.txt")):
        for line in report.read_text().splitlines():
            terminalreporter.write_line(f"keys written after the test's cleanup: {line}")
        report.unlink()
