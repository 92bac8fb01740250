"""A tool catalog as published becomes a corpus by one versioned rule, or one clear error."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from rookhaven.core.corpus import Corpus
from rookhaven.errors import CorpusError
from rookhaven.toolcatalog import MAPPING, tool_corpus, tool_records

pytestmark = pytest.mark.no_kernels

PUSH = {"name": "sendPushNotification", "title": "Push",
        "description": "Send a push notification to a device.",
        "annotations": {"title": "Notify a phone"},
        "inputSchema": {"type": "object", "properties": {
            "device_id": {"type": "string", "description": "The target device."},
            "priority": {"type": "string", "enum": ["low", "high"]},
            "payload": {"type": "object", "properties": {
                "badgeCount": {"type": "integer", "description": "Badge to show."}}}}}}
MAIL = {"name": "send_email", "description": "Send an email.",
        "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}}}}


def records(data: Any) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r, _ in tool_records(data, "catalog.json")}


@pytest.mark.parametrize("data", [
    {"tools": [PUSH, MAIL], "nextCursor": None},
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [PUSH, MAIL]}},
    [PUSH, MAIL],
    [{"name": "notify", "display_name": "Notifications", "tools": [PUSH, MAIL]}],
    {"notify": {"tools": [PUSH]}, "mail": {"tools": [MAIL]}},
    {"groups": [{"name": "notify", "tools": [PUSH, MAIL]}]},
])
def test_every_published_shape_gives_one_document_a_tool(data: Any) -> None:
    assert sorted(records(data)) == ["sendPushNotification", "send_email"]


def test_the_rule_reads_names_titles_descriptions_and_the_schema() -> None:
    group = {"name": "notify", "display_name": "Notifications", "use_cases": ["alert users"],
             "tools": [PUSH]}
    push = records([group])["sendPushNotification"]
    assert push["fields"]["title"] == ("sendPushNotification send Push Notification Push "
                                       "Notify a phone")
    assert push["fields"]["keywords"] == ("notify Notifications alert users device_id device "
                                          "id priority payload badgeCount badge Count")
    assert push["text"] == ("Send a push notification to a device.\nThe target device.\n"
                            "low high\nBadge to show.")
    assert push["metadata"]["mapping"] == MAPPING
    assert push["metadata"]["tool"] == PUSH  # the whole definition, to load the tool
    assert push["metadata"]["group"] == {"name": "notify", "display_name": "Notifications",
                                         "use_cases": ["alert users"]}


def test_the_same_catalog_is_the_same_corpus_digest() -> None:
    first = tool_corpus({"tools": [PUSH, MAIL]}, "a", max_docs=10)
    again = tool_corpus(orjson.loads(orjson.dumps({"tools": [PUSH, MAIL]})), "b", max_docs=10)
    assert isinstance(first, Corpus) and first.digest == again.digest


@pytest.mark.parametrize(("data", "words"), [
    ({"tools": [{"description": "x"}]}, r"tools\[0\]: a tool needs a non-empty string name"),
    ({"tools": [PUSH, {**MAIL, "name": "sendPushNotification"}]},
     r"tool 'sendPushNotification' is listed twice"),
    ({"tools": [{"name": "t", "description": 3}]}, r"tools\[0\] \('t'\): description must"),
    ({"tools": [{"name": "t", "inputSchema": []}]}, r"inputSchema must be an object"),
    ({"tools": ["t"]}, r"a tool must be an object, got str"),
    ({"tools": []}, r"no tool in it"),
    ({"documents": []}, r"not a tool catalog"),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}}, r"without a result"),
    ([{"name": "g", "tools": 3}], r"group \[0\] has no list of tools"),
])
def test_a_malformed_catalog_is_one_line_naming_the_tool_and_what_is_wrong(
        data: Any, words: str) -> None:
    with pytest.raises(CorpusError, match=words) as caught:
        tool_corpus(data, "catalog.json", max_docs=10)
    assert "\n" not in str(caught.value) and str(caught.value).startswith("catalog.json")


def test_more_tools_than_the_limit_are_refused() -> None:
    with pytest.raises(CorpusError, match="over ROOKHAVEN_MAX_CORPUS_DOCS"):
        tool_corpus([PUSH, MAIL], "catalog.json", max_docs=1)


def test_a_registry_of_servers_qualifies_only_the_names_two_servers_share() -> None:
    registry = [
        {"name": "Finance", "category": "Finance", "tools": {
            "yahoo": {"server_name": "yahoo", "tools": [
                {"name": "search", "description": None}, {"name": "get_price"}]}}},
        {"name": "Bio", "tools": {"biomcp": {"tools": [{"name": "search"}]}}},
    ]
    got = records(registry)
    assert sorted(got) == ["biomcp/search", "get_price", "yahoo/search"]
    assert got["get_price"]["fields"]["keywords"] == "Finance Finance yahoo"
    assert got["yahoo/search"]["text"] == ""  # a null description is no description


def test_a_request_naming_a_shared_bare_name_is_served_by_every_server_that_has_it(
        tmp_path: Any) -> None:
    from rookhaven.evaluation.requests import requests_collection
    corpus = tool_corpus([{"name": "A", "tools": [{"name": "search"}, {"name": "x"}]},
                          {"name": "B", "tools": [{"name": "search"}]}], "r", max_docs=9)
    path = tmp_path / "requests.jsonl"
    path.write_text('{"query": "find it", "expected": ["search", "x", "nope"]}\n')
    judged = requests_collection(path, corpus)
    assert judged.qrels["r1"] == {"A/search": 1, "B/search": 1, "x": 1, "nope": 1}
    assert judged.unknown_documents == 1
