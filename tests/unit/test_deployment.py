"""The deployment files are real: every command, setting and service they name exists.

No container engine or systemd runs here, so docker-compose.yml, the Dockerfile and the
units in ops/systemd/ are parsed and each command is resolved the way its program would
resolve it: celery's own command-line parser (app, subcommand and options), and
``rookhaven``'s argparse parser.
"""

from __future__ import annotations

import json
import re
import shlex
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
import pytest
import yaml  # type: ignore[import-untyped]

from rookhaven.cli.main import build_parser
from rookhaven.config import SPECS, Settings
from rookhaven.server.http import check_bind
from tests.conftest import ROOT

COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
OPS = ROOT / "ops"
UNITS = sorted((OPS / "systemd").glob("*.service"))
ENV_EXAMPLE = OPS / "rookhaven.env.example"
ROOKHAVEN_SERVICES = ("worker", "beat", "mcp", "metrics")
KNOWN = {spec.variable for spec in SPECS}
# What an operator's .env must hold for `docker compose` to start (see its header).
DOTENV = {"ROOKHAVEN_MCP_TOKEN": "a-test-token"}
VENV_BIN = "/opt/rookhaven/venv/bin/"


# --- compose's variable interpolation (the subset the file uses) -------------------------

_VARIABLE = re.compile(r"\$\$|\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


class MissingVariableError(Exception):
    """Raised when a ``${NAME:?message}`` variable is unset, as compose would refuse."""


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """``value`` with ``${NAME}``, ``${NAME:-default}`` and ``${NAME:?err}`` filled from env."""
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def fill(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, op, arg = match.group("name", "op", "arg")
        given = env.get(name)
        unset = given is None or (given == "" and op is not None and op.startswith(":"))
        if op is not None and op.endswith("?") and unset:
            raise MissingVariableError(f"{name}: {arg}")
        if op is not None and op.endswith("-") and unset:
            return arg
        return given or ""

    return _VARIABLE.sub(fill, value)


def compose(env: Mapping[str, str] = DOTENV) -> dict[str, Any]:
    loaded: dict[str, Any] = interpolate(yaml.safe_load(COMPOSE.read_text()), env)
    return loaded


def command_words(command: str | list[str]) -> list[str]:
    return shlex.split(command) if isinstance(command, str) else list(command)


# --- resolving a command as its program would --------------------------------------------

def resolve_celery(args: list[str]) -> tuple[str, dict[str, Any]]:
    """Parse ``celery ARGS`` with celery's own click commands: (subcommand, its options).

    Fails the test if the app does not import, the subcommand does not exist or an option
    or value is not accepted.
    """
    from celery.app.utils import find_app
    from celery.bin.base import CLIContext
    from celery.bin.celery import celery

    top = celery.make_context("celery", list(args))
    app = find_app(top.params["app"])  # what `celery -A NAME` does
    assert app.main == "rookhaven", f"-A {top.params['app']} is not Rookhaven's app"
    top.obj = CLIContext(app=app, no_color=True, workdir=None, quiet=True)
    with warnings.catch_warnings():  # click 8.2 moves the subcommand between attributes
        warnings.simplefilter("ignore", DeprecationWarning)
        words: list[str] = [*top.protected_args, *top.args]
    name, rest = words[0], words[1:]
    assert name in celery.commands, f"celery has no subcommand {name!r}"
    try:
        sub = celery.commands[name].make_context(name, list(rest), parent=top)
    except click.UsageError as exc:
        pytest.fail(f"celery {name} refuses {rest}: {exc}")
    return name, sub.params


def resolve_rookhaven(args: list[str]) -> str:
    """Parse ``rookhaven ARGS`` with the CLI's parser; the subcommand it runs."""
    try:
        parsed = build_parser().parse_args(args)
    except SystemExit:
        pytest.fail(f"rookhaven refuses {args}")
    return str(parsed.command)  # set only when argparse found that subcommand


def resolve(words: list[str]) -> tuple[str, str]:
    """(program, subcommand) of a Rookhaven command line; fails the test if either is unreal."""
    program, *args = words
    program = program.removeprefix(VENV_BIN)
    if program == "celery":
        return program, resolve_celery(args)[0]
    if program == "rookhaven":
        return program, resolve_rookhaven(args)
    pytest.fail(f"{words} runs neither celery nor rookhaven")


# --- docker-compose.yml ------------------------------------------------------------------

def test_the_compose_file_has_redis_and_the_rookhaven_services() -> None:
    services = compose()["services"]
    cluster = {name for name, service in services.items()
               if "cluster" in service.get("profiles", [])}
    assert set(services) - cluster == {"redis", *ROOKHAVEN_SERVICES}


def test_the_cluster_profile_is_six_cluster_nodes_and_the_step_that_joins_them() -> None:
    services = compose()["services"]
    nodes = [name for name in services if name.startswith("redis-node-")]
    assert len(nodes) == 6
    for name in nodes:
        command = services[name]["command"]
        assert command[0] == "redis-server" and "--cluster-enabled" in command
    create = " ".join(services["redis-cluster-create"]["command"])
    assert "--cluster create" in create and "--cluster-replicas 1" in create
    assert "redis-node-$n" in create and "1 2 3 4 5 6" in create  # every node, by name
    assert set(services["redis-cluster-create"]["depends_on"]) == set(nodes)


@pytest.mark.parametrize(("service", "expected"), [
    ("worker", ("celery", "worker")), ("beat", ("celery", "beat")), ("mcp", ("rookhaven", "mcp")),
    ("metrics", ("rookhaven", "metrics")),
])
def test_each_service_command_names_a_real_entry_point(service: str,
                                                       expected: tuple[str, str]) -> None:
    words = command_words(compose()["services"][service]["command"])
    assert resolve(words) == expected


def test_every_rookhaven_service_is_built_from_the_project_and_waits_for_a_healthy_redis(
        ) -> None:
    services = compose()["services"]
    for name in ROOKHAVEN_SERVICES:
        service = services[name]
        build = service["build"]
        context = ROOT / (build if isinstance(build, str) else build["context"])
        assert (context / "Dockerfile").is_file(), name
        assert service["depends_on"]["redis"]["condition"] == "service_healthy", name


def test_the_compose_environment_is_valid_configuration_for_every_service() -> None:
    services = compose()["services"]
    for name in ROOKHAVEN_SERVICES:
        env = services[name]["environment"]
        unknown = sorted(k for k in env if k.startswith("ROOKHAVEN_") and k not in KNOWN)
        assert not unknown, f"{name} sets unknown settings {unknown}"
        settings = Settings.from_mapping({k: str(v) for k, v in env.items()})
        assert settings.redis_url == "redis://redis:6379/0", name
    mcp = Settings.from_mapping(services["mcp"]["environment"])
    # What the container binds: refused without a token.
    check_bind("0.0.0.0", mcp.mcp_token is not None)


def test_compose_refuses_to_start_without_an_mcp_token() -> None:
    with pytest.raises(MissingVariableError, match="ROOKHAVEN_MCP_TOKEN"):
        compose({})


@pytest.mark.parametrize("service", ["mcp", "metrics"])
def test_servers_listen_in_their_container_but_publish_on_the_hosts_loopback(
        service: str) -> None:
    found = compose()["services"][service]
    flags = vars(build_parser().parse_args(command_words(found["command"])[1:]))
    host, port = flags[f"{service}_host"], flags[f"{service}_port"]
    assert host == "0.0.0.0"  # inside the container, or other containers cannot reach it
    assert [str(p) for p in found["ports"]] == [f"127.0.0.1:{port}:{port}"]


def test_the_mcp_server_speaks_http() -> None:
    mcp = compose()["services"]["mcp"]
    assert build_parser().parse_args(command_words(mcp["command"])[1:]).http


def test_beat_runs_exactly_once_and_workers_do_not_embed_it() -> None:
    services = compose()["services"]
    beat = services["beat"]
    assert beat.get("deploy", {}).get("replicas", 1) == 1
    assert beat.get("container_name"), "a fixed name is what makes --scale beat=2 fail"
    assert beat["volumes"], "beat's schedule state must outlive the container"
    for name in ("worker", "mcp", "metrics"):
        words = command_words(services[name]["command"])
        assert "beat" not in words and "-B" not in words and "--beat" not in words, name


def test_workers_can_be_scaled() -> None:
    worker = compose()["services"]["worker"]
    assert "container_name" not in worker and "ports" not in worker
    assert worker.get("deploy", {}).get("replicas", 1) >= 1


def test_redis_is_version_7_with_the_durable_config_and_a_health_check() -> None:
    redis = compose()["services"]["redis"]
    assert redis["image"].split(":")[1].startswith("7")
    mounted = {str(v).split(":")[1]: str(v).split(":")[0] for v in redis["volumes"]}
    words = command_words(redis["command"])
    assert words[0] == "redis-server" and mounted[words[1]] == "./ops/redis.conf"
    assert any(target == "/data" for target in mounted), "the AOF must live on a volume"
    assert redis["healthcheck"]["test"], "depends_on service_healthy needs a health check"


# --- ops/redis.conf ----------------------------------------------------------------------

def redis_directives(path: Path) -> dict[str, str]:
    directives = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.strip().partition(" ")
            directives[name.lower()] = value.strip()
    return directives


def test_the_redis_config_keeps_every_write_and_never_evicts() -> None:
    conf = redis_directives(OPS / "redis.conf")
    assert conf["appendonly"] == "yes"
    assert conf["appendfsync"] in ("always", "everysec")
    assert conf["no-appendfsync-on-rewrite"] == "no"
    assert conf["aof-use-rdb-preamble"] == "yes"
    assert conf["maxmemory-policy"] == "noeviction"
    assert conf["stop-writes-on-bgsave-error"] == "yes"
    # It must not pin network or paths: compose and hosts supply their own.
    assert not {"bind", "port", "dir", "protected-mode", "daemonize"} & set(conf)


# --- Dockerfile --------------------------------------------------------------------------

def dockerfile_stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile's instructions (continuations joined), one list per FROM stage."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    stages: list[list[tuple[str, str]]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        keyword, _, rest = line.strip().partition(" ")
        if keyword.upper() == "FROM":
            stages.append([])
        stages[-1].append((keyword.upper(), rest.strip()))
    return stages


def test_the_image_is_python_3_11_slim_and_runs_as_an_unprivileged_user() -> None:
    stages = dockerfile_stages()
    assert all(stage[0][1].split()[0] == "python:3.11-slim" for stage in stages)
    final = stages[-1]
    users = [value for keyword, value in final if keyword == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")


def test_the_image_installs_the_project_without_dev_or_bench_extras() -> None:
    runs = " ".join(v for stage in dockerfile_stages() for k, v in stage if k == "RUN")
    assert re.search(r"pip install \.(\s|$)", runs), "installs this checkout"
    assert "[dev" not in runs and "[bench" not in runs and "-e " not in runs
    for stage in dockerfile_stages():
        for keyword, value in stage:
            if keyword == "COPY" and not value.startswith("--from"):
                for source in value.split()[:-1]:
                    assert (ROOT / source).exists(), f"COPY {source}: no such path"


def test_the_image_default_command_names_a_real_entry_point() -> None:
    final = dockerfile_stages()[-1]
    cmd = [value for keyword, value in final if keyword == "CMD"]
    assert not [v for k, v in final if k == "ENTRYPOINT"], "services override CMD alone"
    assert cmd, "the image needs a default command"
    words = json.loads(cmd[-1])  # exec form: no shell between signals and the process
    assert resolve(words)[0] in ("celery", "rookhaven")


def test_the_build_context_leaves_out_the_venv_and_git_history() -> None:
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".git" in ignored


# --- ops/systemd and the environment file ------------------------------------------------

def unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """A systemd unit as {section: {key: [values]}} (keys may repeat)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def exec_start(path: Path) -> list[str]:
    """ExecStart with systemd's specifiers and ${VAR}s from Environment= filled in."""
    service = unit(path)["Service"]
    env = dict(e.split("=", 1) for e in service.get("Environment", []))
    line = service["ExecStart"][-1]
    line = line.replace("%i", "1").replace("%H", "host").replace("%%", "%")
    line = re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], line)
    return shlex.split(line)


def test_there_is_a_worker_template_one_beat_an_mcp_and_a_metrics_unit() -> None:
    assert [p.name for p in UNITS] == ["rookhaven-beat.service", "rookhaven-mcp.service",
                                       "rookhaven-metrics.service",
                                       "rookhaven-worker@.service"]


@pytest.mark.parametrize("path", UNITS, ids=lambda p: p.name)
def test_each_unit_runs_a_real_entry_point_from_the_venv(path: Path) -> None:
    words = exec_start(path)
    assert words[0].startswith(VENV_BIN)
    expected = {"rookhaven-worker@.service": ("celery", "worker"),
                "rookhaven-beat.service": ("celery", "beat"),
                "rookhaven-mcp.service": ("rookhaven", "mcp"),
                "rookhaven-metrics.service": ("rookhaven", "metrics")}[path.name]
    assert resolve(words) == expected


@pytest.mark.parametrize("path", UNITS, ids=lambda p: p.name)
def test_each_unit_reads_the_environment_file_restarts_and_is_hardened(path: Path) -> None:
    service = unit(path)["Service"]
    assert service["EnvironmentFile"] == ["/etc/rookhaven/rookhaven.env"]
    assert service["Restart"][-1] in ("always", "on-failure")
    assert service["User"][-1] not in ("root", "0")
    for key, value in {"NoNewPrivileges": "yes", "ProtectSystem": "strict",
                       "ProtectHome": "yes", "PrivateTmp": "yes"}.items():
        assert service[key] == [value], f"{path.name}: {key}"
    assert service["CapabilityBoundingSet"] == [""]
    assert unit(path)["Install"]["WantedBy"] == ["multi-user.target"]


def test_the_worker_stops_warmly_and_waits_longer_than_a_task_may_run() -> None:
    service = unit(OPS / "systemd" / "rookhaven-worker@.service")["Service"]
    assert service["KillMode"] == ["mixed"]  # SIGTERM to celery's main process only
    assert float(service["TimeoutStopSec"][-1]) > Settings().task_time_limit


def test_the_example_environment_file_is_valid_configuration() -> None:
    pairs = [line.split("=", 1) for line in ENV_EXAMPLE.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    env = {key: value for key, value in pairs}
    assert not sorted(k for k in env if k.startswith("ROOKHAVEN_") and k not in KNOWN)
    settings = Settings.from_mapping(env)
    assert settings.redis_url and settings.beat_schedule_file is not None
    assert "WORKER_CONCURRENCY" in env  # the worker unit's ExecStart uses it


def test_every_rookhaven_variable_in_the_deployment_files_is_a_known_setting() -> None:
    files = [COMPOSE, DOCKERFILE, ENV_EXAMPLE, OPS / "runbook.md", *UNITS]
    named = {(path.relative_to(ROOT).as_posix(), variable) for path in files
             for variable in re.findall(r"\bROOKHAVEN_[A-Z0-9_]+", path.read_text())}
    unknown = sorted(f"{path}: {variable}" for path, variable in named if variable not in KNOWN)
    assert not unknown, "\n".join(unknown)


def test_every_rookhaven_command_in_the_runbook_parses() -> None:
    runbook = (OPS / "runbook.md").read_text()
    # Lines of its indented code blocks, from the word `rookhaven` on, comments dropped.
    commands = [shlex.split(m.group(1), comments=True) for m in
                re.finditer(r"^ {4,}(?:\S+ )?(rookhaven [a-z].*)$", runbook, re.MULTILINE)]
    assert len(commands) >= 10
    # KEY is the runbook's placeholder for a result key; the CLI checks a key's shape.
    placeholders = {"KEY": "sha256:" + "0" * 64}
    for words in commands:
        resolve([placeholders.get(word, word) for word in words])

