"""The MCP server's default corpus: which setting wins, and the line it logs at start."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from rookhaven.config import Settings
from rookhaven.server.defaults import announce, default_corpus


@pytest.mark.parametrize(("settings", "source", "says"), [
    (Settings(corpus_path=Path("/data/port.jsonl"), redis_url="redis://r/0"), "file",
     "wins over the store's latest corpus"),
    (Settings(corpus_path=Path("/data/port.jsonl")), "file", "ranked in this server"),
    (Settings(redis_url="redis://r/0"), "store", "latest, the corpus most recently added"),
    (Settings(), "none", "neither ROOKHAVEN_CORPUS_PATH nor ROOKHAVEN_REDIS_URL"),
])
def test_an_explicit_corpus_path_wins_and_each_choice_says_why(
        settings: Settings, source: str, says: str) -> None:
    chosen = default_corpus(settings)
    assert chosen.source == source and says in chosen.why


def test_the_choice_is_logged_at_info_when_the_server_starts(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    # On the logger itself: an earlier configure_logging stops propagation to caplog's root.
    server_log = logging.getLogger("rookhaven.server")
    monkeypatch.setattr(server_log, "handlers", [caplog.handler])
    monkeypatch.setattr(server_log, "propagate", False)
    with caplog.at_level(logging.INFO, logger="rookhaven.server"):
        announce(Settings(corpus_path=Path("/data/port.jsonl"), redis_url="redis://r/0"))
    (record,) = caplog.records
    assert record.levelno == logging.INFO
    assert record.getMessage().startswith("default corpus: the ROOKHAVEN_CORPUS_PATH file "
                                          "/data/port.jsonl")
    assert record.default_corpus == "file"  # type: ignore[attr-defined]
