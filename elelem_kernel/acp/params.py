"""The client's params, read and checked: a wrong one is an error naming the field.

A wrong field is an "invalid params" error (-32602) whose message names it and says what
it should be. The agent reads only the fields it uses, each of the type ACP's schema gives it; unknown
fields (`_meta`, newer ones) are ignored, as the schema allows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from elelem_kernel.acp.jsonrpc import INVALID_PARAMS
from elelem_kernel.errors import RpcError

if TYPE_CHECKING:
    from elelem_kernel.acp.messages import Json


def invalid(message: str) -> RpcError:
    """A JSON-RPC "invalid params" error whose message says what is wrong."""
    return RpcError(INVALID_PARAMS, message)


class Params:
    """One message's params (or an object inside them), read field by field; `where`
    names them in errors (`invalid params: session/new`, then `...: mcpServers[0]`)."""

    def __init__(self, values: Json, where: str):
        if not isinstance(values, dict):
            raise invalid(f"{where} must be an object, not {kind(values)}")
        self.values: dict[str, Json] = values
        self.where = where

    def _bad(self, name: str, wanted: str) -> RpcError:
        got = kind(self.values.get(name)) if name in self.values else "missing"
        return invalid(f"{self.where}: {name} must be {wanted} ({got})")

    def text(self, name: str) -> str:
        value = self.values.get(name)
        if not isinstance(value, str):
            raise self._bad(name, "a string")
        return value

    def maybe_text(self, name: str) -> str | None:
        value = self.values.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._bad(name, "a string or null")
        return value

    def integer(self, name: str, low: int, high: int) -> int:
        value = self.values.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self._bad(name, f"an integer from {low} to {high}")
        return value

    def maybe_integer(self, name: str) -> int | None:
        value = self.values.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._bad(name, "an integer or null")
        return value

    def flag(self, name: str) -> bool:
        """A boolean field; absent (or null) is false."""
        value = self.values.get(name)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self._bad(name, "true or false")
        return value

    def objects(self, name: str, required: bool = True) -> list[Params]:
        """A list of objects, each as `Params`; absent or null is an empty list unless
        `required`."""
        value = self.values.get(name)
        if value is None and not required:
            return []
        if not isinstance(value, list):
            raise self._bad(name, "a list of objects")
        return [Params(item, f"{self.where}: {name}[{n}]") for n, item in enumerate(value)]

    def texts(self, name: str) -> list[str]:
        """A list of strings; absent or null is an empty list."""
        value = self.values.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._bad(name, "a list of strings")
        return [v for v in value if isinstance(v, str)]

    def pairs(self, name: str) -> dict[str, str]:
        """A list of `{name, value}` objects (environment variables, HTTP headers)."""
        return {p.text("name"): p.text("value") for p in self.objects(name, required=False)}

    def child(self, name: str) -> Params:
        """An object field; absent or null is an empty object."""
        value = self.values.get(name)
        return Params({} if value is None else value, f"{self.where}: {name}")


def kind(value: Json) -> str:
    """What a JSON value is, in an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"
