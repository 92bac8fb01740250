"""Tool arguments as strict clients see them: clean prose, JSON Schema with the server's limits
and no extra properties, and argument errors that name the argument and nothing internal.

The SDK builds each tool's schema from its signature; ``StrictTool`` adds what the signature
cannot say (limits that come from Settings, ``additionalProperties: false``), refuses an
argument the schema does not list or of another JSON type (no string-to-integer coercion),
and rewrites pydantic's validation text (which carries
input echoes and documentation URLs) into one line per problem.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

import orjson
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import ToolAnnotations
from pydantic import ValidationError

from .outputs import tool_result

# A tool-result text for a refused argument list; the prefix is the SDK's own.
PREFIX = "Error executing tool {name}: "


def clean_prose(text: str) -> str:
    """A docstring as one line per paragraph: no indentation, single backticks only."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    joined = (" ".join(line.strip() for line in p.splitlines() if line.strip())
              for p in paragraphs)
    return "\n\n".join(p for p in joined if p).replace("``", "`")


def clean_descriptions(schema: Any) -> Any:
    """``schema`` with every ``description`` string made clean prose (recursively)."""
    if isinstance(schema, dict):
        return {k: clean_prose(v) if k == "description" and isinstance(v, str)
                else clean_descriptions(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [clean_descriptions(v) for v in schema]
    return schema


def _branch(prop: dict[str, Any], kind: str) -> dict[str, Any]:
    """The part of a property's schema that holds ``kind`` values (inside anyOf if optional)."""
    for option in prop.get("anyOf", []):
        if option.get("type") == kind:
            return option  # type: ignore[no-any-return]
    return prop


def limited(schema: dict[str, Any], limits: Mapping[str, tuple[str, str, int]]) -> dict[str, Any]:
    """``schema`` closed to other properties, with ``limits`` (property -> (type, keyword,
    value)) written where a strict validator reads them."""
    out = clean_descriptions(schema)
    out["additionalProperties"] = False
    for name, (kind, keyword, value) in limits.items():
        if name in out.get("properties", {}):
            _branch(out["properties"][name], kind)[keyword] = value
    return out  # type: ignore[no-any-return]


def readable(exc: ValidationError) -> str:
    """One ``argument: problem`` per error, without pydantic's input echo or URL."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        message = re.sub(r"https?://\S+", "", error["msg"]).strip()
        problems.append(f"{where}: {message}")
    return "; ".join(dict.fromkeys(problems))


def _integer_typed(schema: dict[str, Any]) -> bool:
    """Whether a property's schema allows an integer (directly or in one of its branches)."""
    kinds = schema.get("type")
    if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
        return True
    return any(_integer_typed(branch) for branch in schema.get("anyOf", ()))


def _whole_numbers(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` with an integral float (5.0) given for an integer property as the integer:
    JSON Schema counts 5.0 as an integer, so a client whose validator passed it must not be
    refused by pydantic's strict mode. Strings ("5") stay refused."""
    properties = schema.get("properties", {})
    changed = {name: int(value) for name, value in arguments.items()
               if isinstance(value, float) and value.is_integer()
               and _integer_typed(properties.get(name, {}))}
    return {**arguments, **changed} if changed else arguments


class StrictTool(Tool):
    """A tool that refuses arguments its schema does not list and explains bad ones plainly;
    its model results go out through ``outputs.tool_result`` (ADR 0043)."""

    @classmethod
    def strict(cls, fn: Callable[..., Any],
               limits: Mapping[str, tuple[str, str, int]] | None = None,
               annotations: ToolAnnotations | None = None) -> StrictTool:
        """The tool for ``fn``: its docstring as clean prose, its schema closed and limited."""
        tool = cls.from_function(fn, description=clean_prose(fn.__doc__ or ""),
                                 annotations=annotations)
        tool.parameters = limited(tool.parameters, limits or {})
        output = tool.fn_metadata.output_schema
        if output is not None:
            tool.fn_metadata.output_schema = clean_descriptions(output)
        assert isinstance(tool, StrictTool)
        return tool

    async def run(self, arguments: dict[str, Any], context: Any,
                  convert_result: bool = False) -> Any:
        known = list(self.parameters.get("properties", {}))
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            names = ", ".join(repr(u) for u in unknown)
            raise ToolError(PREFIX.format(name=self.name) + (
                f"unknown argument{'s' * (len(unknown) > 1)} {names}; {self.name} takes "
                + (", ".join(known) or "no arguments")))
        arguments = _whole_numbers(self.parameters, arguments)
        try:
            # The SDK parses a string holding JSON for a non-string argument and validates
            # in pydantic's lax mode ("5" passes as 5): the schema's types are checked first,
            # as JSON, strictly. Text JSON cannot carry (a lone surrogate) is left to the
            # tool's own check, which names the argument.
            self.fn_metadata.arg_model.model_validate_json(orjson.dumps(arguments), strict=True)
        except ValidationError as exc:
            raise ToolError(PREFIX.format(name=self.name) + readable(exc)) from exc
        except orjson.JSONEncodeError:
            pass
        try:
            result = await super().run(arguments, context, convert_result=False)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            raise ToolError(PREFIX.format(name=self.name) + readable(cause)) from cause
        if not convert_result:
            return result
        try:
            return self._converted(result)
        except Exception as exc:  # as in the SDK's run: a crash's own text stays on the server
            raise UnexpectedToolError(f"Error executing tool {self.name}") from exc

    def _converted(self, result: Any) -> Any:
        metadata = self.fn_metadata
        if metadata.output_schema is not None and isinstance(result, metadata.output_model):
            with suppress(orjson.JSONEncodeError):  # a lone surrogate: the SDK's way below
                return tool_result(result)
        return metadata.convert_result(result)
