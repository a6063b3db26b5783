"""The provider contract (`events.Provider`): every provider subclasses it, the session asks
every provider plainly (no `getattr` for optional members), and a plugin's duck-typed
provider is wrapped so it still works."""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
from pathlib import Path

import pytest

import elelem_kernel
from elelem_kernel.agent.session import Session
from elelem_kernel.events import Foreign, Provider, as_provider

PACKAGE = Path(elelem_kernel.__file__).parent
#: The one module that may read a provider's members by name: the wrapper of foreign ones.
ADAPTER = PACKAGE / "events.py"


def _reflective_calls(path: Path) -> list[str]:
    """`getattr`/`hasattr` calls in `path` whose object is a provider (by its spelling)."""
    source = path.read_text()
    found = []
    for node in ast.walk(ast.parse(source, str(path))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and node.args
        ):
            target = ast.get_source_segment(source, node.args[0]) or ""
            if "provider" in target.lower():
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {target}")
    return found


def test_no_module_reads_a_providers_members_by_name():
    found = [c for p in sorted(PACKAGE.rglob("*.py")) if p != ADAPTER for c in _reflective_calls(p)]
    assert found == []


def test_the_scan_sees_a_getattr_on_a_provider(tmp_path):
    probe = PACKAGE / "_probe_for_the_scan.py"
    try:
        probe.write_text("def f(session):\n    return getattr(session.provider, 'model', None)\n")
        assert _reflective_calls(probe) == ["_probe_for_the_scan.py:2: session.provider"]
    finally:
        probe.unlink()


def _provider_classes() -> list[type]:
    """Every class of `providers/` that has a `fetch` (a model the session can talk to)."""
    found = []
    for path in sorted((PACKAGE / "providers").glob("*.py")):
        module = importlib.import_module(f"elelem_kernel.providers.{path.stem}")
        for value in vars(module).values():
            if inspect.isclass(value) and value.__module__ == module.__name__:
                if callable(getattr(value, "fetch", None)):
                    found.append(value)
    return found


def test_every_provider_of_the_package_subclasses_the_base():
    classes = _provider_classes()
    names = {c.__name__ for c in classes}
    assert {"StubProvider", "EchoProvider", "DemoProvider", "HTTPProvider", "LLMProvider"} <= names
    assert [c.__name__ for c in classes if not issubclass(c, Provider)] == []


class Bare:
    """A plugin's provider as the README writes one: a model and a `fetch`, nothing else."""

    model = "bare"

    def fetch(self, messages, tools, emit):
        emit({"type": "saying", "text": "hi"})
        emit({"type": "stop", "reason": "end_turn", "truncated": False})


class Rich:
    """A duck-typed provider with the optional members of its own."""

    model = "rich"
    known_options = ("a",)
    official = False
    notes = ["template drops tools"]

    def __init__(self):
        self.closed = 0
        self.options = {"max_tokens": "77"}

    async def fetch(self, messages, tools, emit):
        emit({"type": "stop", "reason": "end_turn", "truncated": False})

    async def context_window(self):
        return 4096

    def takes_images(self):
        return True

    def limited(self, max_tokens):
        return Bare()

    async def aclose(self):
        self.closed += 1


def test_a_subclass_is_its_own_provider_and_a_duck_typed_one_is_wrapped():
    class Own(Provider):
        def fetch(self, messages, tools, emit):
            return None

    own = Own()
    assert as_provider(own) is own
    wrapped = as_provider(Bare())
    assert isinstance(wrapped, Foreign) and isinstance(wrapped.inner, Bare)


def test_a_duck_typed_provider_without_members_gets_the_defaults():
    p = as_provider(Bare())
    assert (p.model, p.known_options, dict(p.options), list(p.notes)) == ("bare", None, {}, [])
    assert p.official is True and p.max_tokens() is None and p.limited(10) is p
    assert p.context_window() is None and p.takes_images() is None
    asyncio.run(p.aclose())


def test_a_duck_typed_providers_own_members_are_used():
    inner = Rich()
    p = as_provider(inner)
    assert (p.model, p.known_options, p.official, list(p.notes)) == (
        "rich",
        ("a",),
        False,
        ["template drops tools"],
    )
    assert p.max_tokens() == 77  # from its options, as the base reads them
    assert asyncio.run(p.context_window()) == 4096 and p.takes_images() is True
    assert isinstance(p.limited(5), Foreign) and isinstance(p.limited(5).inner, Bare)
    asyncio.run(p.aclose())
    assert inner.closed == 1


def test_a_session_takes_a_duck_typed_provider_and_asks_it_plainly(tmp_path, monkeypatch):
    monkeypatch.delenv("ELELEM_CONTEXT_WINDOW", raising=False)
    monkeypatch.delenv("ELELEM_OPTIONS", raising=False)
    inner = Rich()
    s = Session(inner, provider_name="rich", workspace=tmp_path)
    assert isinstance(s.provider, Foreign) and s.provider.inner is inner
    assert s.model == "rich"
    assert asyncio.run(s.facts.probe_window()) == 4096
    assert s.facts.window() == (4096, "reported by the rich server")
    assert s.facts.take_notes() == ["template drops tools"]
    assert asyncio.run(s.turn("hello")).stop == "end_turn"
    asyncio.run(s.facts.aclose())
    assert inner.closed == 1


def test_a_foreign_providers_other_attributes_are_its_own():
    inner = Bare()
    inner.prefix = "p"
    assert as_provider(inner).prefix == "p"
    with pytest.raises(AttributeError):
        _ = as_provider(inner).nothing_of_the_kind
