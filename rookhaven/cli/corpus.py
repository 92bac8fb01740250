"""``rookhaven corpus add (FILE | --tools FILE) [--name N]`` and ``rookhaven corpus list``: the
stored corpora. ``--tools`` reads a tool catalog as MCP servers and registries publish it
(``rookhaven.toolcatalog``)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..config import Settings
from ..errors import InputError
from ..store import Store
from ..store.corpora import check_name
from ..toolcatalog import load_tool_catalog


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
    add.set_defaults(run=run_add)
    listing = actions.add_parser("list", help="list stored corpora, names and versions")
    listing.set_defaults(run=run_list)


def run_add(args: argparse.Namespace, settings: Settings) -> int:
    if (args.file is None) == (args.tools is None):
        raise InputError("corpus add takes a corpus FILE or --tools FILE (one of them)")
    if args.name is not None:
        check_name(args.name)  # before reading what may be a large file
    corpus = (settings.load_corpus(args.file) if args.tools is None else load_tool_catalog(
        args.tools, max_docs=settings.max_corpus_docs, max_bytes=settings.max_corpus_bytes,
        limits=settings.document_limits))
    entry = Store.from_settings(settings).corpora.put(corpus, args.name)
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
