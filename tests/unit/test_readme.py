"""The README and its reference pages stay true: their examples run, every setting and
command is documented, and their links lead somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from rookhaven.cli.main import build_parser
from rookhaven.config import SPECS
from tests.conftest import ROOT


def read(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


README = read("README.md")
CONFIGURATION = read("docs/configuration.md")
CLI = read("docs/cli.md")
LIBRARY = read("docs/library.md")
# The reference pages the README's reference sections moved to; the README links each.
PAGES = ("docs/library.md", "docs/cli.md", "docs/configuration.md", "docs/pipeline.md",
         "docs/auditing.md", "docs/engines.md", "docs/mcp.md", "docs/deployment.md")


def table_rows(text: str) -> list[str]:
    """The first cell of every row of the page's tables (the header and rule rows too)."""
    return [line.split(" | ")[0].removeprefix("| ") for line in text.splitlines()
            if line.startswith("| ")]


def test_every_setting_is_in_the_configuration_table_with_its_default() -> None:
    for spec in SPECS:
        default = "(unset)" if spec.default is None else f"`{spec.default}`"
        assert f"| `{spec.variable}` | {default} |" in CONFIGURATION, spec.variable


def test_the_configuration_table_names_each_setting_once_and_nothing_else() -> None:
    named = [cell.strip("`") for cell in table_rows(CONFIGURATION)
             if cell.startswith("`ROOKHAVEN_")]
    assert sorted(named) == sorted(spec.variable for spec in SPECS)


def test_every_subcommand_is_in_the_command_table() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert commands
    for name in commands:
        assert f"`rookhaven {name}" in CLI, name
    # and the table documents no command the parser lacks
    documented = {m.group(1) for cell in table_rows(CLI)
                  for m in re.finditer(r"`rookhaven (\w+)", cell)}
    assert documented == set(commands)


def test_the_library_example_runs() -> None:
    (example,) = re.findall(r"```python\n(.*?)```", LIBRARY, flags=re.S)
    exec(compile(example, "docs/library.md", "exec"), {})


def test_the_two_commands_are_the_ones_ci_runs() -> None:
    from tests.readme_blocks import section_lines

    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    two = "\n".join(text for _, text in section_lines(README, "Two commands"))
    assert "pip install -e . && .venv/bin/rookhaven demo" in two
    assert ".venv/bin/python -m pytest" in two and ".venv/bin/python -m pytest" in ci


def test_the_run_sections_have_blocks_and_each_calls_the_venv_and_the_shipped_sample() -> None:
    from tests.readme_blocks import SECTIONS, blocks, section_lines

    for page, title in SECTIONS:
        section_lines(read(page), title, page)  # each is still there (KeyError if renamed)
    found = blocks(ROOT)
    assert {("docs/pipeline.md", "Job pipeline"), ("docs/pipeline.md", "High availability"),
            ("docs/auditing.md", "Verification and bulk re-ranking"),
            ("docs/auditing.md", "Tamper evidence"),
            ("docs/engines.md", "Engines and their versions"),
            ("docs/mcp.md", "Rank an MCP server's tools"), ("docs/mcp.md", "MCP server")
            } <= {(b.page, b.section) for b in found if b.skip is None}, \
        [b.name() for b in found]
    assert {(b.page, b.section) for b in found} == set(SECTIONS), [b.name() for b in found]
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
    from tests.readme_blocks import page_blocks

    page = "\n".join([
        "## Job pipeline", "", "    .venv/bin/rookhaven corpus list", "",
        "#### Sentinel", "", "<!-- readme-test: skip needs three Sentinels -->", "",
        "    .venv/bin/rookhaven sweep", "", "```json", "{}", "```", "",
        "```sh", ".venv/bin/celery -A workers worker   # runs until Ctrl-C", "# serves", "```",
        "## Verification and bulk re-ranking", "", "    .venv/bin/rookhaven verify",
        "## Tamper evidence", "## Rank an MCP server's tools", "## MCP server",
        "## High availability", "## Deployment", "",
        "    docker compose up",
    ])
    titles = ("Job pipeline", "High availability", "Verification and bulk re-ranking",
              "Tamper evidence", "Rank an MCP server's tools", "MCP server")
    found = page_blocks(page, titles, "docs/x.md")
    assert [(b.line, b.text.strip(), b.skip, b.long_running) for b in found] == [
        (3, ".venv/bin/rookhaven corpus list", None, False),
        (9, ".venv/bin/rookhaven sweep", "needs three Sentinels", False),
        (16, ".venv/bin/celery -A workers worker   # runs until Ctrl-C\n# serves", None, True),
        (21, ".venv/bin/rookhaven verify", None, False),
    ]
    assert {b.page for b in found} == {"docs/x.md"}
    assert found[0].name() == "docs/x.md line 3 ('Job pipeline')"


def test_blocks_follow_the_order_of_the_sections_across_pages(tmp_path: Path) -> None:
    from tests.readme_blocks import blocks

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# A\n\n## First\n\n    echo a1\n\n## Second\n\n    echo a2\n", encoding="utf-8")
    (tmp_path / "docs" / "b.md").write_text("## Third\n\n    echo b1\n", encoding="utf-8")
    found = blocks(tmp_path, [("docs/a.md", "Second"), ("docs/b.md", "Third"),
                              ("docs/a.md", "First"), ("docs/a.md", "Second")])
    assert [(b.page, b.text) for b in found] == [
        ("docs/a.md", "echo a2\n"), ("docs/b.md", "echo b1\n"), ("docs/a.md", "echo a1\n")]


def test_every_relative_link_of_the_readme_and_its_pages_leads_somewhere() -> None:
    link = re.compile(r"\]\(([^)\s]+)\)")
    linked = set()
    for page in ("README.md", *PAGES):
        base = (ROOT / page).parent
        for target in link.findall(read(page)):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            resolved = (base / path).resolve() if path else ROOT / page
            assert resolved.exists(), f"{page}: {target}"
            if anchor:
                assert anchor in _anchors(resolved.read_text(encoding="utf-8")), \
                    f"{page}: {target}"
            if page == "README.md":
                linked.add(resolved)
    assert {(ROOT / page).resolve() for page in PAGES} <= linked


def _anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings (fenced code left out)."""
    anchors, fence = set(), False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        heading = None if fence else re.match(r"#{1,6}\s+(.*?)\s*$", line)
        if heading:
            words = re.sub(r"[^\w\- ]", "", heading.group(1).lower())
            anchors.add(words.replace(" ", "-"))
    return anchors
