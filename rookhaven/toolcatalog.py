"""A tool catalog as a corpus: what MCP servers and tool registries publish, one document a tool.

Read as published, with no converter: an MCP ``tools/list`` result (``{"tools": [...]}``,
also inside a JSON-RPC response), a bare array of tool definitions, or a registry of groups
holding tools (a list of groups, an object of groups, or ``{"groups": [...]}``). Each tool
becomes a document by one versioned rule, ``MAPPING``, recorded in every document's
metadata: a changed rule gives other bytes, so a new corpus version, never changed bytes
under an old one. The whole definition is kept in the metadata so a hit can return it.

The rule (mcp-tools@1): id = the tool's name (in a registry, ``group/name`` where another
group has a tool of the same name); ``title`` field = the name, the name split at
case changes and separators, ``title`` and ``annotations.title``; ``keywords`` field = its
group's name, display name, category, server name and use cases, and the input schema's
property names; text = the
description, then each property's description and enum values, depth first in the schema's
own order, at most ``MAX_DEPTH`` levels and ``MAX_SCHEMA_PARTS`` pieces.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from .core.corpus import Corpus, DocumentLimits, record_line
from .errors import CorpusError, shown

MAPPING = "mcp-tools@1"
MAX_DEPTH = 6
MAX_SCHEMA_PARTS = 400
_CASE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|[_\-./:]+")
_GROUP_TEXT = ("name", "display_name", "displayName", "title", "category", "server_name")


def load_tool_catalog(path: Path | str, *, max_docs: int, max_bytes: int,
                      limits: DocumentLimits | None = None) -> Corpus:
    """The tool catalog file at ``path`` as a corpus, every document checked."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise CorpusError(f"{path}: {size} bytes, over ROOKHAVEN_MAX_CORPUS_BYTES "
                              f"({max_bytes})")
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except orjson.JSONDecodeError as exc:
        raise CorpusError(f"{path}: not JSON ({exc})") from None
    return tool_corpus(data, str(path), max_docs=max_docs, limits=limits)


def tool_corpus(data: Any, source: str, *, max_docs: int,
                limits: DocumentLimits | None = None) -> Corpus:
    """A published tool catalog (parsed JSON) as a corpus."""
    records = tool_records(data, source)
    if len(records) > max_docs:
        raise CorpusError(f"{source}: {len(records)} tools, over ROOKHAVEN_MAX_CORPUS_DOCS "
                          f"({max_docs})")
    return Corpus.from_lines(record_line(r, where, limits) for r, where in records)


def tool_records(data: Any, source: str) -> list[tuple[dict[str, Any], str]]:
    """Each tool's document record and where it is; a CorpusError naming the tool (or the
    part of the file) and what is wrong, before anything is stored."""
    found = [(_record(tool, group, where), group, where)
             for tool, group, where in _tools(data, source)]
    if not found:
        raise CorpusError(f"{source}: no tool in it; expected an MCP tools/list result "
                          '({"tools": [...]}), an array of tools, or groups holding "tools"')
    # A name twice in one list is a mistake; the same name in two groups of a registry is
    # two servers' tools, each then named "group/name".
    seen: dict[tuple[str, str], str] = {}
    groups_of: dict[str, set[str]] = {}
    for record, group, where in found:
        label = _label(group)
        if (label, record["id"]) in seen:
            raise CorpusError(f"{where}: tool {shown(record['id'])} is listed twice (first at "
                              f"{seen[label, record['id']]}); a list names each tool once")
        seen[label, record["id"]] = where
        groups_of.setdefault(record["id"], set()).add(label)
    for record, group, _ in found:
        if len(groups_of[record["id"]]) > 1:
            record["id"] = f"{_label(group)}/{record['id']}"
    return [(record, where) for record, _, where in found]


def _label(group: Mapping[str, Any] | None) -> str:
    """The name a group's tools are qualified with when another group has the same name."""
    if group is None:
        return ""
    return str(group.get("server_name") or group.get("name") or "")


def _tools(data: Any, source: str) -> Iterator[tuple[Any, Mapping[str, Any] | None, str]]:
    """(tool, its group or None, where) for every tool of a catalog in any accepted shape."""
    if isinstance(data, Mapping) and "jsonrpc" in data:
        if "result" not in data:
            raise CorpusError(f"{source}: a JSON-RPC response without a result "
                              f"(error: {shown(str(data.get('error')))})")
        data = data["result"]
    if isinstance(data, Mapping) and isinstance(data.get("tools"), list):
        yield from ((t, None, f"{source}: tools[{i}]") for i, t in enumerate(data["tools"]))
        return
    groups: list[tuple[str, Any]] = []
    if isinstance(data, Mapping) and isinstance(data.get("groups"), list):
        groups = [(f"groups[{i}]", g) for i, g in enumerate(data["groups"])]
    elif isinstance(data, Mapping) and data and all(
            isinstance(g, Mapping) and "tools" in g for g in data.values()):
        groups = [(str(k), {"name": k, **g}) for k, g in data.items()]
    elif isinstance(data, list) and data and all(
            isinstance(g, Mapping) and "tools" in g for g in data):
        groups = [(f"[{i}]", g) for i, g in enumerate(data)]
    elif isinstance(data, list):
        yield from ((t, None, f"{source}: [{i}]") for i, t in enumerate(data))
        return
    else:
        raise CorpusError(f"{source}: not a tool catalog: expected an MCP tools/list result "
                          '({"tools": [...]}), an array of tools, or groups holding "tools"')
    for label, group in groups:
        tools = group.get("tools") if isinstance(group, Mapping) else None
        if isinstance(tools, Mapping):  # servers inside the group, each with its tools
            for key, server in tools.items():
                inner = server.get("tools") if isinstance(server, Mapping) else None
                if not isinstance(inner, list):
                    raise CorpusError(f"{source}: group {label} server {shown(str(key))} has "
                                      "no list of tools")
                merged = {**{k: v for k, v in group.items() if k != "tools"},
                          "server_name": server.get("server_name") or key}
                yield from ((t, merged, f"{source}: group {label} server {key} tools[{i}]")
                            for i, t in enumerate(inner))
            continue
        if not isinstance(tools, list):
            raise CorpusError(f"{source}: group {label} has no list of tools")
        yield from ((t, group, f"{source}: group {label} tools[{i}]")
                    for i, t in enumerate(tools))


def _record(tool: Any, group: Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    if not isinstance(tool, Mapping):
        raise CorpusError(f"{where}: a tool must be an object, got {type(tool).__name__}")
    name = tool.get("name")
    if not isinstance(name, str) or not name.strip():
        raise CorpusError(f"{where}: a tool needs a non-empty string name, got {shown(repr(name))}")
    label = f"{where} ({shown(name)})"
    description = tool.get("description")
    if description is None:  # optional in MCP, and published as null
        description = ""
    if not isinstance(description, str):
        raise CorpusError(f"{label}: description must be a string")
    schema = tool.get("inputSchema", tool.get("input_schema", {}))
    if schema is None:
        schema = {}
    if not isinstance(schema, Mapping):
        raise CorpusError(f"{label}: inputSchema must be an object (a JSON Schema)")
    titles = [name, " ".join(p for p in _CASE.split(name) if p)]
    annotations = tool.get("annotations")
    for title in (tool.get("title"), annotations.get("title") if isinstance(
            annotations, Mapping) else None):
        if isinstance(title, str) and title:
            titles.append(title)
    names: list[str] = []
    texts: list[str] = [description] if description else []
    _walk(schema, 0, names, texts)
    keywords = [str(group[k]) for k in _GROUP_TEXT if group is not None and group.get(k)]
    uses = group.get("use_cases", group.get("useCases")) if group is not None else None
    if isinstance(uses, list):
        keywords += [u for u in uses if isinstance(u, str)]
    keywords += names
    metadata: dict[str, Any] = {"mapping": MAPPING, "tool": dict(tool)}
    if group is not None:
        metadata["group"] = {k: group[k] for k in group if k != "tools"}
    fields = {"title": " ".join(dict.fromkeys(titles))}
    if keywords:
        fields["keywords"] = " ".join(keywords)
    return {"id": name, "text": "\n".join(texts), "fields": fields, "metadata": metadata}


def _walk(schema: Any, depth: int, names: list[str], texts: list[str]) -> None:
    """Property names, descriptions and enum values of a JSON Schema, depth first, bounded."""
    if depth >= MAX_DEPTH or not isinstance(schema, Mapping) or (
            len(names) + len(texts) >= MAX_SCHEMA_PARTS):
        return
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for key, sub in properties.items():
            if len(names) + len(texts) >= MAX_SCHEMA_PARTS:
                return
            names.append(" ".join(dict.fromkeys([str(key), *(p for p in _CASE.split(str(key))
                                                             if p)])))
            if isinstance(sub, Mapping):
                if isinstance(sub.get("description"), str) and sub["description"]:
                    texts.append(sub["description"])
                enum = sub.get("enum")
                if isinstance(enum, list):
                    texts.append(" ".join(str(v) for v in enum if isinstance(v, str | int)))
                _walk(sub, depth + 1, names, texts)
    for key in ("items", "additionalProperties"):
        _walk(schema.get(key), depth + 1, names, texts)
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list):
            for option in options:
                _walk(option, depth + 1, names, texts)
