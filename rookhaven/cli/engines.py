"""``rookhaven engines``: every installed engine version, what it pins, which is the default,
and whether this install can run it (a hybrid engine needs its static embedding model).

Every released version stays installed and replayable; the default is ROOKHAVEN_ENGINE.
"""

from __future__ import annotations

import argparse
from typing import Any

import orjson

from ..config import Settings
from ..core.engines import DEFAULT_VERSIONS, ENGINES, EngineSpec, engine_spec
from ..core.semantic.shelf import SHELF
from ..errors import ModelUnavailableError
from .options import write_line
from .tables import table


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("engines", help="list the installed engine versions",
                                   description=__doc__)
    parser.add_argument("--json", action="store_true", help="one JSON object per engine")
    parser.set_defaults(run=run)


def why_not(spec: EngineSpec) -> str | None:
    """Why this install cannot run ``spec`` with its defaults, or None if it can."""
    try:
        spec.build()
    except ModelUnavailableError as exc:
        return str(exc)
    return None


def rows(settings: Settings) -> list[dict[str, Any]]:
    """One plain record per installed engine."""
    default = engine_spec(settings.engine).ref
    return [{"engine": spec.ref, "label": f"{spec.label.name} {spec.label.version}",
             "default": spec.ref == default,
             # What the bare provider name means (its newest version that is not a preview).
             "provider_default": DEFAULT_VERSIONS[spec.name] == spec.version,
             "status": "preview" if spec.preview else "frozen",
             "unicode": spec.unicode, "stemmer": spec.stemmer_algorithm,
             "pins_in_audit": spec.records_pins, "golden": spec.golden,
             "summary": spec.summary, "cannot_run": why_not(spec),
             "models": SHELF.available() if spec.name == "hybrid" else {}}
            for spec in ENGINES]


def run(args: argparse.Namespace, settings: Settings) -> int:
    found = rows(settings)
    if args.json:
        for row in found:
            write_line(orjson.dumps(row, option=orjson.OPT_SORT_KEYS))
        return 0
    print(table(["engine", "status", "runs here", "unicode", "stemmer", "golden", "summary"], [
        [r["engine"] + (" (default)" if r["default"] else ""), r["status"],
         "yes" if r["cannot_run"] is None else "no", r["unicode"], r["stemmer"],
         r["golden"][:19] + "…", r["summary"]] for r in found]))
    for r in found:
        if r["cannot_run"] is not None:
            print(f"{r['engine']} cannot run here: {r['cannot_run']}")
    models = {name: digest for r in found for name, digest in r["models"].items()}
    for name, digest in models.items():
        print(f"static embedding model {name}: {digest}")
    return 0
