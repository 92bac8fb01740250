"""What a worker accepts from the broker: the checks that make a malformed message a
recorded rejection instead of a dead worker.

Two layers, as kombu and Celery read a message: the transport's envelope (JSON holding the
body, its encoding, headers and delivery properties) and the Celery task message inside it
(the headers the worker's main process acts on, and a body the task's signature can take).
Each check raises MessageError with what is wrong; nothing here touches Redis or Celery.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from kombu.utils.json import loads

from rookhaven.errors import MessageError

# What the workers' tasks are sent as (celeryconf: task_serializer, accept_content).
CONTENT_TYPE = "application/json"
ENCODINGS = frozenset({"utf-8", "utf8"})
# Body encodings kombu's Redis channel can undo; None and utf-8 mean the body is the text.
BODY_ENCODINGS = frozenset({None, "base64", "utf-8"})


def _shown(value: Any) -> str:
    return repr(value)[:80]


def envelope(item: bytes | str) -> dict[str, Any]:
    """The transport envelope in ``item``, decoded as kombu decodes it, or MessageError."""
    try:
        text = item.decode() if isinstance(item, bytes) else item
        payload = loads(text)  # type: ignore[no-untyped-call]
    except (ValueError, TypeError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise MessageError(f"the envelope is not JSON text ({exc.__class__.__name__}: "
                           f"{str(exc)[:80]})") from None
    if not isinstance(payload, dict):
        raise MessageError(f"the envelope is a JSON {type(payload).__name__}, not an object")
    properties = payload.get("properties")
    if not isinstance(properties, dict):
        raise MessageError("the envelope has no properties object")
    if not isinstance(properties.get("delivery_tag"), str):
        raise MessageError("the envelope has no delivery tag")
    if properties.get("body_encoding") not in BODY_ENCODINGS:
        raise MessageError(f"unknown body encoding {_shown(properties.get('body_encoding'))}")
    if not isinstance(properties.get("delivery_info", {}), dict):
        raise MessageError("the envelope's delivery info is not an object")
    if not isinstance(payload.get("body", ""), str):
        raise MessageError("the envelope's body is not a string")
    if not isinstance(payload.get("headers", {}), dict):
        raise MessageError("the envelope's headers are not an object")
    return payload


def _limit(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool)
                             and math.isfinite(value) and value >= 0)


def check_headers(headers: Mapping[str, Any]) -> None:
    """MessageError if a header the worker's main process acts on cannot be used."""
    for name in ("task", "id"):
        if not isinstance(headers.get(name), str):
            raise MessageError(f"the {name!r} header is {_shown(headers.get(name))}, "
                               "not a string")
    limits = headers.get("timelimit")
    if limits is not None and not (isinstance(limits, list | tuple) and len(limits) == 2
                                   and all(_limit(v) for v in limits)):
        raise MessageError(f"the 'timelimit' header is {_shown(limits)}, not [soft, hard] "
                           "seconds")
    retries = headers.get("retries")
    if retries is not None and (not isinstance(retries, int) or isinstance(retries, bool)):
        raise MessageError(f"the 'retries' header is {_shown(retries)}, not an integer")


def check_body(content_type: str | None, content_encoding: str | None, body: bytes | str,
               run: Callable[..., Any]) -> None:
    """MessageError unless ``body`` is a JSON [args, kwargs, options] that ``run`` takes."""
    if content_type != CONTENT_TYPE:
        raise MessageError(f"content type {_shown(content_type)}; the workers take "
                           f"{CONTENT_TYPE} only")
    if (content_encoding or "").lower() not in ENCODINGS:
        raise MessageError(f"content encoding {_shown(content_encoding)}, not utf-8")
    try:
        decoded = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise MessageError(f"the body is not JSON ({str(exc)[:80]})") from None
    if not (isinstance(decoded, list) and len(decoded) == 3 and isinstance(decoded[0], list)
            and isinstance(decoded[1], dict)):
        raise MessageError("the body is not [args, kwargs, options]")
    try:
        _signature(run).bind(*decoded[0], **decoded[1])
    except TypeError as exc:
        raise MessageError(f"the task cannot take these arguments: {exc}") from None


@functools.cache
def _signature(run: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(run)
