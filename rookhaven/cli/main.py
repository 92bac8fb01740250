"""Entry point of the ``rookhaven`` command: parse, load settings, dispatch, map errors to exits.

Exit status: 0 success, 1 an operational failure (or a check that found a problem),
2 bad input (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any, NoReturn

from .. import __version__
from ..config import Settings
from ..embedding import offer_settings
from ..errors import InputError, RookhavenError
from ..logs import configure_logging

# Each module has ``register(subparsers)``, which adds its parser and sets ``run``:
# a function (args, settings) -> exit status. A flag whose dest is named like a setting
# (``provider``, ``verify_sample``, ...) overrides it in the settings ``run`` receives.
SUBCOMMANDS = (
    "retrieve",
    "eval",
    "mcp",
    "corpus",
    "submit",
    "job",
    "result",
    "sweep",
    "verify",
    "rerank",
    "report",
    "token",
    "metrics",
    "engines",
    "log",
    "store",
)


PLUGIN_GROUP = "rookhaven.commands"


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line and exit 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Commands describe themselves with their module docstring, written with ``code``
        # quotes for readers of the source; a terminal shows `code`.
        if isinstance(kwargs.get("description"), str):
            kwargs["description"] = kwargs["description"].replace("``", "`")
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> Parser:
    """The full parser; a plugin command's own parser is loaded only when it is ``command``."""
    parser = Parser(prog="rookhaven", description="Seeded, auditable, reproducible retrieval.")
    parser.add_argument("--version", action="version", version=f"rookhaven {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    subparsers.required = True
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__package__}.{name}").register(subparsers)
    # Commands other installed packages add (the workers package adds ``demo``, which runs a
    # worker in-process): rookhaven never imports them by name, and loads one (Celery and
    # all) only when it is the command being run.
    # With no command (``rookhaven --help``) every plugin is loaded, for its own help line.
    for plugin in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: e.name):
        if plugin.name == command or command is None:
            plugin.load()(subparsers)
        else:
            subparsers.add_parser(plugin.name, help=f"(from {plugin.module.split('.')[0]})")
    return parser


def _command(argv: Sequence[str]) -> str | None:
    return next((arg for arg in argv if not arg.startswith("-")), None)


def _check_utf8(words: Sequence[str]) -> None:
    """Refuse an argument that is not UTF-8, naming its flag: undecodable bytes arrive as
    lone surrogates, which argparse passes on and orjson, Redis and hashlib refuse later
    with a traceback."""
    for number, word in enumerate(words, start=1):
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:
            pass
        else:
            continue
        flag = word.partition("=")[0] if word.startswith("--") and "=" in word else (
            words[number - 2] if number > 1 and words[number - 2].startswith("-") else "")
        if not (flag and flag.isprintable() and flag.isascii()):
            flag = f"argument {number}"
        raise InputError(f"{flag} is not valid UTF-8")


def _spellings(parser: argparse.ArgumentParser, words: Sequence[str]) -> dict[str, str]:
    """Each option's destination -> the flag the user typed for it (``--provider`` or
    ``--engine`` for ``engine``), so a setting's error names the flag, not its variable."""
    actions = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                actions += sub._actions
    typed = {word.partition("=")[0] for word in words if word.startswith("--")}
    return {action.dest: flag for action in actions for flag in action.option_strings
            if flag in typed}


def one_line(message: str) -> str:
    """``message`` with every unprintable character escaped: an error stays one line, and
    a file name or value that carries a newline or a terminal escape is shown, not obeyed."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        # Inside the handler: a plugin may read settings when it loads, and a bad one must
        # still be one line and exit 2, not a traceback.
        words = sys.argv[1:] if argv is None else list(argv)
        _check_utf8(words)
        parser = build_parser(_command(words))
        args = parser.parse_args(words)
        settings = Settings.from_mapping(os.environ).with_flags(vars(args),
                                                                _spellings(parser, words))
        configure_logging(settings.log_level)
        offer_settings(settings)
        status: int = args.run(args, settings)
    except InputError as exc:
        print(f"rookhaven: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except RookhavenError as exc:
        print(f"rookhaven: failed: {one_line(str(exc))}", file=sys.stderr)
        return 1
    except MemoryError:
        print("rookhaven: failed: out of memory; lower the limits (ROOKHAVEN_MAX_*) or give "
              "the process more memory", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rookhaven: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader stopped early (`| head`): nothing is wrong, and nothing more to say.
        # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
