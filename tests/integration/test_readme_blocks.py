"""Every shell block of the pipeline, high-availability, verification, tamper-evidence,
engine, MCP and deployment sections of the README's reference pages (``docs/``) runs as
written in a fresh copy of the repository (tests/readme_blocks.py finds them, and its
``SECTIONS`` names the sections; a block added to those sections is run without touching
this file; a block marked ``readme-test: skip REASON`` is not run).

The fresh environment, and what stands in for what a reader does:

- The clone is a copy of every file git tracks, as it is in the working tree (so a file
  a page names but git does not hold is missing, as in a real clone), in a temp dir,
  with the tree's numba cache of compiled kernels (see ``clone``).
- The README's install command (``python3 -m venv .venv && .venv/bin/pip install -e .``)
  is stood in for by a cheap ``.venv`` in the clone: ``venv --without-pip`` of this
  interpreter, whose path puts the clone first and this interpreter's site-packages after
  it, with this environment's console scripts (``rookhaven``, ``celery``) re-pointed at
  it. So ``.venv/bin/rookhaven`` imports the clone's code, in seconds, without pip or a
  network; a pip install per run would take minutes on this machine. A page's
  ``.venv/bin/pip install -e '.[EXTRA]'`` is stood in for by a ``.venv/bin/pip`` that
  installs nothing and fails unless every requirement of the project and those extras is
  installed in this environment (the dev extras hold them all).
- PATH keeps no virtual environment's ``bin``: a bare ``rookhaven`` fails as it would for
  a reader who did not activate one. No ``ROOKHAVEN_*`` variable is inherited.
- The README's ``redis://127.0.0.1:6379/0`` is replaced by the test Redis (database 15 or
  ROOKHAVEN_TEST_REDIS_URL); ``ROOKHAVEN_KEY_PREFIX`` (this test's own),
  ``ROOKHAVEN_MCP_PORT`` (a free port) and ``ROOKHAVEN_BEAT_SCHEDULE_FILE`` are set, as a
  reader's defaults would be on a machine of their own.

Blocks run in the order of ``SECTIONS`` (and of the page in a section) with
``bash -e -o pipefail``, each with a time limit, as if pasted one after another into one
terminal: shell variables, exports and the directory carry from block to block, and from
page to page. A block marked ``# runs until Ctrl-C`` starts in a terminal of
its own (a fresh shell in the clone) and stays up, once it is ready (a worker's heartbeat
key, or a server's port answering), until every block has run; it must still be running
then. A failing block is named by its page, line and section, with its output; so is one
whose output carries an MCP tool error or a JSON-RPC error (those exit 0).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import site
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import ROOT, free_port, stop_groups, wait_until
from tests.readme_blocks import SECTIONS, Block, blocks

README_REDIS = "redis://127.0.0.1:6379/0"
BLOCK_TIMEOUT = 240.0  # s; the re-ranks go through a real worker on a busy 2-core machine
# A worker is ready once it has compiled its kernels, and the copy's numba cache is cold:
# 89-91 s from cold for bm25@2 or bm25@3 on an idle 2-core machine (making the first start
# cheap is test_warmup's subject); a 90 s wait failed one CI run in three.
READY_TIMEOUT = 240.0
NOISE = re.compile(r'"msg":\s*"job \S+ \S+ in ')  # the Executor's line per job and delivery
MCP_ERROR = re.compile(r'"isError":\s*true|"error":\s*\{\s*"code"')
# Saves what a terminal keeps between two pastes: exported variables, shell variables the
# blocks set (bash's own, present before any block ran, are left alone) and the directory.
_STATE = r'''
__rh_save() {
  local v
  { export -p
    for v in $(compgen -v); do
      [[ $v == __rh* || $v == __RH* ]] && continue
      case " $__RH_BASE " in *" $v "*) ;; *) declare -p "$v" ;; esac
    done
    printf 'cd %q\n' "$PWD"
  } > "$__RH_STATE" 2>/dev/null
}
'''


def clone(destination: Path) -> Path:
    """A copy of every tracked file of the working tree at ``destination``."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached"],
                            capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout, so no clone to copy: {listed.stderr.decode()[:200]}")
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree: a clone made after the commit lacks it
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    # numba's cache of the compiled kernels, as a reader's second run has it: numba keys it
    # by the source's mtime and size (copy2 keeps both), not its path. Without it every
    # worker and server a block starts compiles the kernels beside it (20-90 s of both
    # cores); a start from an empty cache is test_warmup's subject, not this test's.
    for cached in (ROOT / "rookhaven").rglob("__pycache__/*.nb[ic]"):
        target = destination / cached.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(cached, target)
    return destination


def cheap_venv(repo: Path) -> Path:
    """``repo/.venv``: this interpreter, the clone first on its path, console scripts."""
    venv = repo / ".venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # Plain path lines: this environment's .pth files (its editable install of the
    # original tree among them) are not run, so `rookhaven` and `workers` come from the clone.
    (Path(purelib) / "rookhaven-readme-test.pth").write_text(
        "\n".join([str(repo), *site.getsitepackages()]) + "\n", encoding="utf-8")
    scripts = set(tomllib.loads((repo / "pyproject.toml").read_text())["project"]["scripts"])
    here = Path(sys.executable).parent
    for name in sorted(scripts | {"celery"}):
        source = here / name
        if not source.is_file():
            pytest.fail(f"{source} is missing: install the project with its dev extras")
        body = source.read_text(encoding="utf-8").split("\n", 1)[1]
        target = venv / "bin" / name
        target.write_text(f"#!{python}\n{body}", encoding="utf-8")
        target.chmod(0o755)
    pip = venv / "bin" / "pip"
    pip.write_text(f"#!{python}\n" + _PIP.replace("PYPROJECT", repr(str(repo / "pyproject.toml"))),
                   encoding="utf-8")
    pip.chmod(0o755)
    return venv


# The cheap venv's pip: `pip install -e .` or `pip install -e '.[EXTRA,...]'` of the project,
# whose requirements (by name) must already be installed; anything else fails.
_PIP = r'''
"""Stands in for pip in the readme test's venv: installs nothing, checks what is there."""
import importlib.metadata
import re
import sys
import tomllib

args = sys.argv[1:]
wanted = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", args[2]) if len(args) == 3 \
    and args[:2] == ["install", "-e"] else None
if wanted is None:
    sys.exit("pip (the readme test's stand-in) installs only this project, as "
             f"`pip install -e .[EXTRA]`, not: pip {' '.join(args)}")
with open(PYPROJECT, "rb") as file:
    project = tomllib.load(file)["project"]
extras = project.get("optional-dependencies", {})
requirements = list(project["dependencies"])
for extra in filter(None, (wanted.group(1) or "").split(",")):
    if extra not in extras:
        sys.exit(f"pip (the readme test's stand-in): the project has no extra {extra!r}")
    requirements += extras[extra]
missing = []
for requirement in requirements:
    name = re.match(r"[A-Za-z0-9._-]+", requirement).group(0)
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        missing.append(requirement)
if missing:
    sys.exit("pip (the readme test's stand-in): the test's environment lacks "
             + ", ".join(missing))
print("pip (the readme test's stand-in): every requirement is installed")
'''


def reader_path() -> str:
    """PATH without any virtual environment's bin directory."""
    def in_venv(entry: str) -> bool:
        return bool(entry) and (Path(entry).parent / "pyvenv.cfg").exists()
    return os.pathsep.join(e for e in os.environ.get("PATH", "").split(os.pathsep)
                           if not in_venv(e))


def base_environment(redis_url: str, prefix: str, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ROOKHAVEN_") and k not in ("VIRTUAL_ENV", "PYTHONPATH",
                                                            "PYTHONHOME")}
    env.update(PATH=reader_path(), ROOKHAVEN_KEY_PREFIX=prefix,
               ROOKHAVEN_MCP_PORT=str(free_port()),
               ROOKHAVEN_BEAT_SCHEDULE_FILE=str(tmp / "beat-schedule"))
    return env


class Terminal:
    """The reader's terminal (state carried from block to block) and the servers and
    workers started in terminals of their own."""

    def __init__(self, repo: Path, env: dict[str, str], redis_url: str, tmp: Path) -> None:
        self.repo, self.env, self.redis_url, self.tmp = repo, env, redis_url, tmp
        self.state = tmp / "shell-state"
        self.background: list[tuple[Block, subprocess.Popen[bytes], Path]] = []
        pristine = subprocess.run(["bash", "-c", "compgen -v"], env=env, cwd=repo,
                                  capture_output=True, text=True, check=True).stdout.split()
        self.env["__RH_BASE"] = " ".join(pristine)
        self.env["__RH_STATE"] = str(self.state)

    def script(self, block: Block, carry: bool) -> str:
        text = block.text.replace(README_REDIS, self.redis_url)
        load = f"source {shlex.quote(str(self.state))}\n" if carry and self.state.exists() \
            else f"cd {shlex.quote(str(self.repo))}\n"
        return (f"{_STATE}{load}set -e -o pipefail\n"
                f"# ---- {block.name()}\n{text}\n# ----\n__rh_save\n")

    def run(self, block: Block) -> None:
        path = self.tmp / f"block-{_label(block)}.sh"
        path.write_text(self.script(block, carry=True), encoding="utf-8")
        try:
            done = subprocess.run(["bash", str(path)], cwd=self.repo, env=self.env,
                                  capture_output=True, text=True, timeout=BLOCK_TIMEOUT,
                                  start_new_session=True)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(self.report(block, f"did not finish in {BLOCK_TIMEOUT:.0f} s",
                                    _text(exc.stdout) + _text(exc.stderr)), pytrace=False)
        if done.returncode != 0:
            pytest.fail(self.report(block, f"exited with status {done.returncode}",
                                    done.stdout + done.stderr), pytrace=False)
        # An MCP example exits 0 whatever the server answered: an error must not be the answer.
        if MCP_ERROR.search(done.stdout):
            pytest.fail(self.report(block, "printed an MCP tool error or JSON-RPC error",
                                    done.stdout + done.stderr), pytrace=False)
        # What a reader sees on stderr: no traceback, and no line per job (progress instead).
        if "Traceback" in done.stderr or NOISE.search(done.stderr):
            pytest.fail(self.report(block, "wrote a traceback or per-job lines on stderr",
                                    done.stderr), pytrace=False)

    def start(self, block: Block) -> None:
        path = self.tmp / f"block-{_label(block)}.sh"
        path.write_text(self.script(block, carry=False), encoding="utf-8")
        log = self.tmp / f"block-{_label(block)}.log"
        with log.open("wb") as sink:
            proc = subprocess.Popen(["bash", str(path)], cwd=self.repo, env=self.env,
                                    stdout=sink, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self.background.append((block, proc, log))
        wait_until(lambda: proc.poll() is not None or self.ready(block),
                   READY_TIMEOUT, what=f"{block.name()} to be ready")
        if proc.poll() is not None:
            pytest.fail(self.report(block, f"exited with status {proc.returncode} before it "
                                    "was ready", log.read_text(errors="replace")),
                        pytrace=False)

    def ready(self, block: Block) -> bool:
        """Whether what ``block`` starts is up: a worker's heartbeat, or a port answering."""
        if re.search(r"\bcelery\b.*\bworker\b", block.text):
            client = redis.Redis.from_url(self.redis_url)
            try:
                prefix = self.env["ROOKHAVEN_KEY_PREFIX"]
                return any(True for _ in client.scan_iter(match=f"{prefix}:worker:*"))
            finally:
                client.close()
        if "--http" in block.text:
            named = re.search(r"--port[ =](\d+)", block.text)
            port = int(named.group(1)) if named else int(self.env["ROOKHAVEN_MCP_PORT"])
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return False
        pytest.fail(f"{block.name()} runs until Ctrl-C, but this test cannot tell when it is "
                    "ready: teach Terminal.ready how", pytrace=False)

    def check_still_running(self) -> None:
        for block, proc, log in self.background:
            if proc.poll() is not None:
                pytest.fail(self.report(block, f"exited with status {proc.returncode} while "
                                        "the later blocks ran", log.read_text(errors="replace")),
                            pytrace=False)

    def stop(self) -> None:
        # The shell of each block exits at once; the worker it started may still be
        # writing while it shuts down: wait for every process of the block.
        stop_groups([proc for _, proc, _ in self.background])

    @staticmethod
    def report(block: Block, what: str, output: str) -> str:
        return (f"{block.name()} {what}:\n{block.text}--- its output (last 6000 characters)"
                f" ---\n{output[-6000:]}")


def _label(block: Block) -> str:
    """A file name for ``block``'s script and log: its page and line."""
    return f"{Path(block.page).stem}-{block.line}"


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode(errors="replace")


@pytest.fixture
def terminal(redis_url: str, key_prefix: str, tmp_path: Path) -> Iterator[Terminal]:
    repo = clone(tmp_path / "rookhaven")
    cheap_venv(repo)
    work = tmp_path / "work"
    work.mkdir()
    shell = Terminal(repo, base_environment(redis_url, key_prefix, tmp_path), redis_url, work)
    try:
        yield shell
    finally:
        shell.stop()


@pytest.mark.slow
def test_every_shell_block_of_the_reference_pages_runs_in_a_fresh_clone(
        terminal: Terminal) -> None:
    found = blocks(terminal.repo)  # as the clone holds them: a page git lacks is missing
    run = [b for b in found if b.skip is None]
    assert len(run) >= 6, [b.name() for b in found]
    assert {(b.page, b.section) for b in found} == set(SECTIONS), [b.name() for b in found]
    for block in run:
        if block.long_running:
            terminal.start(block)
        else:
            terminal.run(block)
    terminal.check_still_running()
