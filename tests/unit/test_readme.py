"""The README stays true: its examples run, and every setting and command is documented."""

from __future__ import annotations

import re

from rookhaven.cli.main import build_parser
from rookhaven.config import SPECS
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_in_the_configuration_table_with_its_default() -> None:
    for spec in SPECS:
        default = "(unset)" if spec.default is None else f"`{spec.default}`"
        assert f"| `{spec.variable}` | {default} |" in README, spec.variable


def test_every_subcommand_is_in_the_command_table() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert commands
    for name in commands:
        assert f"`rookhaven {name}" in README, name


def test_the_library_example_runs() -> None:
    (example,) = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    exec(compile(example, "README.md", "exec"), {})


def test_the_two_commands_are_the_ones_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e . && .venv/bin/rookhaven demo" in README
    assert ".venv/bin/python -m pytest" in README and ".venv/bin/python -m pytest" in ci


def test_the_run_sections_have_blocks_and_each_calls_the_venv_and_the_shipped_sample() -> None:
    from tests.readme_blocks import SECTIONS, blocks, section_lines

    for title in SECTIONS:
        section_lines(README, title)  # each is still there (KeyError if renamed)
    found = blocks(README)
    assert {"Job pipeline", "Verification and bulk re-ranking", "Tamper evidence",
            "MCP server"} <= {b.section for b in found}, [b.name() for b in found]
    # A bare `rookhaven` or `celery` is not on a fresh clone's PATH; corpus.jsonl does not exist.
    bare = re.compile(r"(?:^|[|;&(]|\$\()\s*(?:\w+=\S+\s+)*(rookhaven|celery)\b")
    for block in found:
        commands = [line.split(" #")[0] for line in block.text.splitlines()]
        assert not [c for c in commands if bare.search(c)], block.name()
        assert "corpus.jsonl" not in block.text, block.name()
    assert any("rookhaven/data/port_ops.jsonl" in b.text for b in found)
    # The store's URL is exported once per terminal, not set on a single command.
    exports = [b for b in found if "export ROOKHAVEN_REDIS_URL=" in b.text]
    assert len(exports) == sum(1 for b in found if b.long_running and "celery" in b.text) + 1


def test_block_extraction_follows_subsections_fences_and_the_two_conventions() -> None:
    from tests.readme_blocks import blocks

    readme = "\n".join([
        "## Job pipeline", "", "    .venv/bin/rookhaven corpus list", "",
        "#### Sentinel", "", "<!-- readme-test: skip needs three Sentinels -->", "",
        "    .venv/bin/rookhaven sweep", "", "```json", "{}", "```", "",
        "```sh", ".venv/bin/celery -A workers worker   # runs until Ctrl-C", "# serves", "```",
        "## Verification and bulk re-ranking", "", "    .venv/bin/rookhaven verify",
        "## Tamper evidence", "## Rank an MCP server's tools", "## MCP server",
        "## High availability", "## Deployment", "",
        "    docker compose up",
    ])
    found = blocks(readme)
    assert [(b.line, b.text.strip(), b.skip, b.long_running) for b in found] == [
        (3, ".venv/bin/rookhaven corpus list", None, False),
        (9, ".venv/bin/rookhaven sweep", "needs three Sentinels", False),
        (16, ".venv/bin/celery -A workers worker   # runs until Ctrl-C\n# serves", None, True),
        (21, ".venv/bin/rookhaven verify", None, False),
    ]
