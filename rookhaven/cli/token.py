"""``rookhaven token``: the named, scoped tokens MCP HTTP clients send, in the file
ROOKHAVEN_MCP_TOKENS_FILE names (``--file`` overrides it). ``add`` prints the new secret
once (only its sha256 is kept); ``list`` shows names and scopes, never a secret; ``revoke``
removes one, and a running server refuses it from its next request."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import InputError
from ..server.tokens import SCOPES, Keyring, add, revoke, scopes_of
from .options import output_file


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("token", help="named, scoped tokens for MCP over HTTP",
                                   description=__doc__)
    parser.add_argument("--file", type=output_file, metavar="FILE",
                        help="the token file (default: ROOKHAVEN_MCP_TOKENS_FILE)")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    added = actions.add_parser("add", help="a new token; prints its secret once")
    added.add_argument("name", help="who holds it (recorded, never secret)")
    added.add_argument("--scopes", required=True, metavar="SCOPE,...",
                       help=f"some of {', '.join(SCOPES)}")
    actions.add_parser("list", help="names and scopes")
    gone = actions.add_parser("revoke", help="remove a token")
    gone.add_argument("name")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    path: Path | None = args.file or settings.mcp_tokens_file
    if path is None:
        raise InputError("no token file: set ROOKHAVEN_MCP_TOKENS_FILE or give --file FILE")
    if args.action == "add":
        if not args.name or len(args.name) > 64 or not args.name.isprintable():
            raise InputError("a token's name is 1 to 64 printable characters")
        secret = add(path, args.name, scopes_of(args.scopes.split(","), "--scopes"))
        print(secret)  # the only time it is shown
        return 0
    if args.action == "revoke":
        revoke(path, args.name)
        return 0
    for token in Keyring(None, path).listed():
        print(json.dumps(token))
    return 0
