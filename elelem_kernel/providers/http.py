"""Shared HTTP behaviour of the model providers (anthropic, openai, responses, ollama).

`HTTPProvider` holds what every HTTP provider needs, once: its options (model, base URL,
key, timeouts, retries), an `httpx.AsyncClient` created lazily per event loop, retries
with bounded backoff that stop as soon as any output was emitted, SSE and NDJSON streams
read with a bound on every line, event and body (`max_event_bytes`, `providers.stream`),
and the translation of every failure into a `ProviderError` a person can act on. API
keys are read at fetch time and never appear in messages or reprs. httpx is imported
only when a request is made, so importing a provider module stays cheap.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import aclosing, asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, cast

from elelem_kernel import redaction
from elelem_kernel.errors import (
    ConfigError,
    ContextOverflow,
    ProviderError,
    StatusError,
    TooLarge,
    Undecodable,
)
from elelem_kernel.events import TRUNCATED, Emit, Message, Provider, ProviderEvent, Reported
from elelem_kernel.options import unknown
from elelem_kernel.providers import stream, window_ahead, wire_json
from elelem_kernel.providers.coalesce import Coalescing
from elelem_kernel.providers.stream import DEFAULT_LIMIT
from elelem_kernel.providers.wire_json import Tools
from elelem_kernel.text import clip

if TYPE_CHECKING:  # annotations only: httpx is imported when a request is made
    import ssl

    import httpx

#: Options every HTTP provider accepts, with their defaults.
COMMON_OPTIONS: dict[str, float | None] = {
    "base_url": None,
    "api_key": None,
    "timeout": 10.0,
    "read_timeout": 120.0,
    "retries": 3,
    "backoff": 1.0,
    "max_event_bytes": DEFAULT_LIMIT,
}
MAX_BACKOFF = 30.0
#: Seconds a model-info request (`get_json`) may take in all.
INFO_TIMEOUT = 10.0
MAX_RETRY_AFTER = 60.0
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
#: The response header in which a LiteLLM proxy says what the request cost, in dollars.
COST_HEADER = "x-litellm-response-cost"
#: What `post` hands a response's headers to (a parser reading a gateway's cost).
Headers = Callable[[Mapping[str, str]], None]


class HTTPProvider(Provider):
    """Base of the HTTP providers: options, client, retries, streams and error messages.

    Subclasses set the class attributes, `headers()`, `body()` and `parser()`: `fetch`
    posts the body to `path` and feeds each SSE event (`framing = "sse"`) or NDJSON line
    (`"ndjson"`) to the parser, retrying as long as nothing was emitted.
    """

    name = ""
    default_model = ""
    key_env: str | None = None
    base_env = ""
    default_base = ""
    #: The vendor's own endpoint, where model names mean what they say (prices, windows).
    official_base: str | None = None
    key_required = True
    extra_options: Mapping[str, Any] = {}
    not_found_hint = "check the model name and the base URL"  # may use {model}
    unreachable_hint = "check {base_env} and your network"
    path = ""
    framing = "sse"

    def __init__(self, model: str | None = None, **options: Any):
        known = {**COMMON_OPTIONS, **self.extra_options}
        unknown(self.name, options, known)
        values = {**known, **{k: v for k, v in options.items() if v is not None}}
        self.model: str = model or os.environ.get("ELELEM_MODEL") or self.default_model
        base = values["base_url"] or os.environ.get(self.base_env) or self.default_base
        self.base_url: str = self.normalize_base(base)
        self._api_key: str | None = values["api_key"] or None
        self.timeout = _number(values["timeout"], "timeout")
        self.read_timeout = _number(values["read_timeout"], "read_timeout")
        self.retries = int(_number(values["retries"], "retries"))
        self.backoff = _number(values["backoff"], "backoff")
        self.max_event_bytes = int(_number(values["max_event_bytes"], "max_event_bytes"))
        if self.max_event_bytes < 1:
            raise ConfigError(
                f"option max_event_bytes must be at least 1, not {self.max_event_bytes}"
            )
        self.options: dict[str, Any] = {k: values[k] for k in self.extra_options}
        #: Seconds slept before each retry of the last fetch (for logs and tests).
        self.waits: list[float] = []
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )
        self._key: str | None = None
        #: What the server said of itself that the person should know (a chat template
        #: that drops tools), found when it was asked for its window; the session says
        #: each once.
        self.notes: list[str] = []
        #: Whether the server answered a model-info request (any status) since this was
        #: last set False: `window_ahead` keeps only a reachable server's answer.
        self.answered = False
        #: The option names this provider accepts (for `/option` and error messages).
        self.known_options: list[str] = sorted(known)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    def normalize_base(self, base: str) -> str:
        """The base URL without a trailing slash; providers may be more lenient."""
        return base.rstrip("/")

    @property
    def official(self) -> bool:
        """Whether the provider talks to its vendor's own endpoint (not a local server
        that borrowed the wire format): only there a model name has a known window and
        price."""
        return bool(self.official_base) and self.base_url == self.normalize_base(
            self.official_base or ""
        )

    async def context_window(self) -> int | None:
        """The context window the server gives the model: the answer a front asked ahead
        (`window_ahead`), else the server's (`ask_window`); None at the official endpoint
        (its models are known) or when the server does not say."""
        if self.official:
            return None
        ahead = window_ahead.recall(self)
        return ahead.window if ahead is not None else await self.ask_window()

    async def ask_window(self) -> int | None:
        """The window the server says it gives the model, asked from its model-info
        endpoints (`server_window.ask`); None when it does not say."""
        # server_window (its regexes) only for a model whose window is not known
        from elelem_kernel.providers import server_window

        return await server_window.ask(self)

    def limited(self, max_tokens: int) -> HTTPProvider:
        """A copy of this provider whose replies stop at `max_tokens` (a compaction's
        summary gets its own limit, not the person's); it shares the connections."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.options = {**self.options, "max_tokens": max_tokens}
        return copy

    async def get_json(
        self, url: str, body: Mapping[str, object] | None = None, limit: int | None = None
    ) -> object:
        """The JSON answer of `GET url` (`POST body` when given), or None on any failure,
        a body over `limit` bytes (default `max_event_bytes`) among them: a model-info
        request is a hint, never a reason for a turn to fail."""
        import httpx

        async def fetch() -> object:
            method = "POST" if body is not None else "GET"
            headers = {"accept-encoding": "identity", **self.headers(self.api_key())}
            request = self.client().stream(method, url, json=body, headers=headers)
            async with request as response:
                self.answered = True
                if response.status_code != 200:
                    return None
                value: object = json.loads(await self._body_text(response, limit))
                return value

        try:
            return await asyncio.wait_for(fetch(), INFO_TIMEOUT)
        except (
            httpx.HTTPError,
            ValueError,
            RecursionError,
            ConfigError,
            ProviderError,
            TimeoutError,
        ):
            return None

    def headers(self, key: str | None) -> dict[str, str]:
        """Request headers carrying the key: a bearer token unless a provider says otherwise."""
        return {"authorization": f"Bearer {key}"} if key else {}

    def body(self, messages: list[Message], tools: Tools) -> Mapping[str, object]:
        """The request body for one round; override per provider."""
        raise NotImplementedError

    def parser(self, emit: Emit) -> StreamParser:
        """A new wire parser with `feed(name, data)` and `finish()`; override per provider."""
        raise NotImplementedError

    async def fetch(self, messages: list[Message], tools: Tools, emit: Emit) -> None:
        """One round trip: stream the reply of `messages` as provider events."""
        key = self.api_key()
        body = self.body(messages, tools)

        async def attempt(out: Emit) -> None:
            # Text pieces that arrive without a wait are handed on as one event
            # (`providers/coalesce.py`); what is held is handed on before an error leaves.
            joined = Coalescing(out)
            parser = self.parser(joined)
            parse, feed = self.parse, parser.feed
            try:
                if self.framing == "ndjson":
                    async with self.ndjson(self.path, body, key, parser.headers) as lines:
                        async for line in lines:
                            if line.strip():
                                feed("", parse(line))
                else:
                    async with self.sse(self.path, body, key, parser.headers) as events:
                        async for name, text in events:  # parsed here: a generator more per event
                            feed(name, "[DONE]" if text.strip() == "[DONE]" else parse(text))
                parser.finish()
            finally:
                joined.flush()

        await self.retrying(attempt, emit)

    # -- keys ------------------------------------------------------------------------

    def api_key(self) -> str | None:
        """The key to use now: the `api_key` option, else the environment; checked here."""
        key = self._api_key or (os.environ.get(self.key_env) if self.key_env else None) or None
        if key is None and self.key_required:
            raise ConfigError(
                f"{self.name} needs an API key: set {self.key_env} (or pass the api_key option)"
            )
        self._key = key
        return key

    def _key_source(self) -> str:
        return "the api_key option" if self._api_key else f"{self.key_env}"

    def redact(self, text: str) -> str:
        """`text` with the current key replaced by `***` (and URL passwords hidden)."""
        keys = [key for key in (self._key, self._api_key) if key and len(key) >= 4]
        return str(redaction.redact(text, redaction.forms_of(keys, "***")))

    def error(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> StatusError:
        """A `ProviderError` with the key redacted from its message."""
        return StatusError(
            self.redact(message), retryable=retryable, status=status, retry_after=retry_after
        )

    # -- client per event loop ---------------------------------------------------------

    def client(self) -> httpx.AsyncClient:
        """The `httpx.AsyncClient` of the running loop, created on first use.

        A client's connections belong to the loop that opened them, and turns may run on
        different loops, so each loop gets its own client. Call `aclose()` on a loop
        before closing it; a closed loop's client is only dropped.
        """
        loop = asyncio.get_running_loop()
        for old in [old for old in self._clients if old.is_closed()]:
            del self._clients[old]
        if loop not in self._clients:
            import httpx

            timeout = httpx.Timeout(self.timeout, read=self.read_timeout)
            # Loading the CA bundle costs ~20 ms: plain-http servers (local models) skip it.
            https = self.base_url.startswith("https:")
            self._clients[loop] = httpx.AsyncClient(
                timeout=timeout, verify=_ssl_context() if https else _plain_context()
            )
        return self._clients[loop]

    async def aclose(self) -> None:
        """Close the running loop's client, if there is one; safe to call twice."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    # -- retries -------------------------------------------------------------------------

    async def retrying(self, attempt: Callable[[Emit], Awaitable[None]], emit: Emit) -> None:
        """Run `attempt(emit)`, again after retryable errors while nothing was emitted."""
        self.waits = []
        emitted = False

        def guarded(event: ProviderEvent) -> None:
            nonlocal emitted
            emitted = True
            emit(event)

        for n in range(self.retries + 1):
            try:
                await attempt(guarded)
                return
            except ProviderError as e:
                if emitted or not e.retryable:
                    raise
                wait = getattr(e, "retry_after", None)
                delay = self.retry_delay(n, wait)
                if delay is None:
                    message = f"{e}; the server asks to wait {wait:.0f} s, try again later"
                    raise self.error(message, status=e.status) from e
                if n == self.retries:
                    tries = f"{n + 1} attempt{'s' if n else ''}"
                    raise self.error(f"{e} (gave up after {tries})", status=e.status) from e
                self.waits.append(delay)
                await asyncio.sleep(delay)

    def retry_delay(self, n: int, retry_after: float | None) -> float | None:
        """Seconds to wait before retry `n` (0-based): the server's hint, else backoff.

        None when the server asks for a longer wait than `MAX_RETRY_AFTER`.
        """
        if retry_after is not None:
            return max(0.0, retry_after) if retry_after <= MAX_RETRY_AFTER else None
        return float(min(MAX_BACKOFF, self.backoff * 2**n) * random.uniform(0.5, 1.0))

    # -- requests and streams ------------------------------------------------------------

    @asynccontextmanager
    async def post(
        self, path: str, body: Mapping[str, object], key: str | None, seen: Headers | None = None
    ) -> AsyncIterator[httpx.Response]:
        """POST `body` as JSON and yield the streaming response once its status is 2xx
        (its headers handed to `seen` first, when given).

        Every transport failure, inside the request or while the caller reads the
        stream, comes out as a `ProviderError`.
        """
        import httpx

        url = self.base_url + path
        unreachable = f"cannot reach {self.name} at {self.base_url}"
        hint = self.unreachable_hint.format(base_env=self.base_env)
        try:
            # identity: the body is read in bounded steps (`stream.decoded`), not inflated by
            # httpx one network read at a time.
            headers = {"accept-encoding": "identity", **self.headers(key)}
            async with self.client().stream("POST", url, json=body, headers=headers) as response:
                if response.status_code >= 300:
                    text = await self._body_text(response)
                    raise self.status_error(response.status_code, text, response.headers)
                if seen is not None:
                    seen(response.headers)
                yield response
        except httpx.ConnectError as e:
            raise self.error(f"{unreachable}: {hint} ({e})") from None
        except httpx.ConnectTimeout:
            raise self.error(f"{unreachable} within {self.timeout:g} s: {hint}") from None
        except httpx.ReadTimeout:
            raise self.error(
                f"{self.name} sent nothing for {self.read_timeout:g} s (read "
                "timeout); try again, or raise the read_timeout option"
            ) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as e:
            raise self.error(
                f"the connection to {self.name} broke mid-response ({type(e).__name__}: {e})",
                retryable=True,
            ) from None
        except httpx.HTTPError as e:
            raise self.error(f"request to {self.name} failed ({type(e).__name__}: {e})") from None

    @asynccontextmanager
    async def sse(
        self, path: str, body: Mapping[str, object], key: str | None, seen: Headers | None = None
    ) -> AsyncIterator[AsyncIterator[tuple[str, str]]]:
        """POST and yield the server-sent events as `(event name, data)` pairs, for the
        caller to `parse` (`fetch`: `data: [DONE]` is not JSON).

        Events without data are skipped; a line or event over `max_event_bytes`, in the
        `async with` block, is a `ProviderError` that is not retried.
        """
        async with self.post(path, body, key, seen) as response:
            await self._reject_json(response)
            kind = response.headers.get("content-type", "").partition(";")[0]
            if "text/event-stream" not in kind:
                raise self.error(
                    f"{self.name} did not answer with an event stream (Expected response "
                    f"header Content-Type to contain 'text/event-stream', got {kind!r})"
                )
            with self._bounded():  # what the block's reading raises comes in here
                yield stream.events(self._body(response), self.max_event_bytes)

    @asynccontextmanager
    async def ndjson(
        self, path: str, body: Mapping[str, object], key: str | None, seen: Headers | None = None
    ) -> AsyncIterator[AsyncIterator[str]]:
        """POST and yield the lines of a newline-delimited JSON stream, for the caller to
        `parse` (blank ones too).

        A line over `max_event_bytes`, in the `async with` block, is a `ProviderError`
        that is not retried.
        """
        async with self.post(path, body, key, seen) as response:
            with self._bounded():  # what the block's reading raises comes in here
                yield stream.lines(self._body(response), self.max_event_bytes, sse=False)

    @contextmanager
    def _bounded(self) -> Iterator[None]:
        """Turn a line or event over the limit, or an unreadable encoding, into a
        `ProviderError` that is not retried: such a stream is not a model reply (a broken
        proxy, a hostile server), and asking again would only fetch the same flood.
        """
        try:
            yield
        except (TooLarge, Undecodable) as e:
            raise self.error(stream.problem(e, self.name)) from None

    def _body(self, response: httpx.Response) -> AsyncGenerator[bytes, None]:
        """The response body's bytes, decompressed in bounded steps."""
        encoding = response.headers.get("content-encoding", "")
        # aiter_raw is an async generator (typed as an iterator): closable, as `_body_text` does
        raw = cast("AsyncGenerator[bytes, None]", response.aiter_raw())
        return stream.decoded(raw, encoding)

    async def _body_text(self, response: httpx.Response, limit: int | None = None) -> str:
        """A non-streamed body (an error, a JSON answer) as text, cut at `limit` bytes
        (default `max_event_bytes`).

        Only the start of such a body is ever shown, so the rest is left unread.
        """
        try:
            async with aclosing(self._body(response)) as chunks:
                data, _cut = await stream.read(chunks, limit or self.max_event_bytes)
        except Undecodable:
            return ""  # the status still says what went wrong
        return data.decode("utf-8", "replace")

    async def _reject_json(self, response: httpx.Response) -> None:
        """A 200 answer in plain JSON instead of a stream is an error body (or no stream)."""
        if "json" not in response.headers.get("content-type", ""):
            return
        text = await self._body_text(response)
        message = _detail(text)
        raise self.error(f"{self.name} answered without streaming: {message}")

    def parse(self, data: str) -> object:
        """One JSON value of the stream, or a `ProviderError` quoting the bad line."""
        try:
            return wire_json.loads(data)
        except ValueError:
            raise self.error(
                f"{self.name} sent a malformed event (not JSON): {data[:200]!r}"
            ) from None
        except RecursionError:
            raise self.error(f"{self.name} sent an event nested too deeply to read") from None

    def status_error(
        self, status: int, text: str, headers: Mapping[str, str]
    ) -> StatusError | ContextOverflow:
        """The `ProviderError` for an HTTP error status, saying what to do about it; a
        `ContextOverflow` (with the window the server stated) for a request too big."""
        detail = _detail(text)
        # server_window (its regexes) only once a server refuses a request
        from elelem_kernel.providers import server_window

        too_big = server_window.overflow(status, text)
        if too_big is not None:
            limit, requested = too_big
            message = self.redact(f"{status} from {self.name}: the request is too big ({detail})")
            return ContextOverflow(message, limit=limit, requested=requested, status=status)
        kind = _error_type(text)
        overloaded = status == 529 or kind == "overloaded_error"
        retryable = status in RETRYABLE_STATUS or status >= 500 or overloaded
        prefix = f"{status} from {self.name}"
        if status == 401:
            if self._key is None:
                message = f"{prefix}: the server wants an API key; set {self.key_env}"
            else:
                message = f"{prefix}: the API key in {self._key_source()} was rejected"
        elif status == 403:
            message = f"{prefix}: permission denied for this key ({detail})"
        elif status == 404:
            hint = self.not_found_hint.format(model=self.model)
            message = f"{prefix}: {detail} (model {self.model!r}); {hint}"
        elif status == 429:
            message = f"{prefix}: rate limited ({detail})"
        elif overloaded:
            message = f"{prefix}: overloaded ({detail})"
        elif status >= 500:
            message = f"{prefix}: server error ({detail})"
        else:
            message = f"{prefix}: {detail}"
        return self.error(
            message, retryable=retryable, status=status, retry_after=retry_after(headers)
        )


class StreamParser:
    """Base of the wire parsers: one response's stream in, provider events out.

    A provider's parser implements `feed(name, data)` (its wire mapping), sets `done` when
    the stream's own end arrived and `stop` to the raw finish reason, and hands every
    complete tool call to `call()`. The template `finish()` does the rest the same way for
    every provider: a stream that ended early is a retryable error; calls whose arguments
    did not parse are replayed with `{}` unless the answer was cut off (truncated), in the
    order they were buffered; then the usage and the stop.
    """

    #: What the stream's normal end is called, for the error when it never came.
    end_marker = "its end"

    def __init__(self, provider: HTTPProvider, emit: Emit):
        self.provider = provider
        self.emit = emit
        self.usage: Reported | None = None
        self.stop: str | None = None
        self.done = False
        #: The model the server says answered (a local server names its own).
        self.served: str | None = None
        #: Calls emitted at `finish()`: (id, name, arguments or None when they did not
        #: parse, the raw arguments as they arrived).
        self.buffered: list[tuple[str, str, dict[str, object] | None, str]] = []
        #: The cost a gateway stated in the response's headers (`COST_HEADER`), as sent.
        self.header_cost: str | None = None

    def headers(self, headers: Mapping[str, str]) -> None:
        """The response's headers, before its stream: a gateway's cost is kept."""
        value = headers.get(COST_HEADER)
        if value:
            self.header_cost = value[:40]

    def feed(self, name: str, data: object) -> None:
        """One parsed event (its SSE name; empty for an NDJSON line): override per provider."""
        raise NotImplementedError

    def call(self, call_id: str, name: str, raw: object) -> None:
        """A complete tool call: emitted now, or buffered when its arguments did not parse."""
        arguments = parse_arguments(raw)
        if arguments is None:
            self.buffered.append((call_id, name, None, raw if isinstance(raw, str) else ""))
        else:
            self.doing(call_id, name, arguments)

    def doing(self, call_id: str, name: str, arguments: dict[str, object]) -> None:
        self.emit(
            {"type": "doing", "id": call_id or made_up_id(), "name": name, "arguments": arguments}
        )

    def complete(self) -> bool:
        """Whether the stream reached its own end (not just a closed connection)."""
        return self.done

    def flush(self) -> None:
        """Hook: what a provider still holds when the stream ended well (before the calls)."""

    def totals(self) -> Reported | None:
        """The round's token counts, or None when the server sent none."""
        return self.usage

    def finish(self) -> None:
        """After the stream: the buffered calls, usage and stop; an error if it ended early."""
        if not self.complete():
            raise self.provider.error(
                f"the stream from {self.provider.name} ended before {self.end_marker}; "
                "the reply is incomplete",
                retryable=True,
            )
        truncated = self.stop in TRUNCATED
        self.flush()
        for call_id, name, arguments, raw in self.buffered:
            if arguments is not None or not truncated:
                self.doing(call_id, name, arguments or {})
            else:  # cut off mid-call: shown with what arrived, never run (the session says so)
                self.doing(call_id, name, {PARTIAL: clip(raw, PARTIAL_CHARS)})
        if self.served:
            self.emit({"type": "model", "name": self.served})
        usage = self.totals()
        if self.header_cost is not None and (usage is None or "cost" not in usage):
            usage = {**(usage or {}), "cost": self.header_cost}  # checked by the session
        if usage is not None:
            self.emit({"type": "usage", **usage})
        self.emit({"type": "stop", "reason": self.stop, "truncated": truncated})


#: The argument key of a call the model was cut off in the middle of, with what arrived.
PARTIAL = "partial (cut off)"
PARTIAL_CHARS = 2_000


def made_up_id() -> str:
    """An id for a tool call the server sent without one."""
    # secrets (and hmac) only for a server that sends calls without ids: not on a turn's path
    import secrets

    return f"call_{secrets.token_hex(8)}"


def switch(value: object) -> bool | str | None:
    """An on/off option such as `thinking`: True, False, None (unset), or a level's text.

    `on/true/yes/1` is True and `off/false/no/0/none` (or empty) is False, in any case;
    anything else (`high`, `adaptive`, `2048`) comes back lower-cased for the provider.
    """
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("on", "true", "yes", "1"):
        return True
    if text in ("", "off", "false", "no", "0", "none"):
        return False
    return text


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait: `retry-after-ms`, `retry-after` seconds or date."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def parse_arguments(raw: object) -> dict[str, object] | None:
    """Tool-call arguments as a dict: empty or missing → `{}`; None when not a JSON object
    (nor a JSON text of one)."""
    if isinstance(raw, dict):
        return raw
    if raw is None or isinstance(raw, str) and not raw.strip():
        return {}
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):  # nested past the interpreter's limit
        return None
    return value if isinstance(value, dict) else None


def _detail(text: str) -> str:
    """The human part of an error body: `error.message`, `error`, `message`, or the text."""
    try:
        body = json.loads(text)
    except ValueError:
        return text.strip()[:300] or "no details"
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = error.get("message") or error.get("type") or error.get("code")
            if message:
                return str(message)[:300]
        elif isinstance(error, str) and error:
            return error[:300]
        message = body.get("message")
        if isinstance(message, str):
            return message[:300]
    return text.strip()[:300] or "no details"


def _error_type(text: str) -> str | None:
    try:
        error = json.loads(text).get("error")
    except (ValueError, AttributeError):
        return None
    return error.get("type") if isinstance(error, dict) else None


def _number(value: Any, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"option {name} must be a number, not {value!r}") from None
    if number < 0:
        raise ConfigError(f"option {name} must not be negative, not {value!r}")
    return number


_SSL_CONTEXT: ssl.SSLContext | None = None
_PLAIN_CONTEXT: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    """One SSL context for all clients: loading the CA bundle costs ~20 ms each time."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        import httpx

        _SSL_CONTEXT = httpx.create_ssl_context()
    return _SSL_CONTEXT


def _plain_context() -> ssl.SSLContext:
    """The context httpx makes for `verify=False`, made once: a plain-http client never
    uses it, but httpx makes one per client, and a process's first costs OpenSSL's setup."""
    global _PLAIN_CONTEXT
    if _PLAIN_CONTEXT is None:
        import httpx

        _PLAIN_CONTEXT = httpx.create_ssl_context(verify=False)
    return _PLAIN_CONTEXT


def make_tls_contexts() -> None:
    """Make both contexts now (jupyter/warm_up.py, on its thread), so a first turn's
    client makes none: ~1-5 ms of OpenSSL's setup for any server, ~20 ms more for https."""
    _plain_context()
    _ssl_context()
