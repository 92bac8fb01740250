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
