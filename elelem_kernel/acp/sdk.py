"""The ACP SDK, imported at a fraction of its cost.

`acp.schema` defines some 280 pydantic models, with `use_attribute_docstrings`: pydantic
reads the source of every class to find its fields' docstrings (a third of the import)
and builds every model's validator up front (another quarter), though a session uses a
few dozen. While the SDK is imported here, docstrings are not looked up (they only fill
JSON-schema descriptions, which the agent never produces) and the models it defines are
built on first use (pydantic's `defer_build`). Both are switched back afterwards, so no
other model of the process is affected. If pydantic's internals differ from what this
expects, the SDK is imported as it is.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any


def import_lean(name: str) -> ModuleType:
    """Import module `name` (which imports the SDK) with the SDK's models built lazily."""
    with _lean_models():
        return importlib.import_module(name)


@contextlib.contextmanager
def _lean_models() -> Iterator[None]:
    try:
        from pydantic import BaseModel
        from pydantic._internal import _fields
    except ImportError:
        yield
        return
    extract = getattr(_fields, "extract_docstrings_from_cls", None)
    config: dict[str, Any] = BaseModel.model_config  # type: ignore[assignment]
    deferred = config.get("defer_build")
    if extract is not None:
        _fields.extract_docstrings_from_cls = _no_docstrings
    config["defer_build"] = True
    try:
        yield
    finally:
        if extract is not None:
            _fields.extract_docstrings_from_cls = extract
        if deferred is None:
            config.pop("defer_build", None)
        else:
            config["defer_build"] = deferred


def _no_docstrings(cls: type[Any], use_inspect: bool = False) -> dict[str, str]:
    return {}
