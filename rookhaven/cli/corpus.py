"""``rookhaven corpus add (FILE | --tools FILE | --from-mcp COMMAND.../URL) [--name N]`` and
``rookhaven corpus list``: the stored corpora. ``--tools`` reads a tool catalog as MCP servers
and registries publish it (``rookhaven.toolcatalog``); ``--from-mcp`` asks a live server for
its tool list (``rookhaven.toolsource``)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..config import Settings
from ..errors import InputError
from ..store import Store
from ..store.corpora import check_name
from ..toolcatalog import load_tool_catalog, tool_corpus


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("corpus", help="store corpora in Redis and list them",
                                   description=__doc__)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    add = actions.add_parser("add", help="store a corpus file; prints its digest")
    add.add_argument("file", nargs="?", help="corpus file (JSON array or JSON Lines)")
    add.add_argument("--tools", metavar="FILE",
                     help="a tool catalog instead: an MCP tools/list result, an array of "
                          "tool definitions, or groups holding tools (one document a tool)")
    add.add_argument("--name", help="register it under this name (a new version of it)")
    add.add_argument("--timeout", type=float, default=30.0,
                     help="with --from-mcp: seconds the server has to list its tools "
                          "(default: 30)")
    add.add_argument("--from-mcp", nargs=argparse.REMAINDER, metavar="COMMAND",
                     help="a live MCP server's tools: the command that starts it over stdio "
                          "(everything after --from-mcp), or its streamable HTTP URL; put "
                          "--name before it")
    add.set_defaults(run=run_add)
    listing = actions.add_parser("list", help="list stored corpora, names and versions")
    listing.set_defaults(run=run_list)


def run_add(args: argparse.Namespace, settings: Settings) -> int:
    if sum(x is not None for x in (args.file, args.tools, args.from_mcp)) != 1:
        raise InputError("corpus add takes a corpus FILE, --tools FILE or --from-mcp "
                         "COMMAND... (one of them)")
    if args.from_mcp is not None and not args.from_mcp:
        raise InputError("--from-mcp needs the command that starts the server, or its URL")
    if args.name is not None:
        check_name(args.name)  # before reading what may be a large file
    if args.from_mcp is not None:
        from ..toolsource import tool_list  # the MCP client only for this: not every start
        corpus = tool_corpus(tool_list(args.from_mcp, args.timeout), " ".join(args.from_mcp),
                             max_docs=settings.max_corpus_docs, limits=settings.document_limits)
    elif args.tools is not None:
        corpus = load_tool_catalog(args.tools, max_docs=settings.max_corpus_docs,
                                   max_bytes=settings.max_corpus_bytes,
                                   limits=settings.document_limits)
    else:
        corpus = settings.load_corpus(args.file)
    corpora = Store.from_settings(settings).corpora
    known = {e.digest: e for e in corpora.entries(args.name)} if args.name else {}
    entry = corpora.put(corpus, args.name)
    if entry.digest in known:
        print(f"rookhaven: unchanged: {args.name}@{known[entry.digest].version} already holds "
              "these documents (the same digest); nothing new stored", file=sys.stderr)
    print(entry.digest)
    return 0


def run_list(args: argparse.Namespace, settings: Settings) -> int:
    entries = Store.from_settings(settings).corpora.entries()
    # One line per version, tab-separated so it can be cut; the newest version of a name last.
    for e in entries:
        label = f"{e.name}@{e.version}" if e.name else "-"
        added = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(e.added))
        print(f"{label}\t{e.digest}\t{e.documents} documents\t{added}")
    return 0
