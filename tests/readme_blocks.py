"""The shell blocks of the README's reference pages (``docs/``), found generically, for the
tests that run and check them.

``SECTIONS`` names them: a page, and a heading on it. A section runs from its heading to the
next heading of the same or a higher level, so a subsection added under it (a Sentinel one,
say) is covered. In it, every indented code block and every fenced block tagged ``sh``,
``bash``, ``shell``, ``console`` or untagged is a shell block; fenced ``json``, ``python``
and other languages are not.

Two conventions, written in the pages themselves:

- a block whose last command ends with the comment ``# runs until Ctrl-C`` starts a server
  or a worker: it runs in a terminal of its own (a fresh shell in the clone, nothing
  carried from the other blocks) and stays up while the later blocks run;
- a line ``<!-- readme-test: skip REASON -->`` just before a block leaves it out (for an
  example that needs what a test machine has not, such as a Sentinel deployment); the
  reason is required.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# The sections whose blocks must run as written: (page, the start of a heading on it), in
# the order a reader follows them. The blocks run in this order, as if pasted one after
# another into one terminal, so a page's blocks may use what an earlier page's made.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("docs/pipeline.md", "Job pipeline"),
    ("docs/pipeline.md", "High availability"),
    ("docs/auditing.md", "Verification and bulk re-ranking"),
    ("docs/auditing.md", "Tamper evidence"),
    ("docs/engines.md", "Engines and their versions"),
    ("docs/engines.md", "The default engine"),
    ("docs/mcp.md", "Rank an MCP server's tools"),
    ("docs/mcp.md", "MCP server"),
    ("docs/deployment.md", "Docker Compose"),
)
SHELL_FENCES = ("", "sh", "bash", "shell", "console")
LONG_RUNNING = "# runs until Ctrl-C"
SKIP = re.compile(r"<!--\s*readme-test:\s*skip\b\s*(.*?)\s*-->")

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")


@dataclass(frozen=True)
class Block:
    """One shell block: where it is, its text, and how it runs."""

    section: str
    line: int  # of its first line in its page, 1-based
    text: str
    skip: str | None = None  # the reason given, if it is left out
    page: str = "README.md"  # relative to the repository's root

    @property
    def long_running(self) -> bool:
        """Whether it starts something that runs until Ctrl-C (see the module docstring)."""
        commands = [ln for ln in self.text.splitlines()
                    if ln.strip() and not ln.lstrip().startswith("#")]
        return bool(commands) and commands[-1].rstrip().endswith(LONG_RUNNING)

    def name(self) -> str:
        return f"{self.page} line {self.line} ({self.section!r})"


def section_lines(text: str, title: str, page: str = "README.md") -> list[tuple[int, str]]:
    """The (line number, text) of every line of the section of ``text`` (the page ``page``)
    whose heading starts with ``title``, its subsections included; KeyError if there is
    none."""
    lines = text.splitlines()
    start = level = None
    fence = None  # the fence a code block was opened with: `# comment` lines in it are code
    for number, line in enumerate(lines, start=1):
        opened = _FENCE.match(line)
        if opened and not opened.group(1):
            fence = None if fence and line.startswith(fence) else fence or opened.group(2)
            continue
        heading = None if fence else _HEADING.match(line)
        if heading is None:
            continue
        depth = len(heading.group(1))
        if start is None and heading.group(2).startswith(title):
            start, level = number, depth
        elif start is not None and level is not None and depth <= level:
            return [(n, lines[n - 1]) for n in range(start + 1, number)]
    if start is None:
        raise KeyError(f"{page} has no section {title!r}")
    return [(n, lines[n - 1]) for n in range(start + 1, len(lines) + 1)]


def blocks(root: Path, sections: Iterable[tuple[str, str]] = SECTIONS) -> list[Block]:
    """Every shell block of ``sections`` (pages read under ``root``), in the order of
    ``sections`` and, in a section, of its lines; a block two sections hold is listed once,
    with the first. KeyError for a page or a section that is not there."""
    found: list[Block] = []
    seen: set[tuple[str, int]] = set()
    texts: dict[str, str] = {}
    for page, title in sections:
        if page not in texts:
            path = root / page
            if not path.is_file():
                raise KeyError(f"{page} is missing: it holds the section {title!r}")
            texts[page] = path.read_text(encoding="utf-8")
        for block in page_blocks(texts[page], (title,), page):
            if (page, block.line) not in seen:
                seen.add((page, block.line))
                found.append(block)
    return found


def page_blocks(text: str, titles: Iterable[str], page: str = "README.md") -> list[Block]:
    """Every shell block of the sections ``titles`` of one page's ``text``, in page order."""
    found: list[Block] = []
    for title in titles:
        found += _blocks_of(page, title, section_lines(text, title, page))
    return sorted(found, key=lambda b: b.line)


def _blocks_of(page: str, title: str, lines: list[tuple[int, str]]) -> list[Block]:
    found: list[Block] = []
    previous = ""  # the last non-blank line before the current position, outside blocks
    i = 0
    while i < len(lines):
        number, line = lines[i]
        fence = _FENCE.match(line)
        if fence and not fence.group(1):
            closing = fence.group(2)
            j = i + 1
            while j < len(lines) and not lines[j][1].lstrip().startswith(closing):
                j += 1
            body = [text for _, text in lines[i + 1:j]]
            if fence.group(3).lower() in SHELL_FENCES:
                found.append(_block(page, title, number + 1, body, _before(lines, i)))
            i, previous = j + 1, closing
            continue
        if line.startswith(("    ", "\t")) and not previous.strip():
            j = i
            while j < len(lines) and (lines[j][1].startswith(("    ", "\t"))
                                      or not lines[j][1].strip()):
                j += 1
            body = [text for _, text in lines[i:j]]
            found.append(_block(page, title, number, body, _before(lines, i)))
            i, previous = j, lines[j - 1][1]
            continue
        previous = line
        i += 1
    return found


def _before(lines: list[tuple[int, str]], i: int) -> str:
    """The nearest non-blank line before position ``i``."""
    return next((text for _, text in reversed(lines[:i]) if text.strip()), "")


def _block(page: str, title: str, line: int, body: list[str], before: str) -> Block:
    text = textwrap.dedent("\n".join(body)).strip("\n") + "\n"
    skip = SKIP.search(before)
    if skip is not None and not skip.group(1):
        raise ValueError(f"{page} line {line}: a readme-test skip needs a reason")
    return Block(section=title, line=line, text=text, skip=skip.group(1) if skip else None,
                 page=page)
