"""Behaviour every HTTP provider shares (providers/http.py), checked over real loopback HTTP
for each wire format: streaming, usage and stop, retries, faults, keys and options."""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import subprocess
import sys
import time

import pytest

from elelem_kernel.errors import ConfigError, ProviderError
from elelem_kernel.events import map_stop_reason
from elelem_kernel.providers import anthropic, ollama, openai, responses
from elelem_kernel.providers.http import parse_arguments, retry_after
from tests.ports import free_port
from tests.providers.conftest import CLASSES, KEY, fetch
from tests.wire_servers import Reply, Round, error_event, error_reply, reply

FORMATS = list(CLASSES)
TRUNCATION = {
    "anthropic": "max_tokens",
    "openai": "length",
    "responses": "max_output_tokens",
    "ollama": "length",
}
KEY_VARS = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "responses": "OPENAI_API_KEY",
}
STORY = Round(
    thinking="Plan the answer.", text="Hello there, world.", calls=[("read", {"path": "a.py"})]
)


def stop_of(got) -> str:
    stop = got.of("stop")[-1]
    return map_stop_reason(stop["reason"], bool(got.calls), stop["truncated"])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "round, text, thinking, calls, stop",
    [
        (Round(text="Just text."), "Just text.", "", [], "end_turn"),
        (
            Round(thinking="Think first.", text="Then talk."),
            "Then talk.",
            "Think first.",
            [],
            "end_turn",
        ),
        (
            Round(calls=[("read", {"path": "a.py"})]),
            "",
            "",
            [("read", {"path": "a.py"})],
            "tool_use",
        ),
        (
            Round(
                text="Two calls.", calls=[("read", {"path": "a.py"}), ("read", {"path": "b.py"})]
            ),
            "Two calls.",
            "",
            [("read", {"path": "a.py"}), ("read", {"path": "b.py"})],
            "tool_use",
        ),
        (Round(calls=[("list", {})]), "", "", [("list", {})], "tool_use"),
    ],
    ids=["text", "thinking-text", "one-call", "two-calls", "no-arguments"],
)
def test_a_round_streams_as_events(wire, make, fmt, round, text, thinking, calls, stop):
    # a pause between writes: each piece is its own network read (one read's pieces join)
    wire.queue(dataclasses.replace(reply(fmt, round), delay=0.02))
    got = fetch(make(fmt))
    assert got.error is None
    assert (got.text, got.thinking, got.calls, stop_of(got)) == (text, thinking, calls, stop)
    assert len(got.of("saying")) == len(text.split())  # streamed in pieces, as sent
    assert [e["type"] for e in got.events][-2:] == ["usage", "stop"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_usage_uses_the_event_keys(wire, make, fmt):
    wire.script(
        fmt,
        Round(text="ok", usage={"input": 100, "output": 20, "cache_read": 60, "cache_write": 10}),
    )
    usage = fetch(make(fmt)).of("usage")[0]
    expected = {
        "anthropic": {"input": 100, "output": 20, "cache_read": 60, "cache_write": 10},
        "openai": {"input": 100, "output": 20, "cache_read": 60},
        "responses": {"input": 100, "output": 20, "cache_read": 60},
        "ollama": {"input": 100, "output": 20},
    }[fmt]
    assert usage == {"type": "usage", **expected}


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncation_wins_over_tool_calls(wire, make, fmt):
    wire.script(fmt, Round(text="Cut", calls=[("read", {"path": "a.py"})], stop=TRUNCATION[fmt]))
    got = fetch(make(fmt))
    assert got.of("stop")[0]["truncated"] is True
    assert stop_of(got) == "max_tokens"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_multibyte_character_split_across_writes_arrives_whole(wire, make, fmt):
    story = Round(text="Grüße 😀 — 漢字 done")
    split = reply(fmt, story).split_chars()
    assert len(split.chunks) > len(reply(fmt, story).chunks)
    wire.queue(split)
    got = fetch(make(fmt))
    assert got.error is None and got.text == "Grüße 😀 — 漢字 done"


# -- retries -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_429_waits_as_told_then_succeeds(wire, make, fmt):
    wire.script(fmt, STORY)
    normal = fetch(make(fmt))
    wire.queue(error_reply(fmt, 429, "slow down", retry_after=0), reply(fmt, STORY))
    provider = make(fmt, backoff=5)
    got = fetch(provider)
    assert got.error is None and got.joined() == normal.joined()  # read apart, joined alike
    assert provider.waits == [0.0]
    assert len(wire.requests) == 3


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("status", [500, 503, 529])
def test_server_errors_are_retried_with_backoff(wire, make, fmt, status):
    wire.queue(error_reply(fmt, status), error_reply(fmt, status), reply(fmt, STORY))
    provider = make(fmt, backoff=0.01)
    got = fetch(provider)
    assert got.error is None and got.text == STORY.text
    assert len(provider.waits) == 2
    assert 0.005 <= provider.waits[0] <= 0.01 and 0.01 <= provider.waits[1] <= 0.02


@pytest.mark.parametrize("fmt", FORMATS)
def test_retries_are_bounded(wire, make, fmt):
    wire.queue(*[error_reply(fmt, 500, "boom")] * 3)
    got = fetch(make(fmt, retries=2))
    assert isinstance(got.error, ProviderError)
    assert f"500 from {fmt}: server error (boom) (gave up after 3 attempts)" == str(got.error)
    assert len(wire.requests) == 3 and got.events == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_long_retry_after_gives_up_at_once(wire, make, fmt):
    wire.queue(error_reply(fmt, 429, "quota", retry_after=3600))
    provider = make(fmt)
    got = fetch(provider)
    assert str(got.error) == (
        f"429 from {fmt}: rate limited (quota); the server asks to wait 3600 s, try again later"
    )
    assert provider.waits == [] and len(wire.requests) == 1


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "responses"])
def test_401_is_not_retried_and_names_the_variable(wire, make, monkeypatch, fmt):
    monkeypatch.setenv(KEY_VARS[fmt], KEY)
    wire.queue(error_reply(fmt, 401, f"invalid x-api-key {KEY}"))
    provider = CLASSES[fmt](base_url=wire.base_url(fmt))
    got = fetch(provider)
    assert str(got.error) == f"401 from {fmt}: the API key in {KEY_VARS[fmt]} was rejected"
    assert got.error.status == 401 and not got.error.retryable
    assert len(wire.requests) == 1


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("status", [400, 404])
def test_client_errors_quote_the_server_and_are_not_retried(wire, make, fmt, status):
    wire.queue(error_reply(fmt, status, f"bad thing with key {KEY}"))
    got = fetch(make(fmt))
    assert str(got.error).startswith(f"{status} from {fmt}: bad thing with key ***")
    assert KEY not in str(got.error) and len(wire.requests) == 1


# -- faults mid-stream -----------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_reset_before_output_is_retried_and_nothing_repeats(wire, make, fmt):
    wire.script(fmt, STORY)
    normal = fetch(make(fmt))
    full = reply(fmt, STORY)
    wire.queue(full.reset_after(full.index("Plan")), full)
    got = fetch(make(fmt))
    assert got.error is None and got.joined() == normal.joined()  # read apart, joined alike


@pytest.mark.parametrize("fmt", FORMATS)
def test_reset_after_output_fails_once_without_repeating(wire, make, fmt):
    wire.script(fmt, STORY)
    normal = fetch(make(fmt))
    full = reply(fmt, STORY)
    wire.queue(full.reset_after(full.index("there")), full)
    got = fetch(make(fmt))
    assert "broke mid-response" in str(got.error) and got.error.retryable
    assert got.events and got.begins(normal)  # read apart: compared joined
    assert got.text == "Hello " and got.of("doing") == []
    assert len(wire.requests) == 2 and wire.pending() == 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_stream_without_its_terminal_event_is_an_error(wire, make, fmt):
    full = reply(fmt, STORY)
    wire.queue(full.close_after(len(full.chunks) - 1 if fmt != "openai" else len(full.chunks) - 3))
    got = fetch(make(fmt))
    assert isinstance(got.error, ProviderError)
    assert "ended before" in str(got.error) and "incomplete" in str(got.error)
    assert got.of("stop") == [] and got.text == STORY.text


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_stall_past_the_read_timeout_is_an_error(wire, make, fmt):
    full = reply(fmt, STORY)
    wire.queue(full.stall_after(full.index("there")))
    got = fetch(make(fmt, read_timeout=0.2))
    assert str(got.error) == (
        f"{fmt} sent nothing for 0.2 s (read timeout); try again, or raise the read_timeout option"
    )
    assert got.text == "Hello "


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_malformed_json_line_is_an_error(wire, make, fmt):
    full = reply(fmt, STORY)
    bad = b"{not json\n" if fmt == "ollama" else b"data: {not json\n\n"
    wire.queue(full.insert(full.index("there"), bad))
    got = fetch(make(fmt))
    assert str(got.error) == f"{fmt} sent a malformed event (not JSON): '{{not json'"
    assert got.text == "Hello " and len(wire.requests) == 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_error_event_after_200_and_output_ends_the_round(wire, make, fmt):
    full = reply(fmt, STORY)
    at = full.index("there")
    wire.queue(full.insert(at, error_event(fmt, "Overloaded")).close_after(at + 1))
    got = fetch(make(fmt))
    assert isinstance(got.error, ProviderError) and "Overloaded" in str(got.error)
    assert got.text == "Hello " and len(wire.requests) == 1


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "responses"])
def test_an_overloaded_event_before_output_is_retried(wire, make, fmt):
    full = reply(fmt, STORY)
    wire.queue(full.insert(1, error_event(fmt, "Overloaded")).close_after(2), full)
    got = fetch(make(fmt))
    assert got.error is None and got.text == STORY.text and len(wire.requests) == 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_cancelling_a_slow_stream_stops_it(wire, make, fmt):
    wire.queue(reply(fmt, Round(text=" ".join(["word"] * 200))).slow(0.02))
    provider = make(fmt)
    events: list[dict] = []

    async def go() -> None:
        task = asyncio.ensure_future(
            provider.fetch([{"role": "user", "content": "hi"}], [], events.append)
        )
        while not events:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await provider.aclose()

    asyncio.run(go())
    assert 0 < len(events) < 200


# -- keys, options, clients ----------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "responses"])
def test_a_missing_key_is_a_config_error_before_any_request(wire, fmt):
    got = fetch(CLASSES[fmt]())
    assert isinstance(got.error, ConfigError)
    assert KEY_VARS[fmt] in str(got.error) and wire.requests == []


def test_compatible_servers_need_no_key(wire, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", wire.base_url("openai"))
    wire.script("openai", Round(text="local"))
    got = fetch(openai.OpenAIProvider())
    assert got.text == "local" and "authorization" not in wire.requests[0].headers


@pytest.mark.parametrize("fmt", FORMATS)
def test_keys_stay_out_of_reprs(make, fmt):
    provider = make(fmt)
    assert KEY not in repr(provider) and KEY not in str(provider)


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_options_are_refused_clearly(fmt):
    with pytest.raises(ConfigError, match="unknown option for .*: tempreature. Known options: "):
        CLASSES[fmt](tempreature=0.2)


@pytest.mark.parametrize("fmt", FORMATS)
def test_model_is_explicit_else_env_else_default(monkeypatch, fmt):
    cls = CLASSES[fmt]
    assert cls().model == cls.default_model and cls.default_model
    monkeypatch.setenv("ELELEM_MODEL", "from-env")
    assert cls().model == "from-env"
    assert cls("explicit").model == "explicit"


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_event_loop_gets_its_own_client(wire, make, fmt):
    wire.script(fmt, Round(text="one"), Round(text="two"), Round(text="three"))
    provider = make(fmt)
    loops = [asyncio.new_event_loop(), asyncio.new_event_loop()]
    texts, clients = [], []
    try:
        for loop in [*loops, loops[0]]:
            events: list[dict] = []
            fetch_one = provider.fetch([{"role": "user", "content": "hi"}], [], events.append)
            loop.run_until_complete(fetch_one)
            texts.append("".join(e["text"] for e in events if e["type"] == "saying"))
            clients.append(provider._clients[loop])
    finally:
        for loop in loops:
            loop.run_until_complete(provider.aclose())
            loop.close()
    assert texts == ["one", "two", "three"]
    assert clients[0] is clients[2] and clients[0] is not clients[1]
    assert all(c.is_closed for c in clients) and len(provider._clients) == 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unreachable_server_says_where_it_looked(make, fmt):
    port = free_port()
    got = fetch(make(fmt, base_url=f"http://127.0.0.1:{port}"))
    assert str(got.error).startswith(f"cannot reach {fmt} at http://127.0.0.1:{port}: ")
    hint = {"anthropic": "check ANTHROPIC_BASE_URL", "ollama": "is `ollama serve` running?"}
    assert hint.get(fmt, "check OPENAI_BASE_URL") in str(got.error)


def test_configured_follows_the_environment(wire, monkeypatch):
    assert not anthropic.configured() and not openai.configured()
    assert not responses.configured()
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert anthropic.configured() and openai.configured() and responses.configured()


def test_ollama_is_configured_when_something_listens(wire, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", wire.url)
    assert ollama.configured()
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
    assert not ollama.configured()


def test_retry_after_reads_seconds_milliseconds_and_dates():
    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "7"}) == 0.25
    assert retry_after({}) is None and retry_after({"retry-after": "soon"}) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < retry_after({"retry-after": later}) <= 30


def test_arguments_empty_means_no_arguments():
    assert parse_arguments("") == {} and parse_arguments(None) == {}
    assert parse_arguments('{"a": 1}') == {"a": 1} and parse_arguments({"a": 1}) == {"a": 1}
    assert parse_arguments('{"a": ') is None and parse_arguments("[1]") is None


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "responses"])
def test_a_json_answer_instead_of_a_stream_is_reported(wire, make, fmt):
    body = b'{"error": {"message": "streaming is not supported here"}}'
    wire.queue(Reply(200, {"content-type": "application/json"}, [body], stream=False))
    got = fetch(make(fmt))
    assert str(got.error) == f"{fmt} answered without streaming: streaming is not supported here"


def test_importing_the_providers_loads_no_http_client():
    code = (
        "import sys\n"
        "import elelem_kernel.providers.anthropic, elelem_kernel.providers.openai\n"
        "import elelem_kernel.providers.responses, elelem_kernel.providers.ollama\n"
        "from elelem_kernel.providers import ollama\n"
        "ollama.configured()\n"
        "print(sorted(m for m in ('httpx', 'httpx_sse', 'httpcore') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- bounded lines, events and bodies --------------------------------------------------

LIMIT = 1_000_000  #: a low max_event_bytes keeps the data of these tests modest


def _pieces(data: bytes, size: int = 65_536) -> list[bytes]:
    return [data[at : at + size] for at in range(0, len(data), size)]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_line_over_the_limit_fails_at_once_and_is_not_retried(wire, make, fmt):
    full = reply(fmt, STORY)
    prefix = b"" if fmt == "ollama" else b"data: "
    wire.queue(full.huge_line(0, 2_000_000, prefix), full)
    got = fetch(make(fmt, max_event_bytes=LIMIT))
    assert str(got.error) == (
        f"{fmt} sent a line over the 1 MB limit (the max_event_bytes option); "
        "stopped reading: this is not a model reply"
    )
    assert isinstance(got.error, ProviderError) and not got.error.retryable
    assert got.events == [] and len(wire.requests) == 1


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_line_over_the_limit_after_output_ends_the_round(wire, make, fmt):
    full = reply(fmt, STORY)
    prefix = b"" if fmt == "ollama" else b"data: "
    wire.queue(full.huge_line(full.index("there"), 2_000_000, prefix))
    got = fetch(make(fmt, max_event_bytes=LIMIT))
    assert "over the 1 MB limit" in str(got.error)
    assert got.text == "Hello " and len(wire.requests) == 1


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", ["anthropic", "openai", "responses"])
def test_an_event_of_many_lines_over_the_limit_fails(wire, make, fmt):
    full = reply(fmt, STORY)
    lines = b"data: " + b"y" * 100_000 + b"\n"
    wire.queue(full.insert(0, lines * 20), full)
    got = fetch(make(fmt, max_event_bytes=LIMIT))
    assert str(got.error) == (
        f"{fmt} sent an event over the 1 MB limit (the max_event_bytes option); "
        "stopped reading: this is not a model reply"
    )
    assert len(wire.requests) == 1


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", FORMATS)
def test_an_error_body_is_read_up_to_the_limit_only(wire, make, fmt):
    # The server sends 2 MB of an error body and then holds the connection: a reader that
    # wants the whole body waits for the read timeout instead of reporting the 500.
    body = b'{"error": {"message": "' + b"y" * 2_000_000
    headers = {"content-type": "application/json"}
    wire.queue(Reply(500, headers, _pieces(body), end="stall"))
    got = fetch(make(fmt, max_event_bytes=LIMIT, retries=0, read_timeout=20))
    assert str(got.error).startswith(f"500 from {fmt}: server error (")
    assert len(str(got.error)) < 1000


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", ["anthropic", "openai", "responses"])
def test_a_json_answer_is_read_up_to_the_limit_only(wire, make, fmt):
    body = b'{"error": {"message": "' + b"y" * 2_000_000
    headers = {"content-type": "application/json"}
    wire.queue(Reply(200, headers, _pieces(body), end="stall"))
    got = fetch(make(fmt, max_event_bytes=LIMIT, read_timeout=20))
    assert str(got.error).startswith(f"{fmt} answered without streaming: ")
    assert len(wire.requests) == 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_limit_is_16_mb_unless_set(make, fmt):
    assert make(fmt).max_event_bytes == 16_000_000
    assert make(fmt, max_event_bytes="2000000").max_event_bytes == 2_000_000
    with pytest.raises(ConfigError, match="max_event_bytes"):
        make(fmt, max_event_bytes=0)


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_event_nested_past_the_interpreter_limit_is_a_clear_error(wire, make, fmt):
    deep = b"[" * 100_000 + b"]" * 100_000
    line = deep + b"\n" if fmt == "ollama" else b"data: " + deep + b"\n\n"
    full = reply(fmt, STORY)
    wire.queue(full.insert(0, line), full)
    got = fetch(make(fmt))
    assert str(got.error) == f"{fmt} sent an event nested too deeply to read"
    assert not got.error.retryable and len(wire.requests) == 1


def _gzip(reply_: Reply, size: int = 4096) -> Reply:
    import gzip

    body = gzip.compress(b"".join(reply_.chunks))
    headers = {**reply_.headers, "content-encoding": "gzip"}
    return Reply(reply_.status, headers, _pieces(body, size), stream=reply_.stream)


@pytest.mark.parametrize("fmt", FORMATS)
def test_requests_ask_for_identity_and_a_gzip_answer_still_reads(wire, make, fmt):
    wire.script(fmt, STORY)
    normal = fetch(make(fmt))
    wire.queue(_gzip(reply(fmt, STORY)))
    got = fetch(make(fmt))
    # one inflated read holds what several plain reads did: the text arrives in fewer pieces
    assert got.error is None and got.joined() == normal.joined()
    assert wire.requests[-1].headers["accept-encoding"] == "identity"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", ["openai", "ollama"])
def test_a_compressed_flood_is_stopped_before_it_is_decompressed_whole(wire, make, fmt):
    # 64 MB of one line compress to ~64 KB: decompressing a network read at once would hold
    # tens of MB before the line bound could look at it.
    import tracemalloc

    prefix = b"" if fmt == "ollama" else b"data: "
    flood = Reply(200, reply(fmt, STORY).headers, [prefix + b"x" * 64_000_000])
    wire.queue(_gzip(flood, 65_536))
    tracemalloc.start()
    try:
        got = fetch(make(fmt, max_event_bytes=LIMIT))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "over the 1 MB limit" in str(got.error)
    assert peak < 16_000_000, peak


@pytest.mark.parametrize("fmt", ["anthropic", "ollama"])
def test_an_encoding_that_was_not_asked_for_is_refused(wire, make, fmt):
    full = reply(fmt, STORY)
    wire.queue(Reply(200, {**full.headers, "content-encoding": "br"}, full.chunks), full)
    got = fetch(make(fmt))
    assert str(got.error) == (
        f"{fmt} sent its answer in the br encoding, which is not read "
        "(identity was asked for; gzip and deflate are read too)"
    )
    assert len(wire.requests) == 1


def test_an_error_body_in_an_unread_encoding_still_reports_the_status(wire, make):
    body = b'{"error": {"message": "compressed"}}'
    headers = {"content-type": "application/json", "content-encoding": "br"}
    wire.queue(Reply(400, headers, [body], stream=False))
    got = fetch(make("openai"))
    assert str(got.error) == "400 from openai: no details"


def test_a_gzip_body_that_does_not_decompress_is_an_error(wire, make):
    full = reply("openai", STORY)
    wire.queue(Reply(200, {**full.headers, "content-encoding": "gzip"}, [b"not gzip at all"]))
    got = fetch(make("openai"))
    assert str(got.error).startswith("openai sent a gzip body that does not decompress (")
    assert len(wire.requests) == 1
