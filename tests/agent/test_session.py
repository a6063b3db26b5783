"""The turn loop: rounds, tool calls, errors, limits, approvals, cancellation, history."""

from __future__ import annotations

import asyncio
import json

import pytest

from elelem_kernel.agent.approval import Policy
from elelem_kernel.agent.front import TurnSettings
from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.assembly.bundled import catalog
from elelem_kernel.errors import ProviderError, ToolError
from tests.scripted import Scripted, call, say


def make_toolbox() -> Toolbox:
    box = Toolbox()

    @box.add(
        "add",
        "Add two numbers",
        {"a": {"type": "integer"}, "b": {"type": "integer"}},
        required=["a", "b"],
    )
    def add(args):
        return {"sum": args["a"] + args["b"]}

    @box.add("boom", "Always raises")
    def boom(args):
        raise RuntimeError("kaboom")

    @box.add("touch", "Writes", {"path": {"type": "string"}}, kind="write")
    def touch(args):
        return {"written": args.get("path")}

    return box


def run(session, prompt, events=None, **kw):
    return asyncio.run(
        session.turn(prompt, renderer=(events.append if events is not None else None), **kw)
    )


def tool_messages(sent):
    return [m for m in sent["messages"] if m["role"] == "tool"]


def test_a_tool_round_then_an_answer(tmp_path):
    provider = Scripted(call("add", {"a": 2, "b": 3}, text="checking"), say("5"))
    s = Session(provider, make_toolbox(), workspace=tmp_path)
    result = run(s, "add 2 and 3")
    assert (result.reply, result.stop) == ("5", "end_turn")
    (tool,) = tool_messages(provider.sent[1])
    assert tool["tool_call_id"] == "c1" and json.loads(tool["content"]) == {"ok": True, "sum": 5}
    assistant = provider.sent[1]["messages"][-2]
    assert assistant["tool_calls"] == [{"id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}]
    calls = result.record["rounds"][0]["calls"]
    assert calls[0]["ok"] is True and json.loads(calls[0]["result"])["sum"] == 5


def test_schema_failure_tool_exception_and_hallucinated_name_reach_the_model(tmp_path):
    provider = Scripted(
        [
            {"type": "doing", "id": "a", "name": "add", "arguments": {"a": "two"}},
            {"type": "doing", "id": "b", "name": "boom", "arguments": {}},
            {"type": "doing", "id": "c", "name": "delete_everything", "arguments": {}},
            {"type": "stop", "reason": "tool_use", "truncated": False},
        ],
        say("sorry"),
    )
    s = Session(provider, make_toolbox(), workspace=tmp_path)
    result = run(s, "go")
    assert result.stop == "end_turn"
    a, b, c = (json.loads(m["content"]) for m in tool_messages(provider.sent[1]))
    assert (
        a["ok"] is False
        and "invalid arguments for add" in a["error"]
        and "'b' is a required" in a["error"]
    )
    assert b["ok"] is False and "kaboom" in b["error"]
    assert (
        c["ok"] is False
        and 'unknown tool "delete_everything"' in c["error"]
        and "add, boom" in c["error"]
    )


def test_provider_error_mid_stream_ends_the_turn_and_the_session_goes_on(tmp_path):
    provider = Scripted(
        [
            {"type": "saying", "text": "partial "},
            {"type": "doing", "id": "x", "name": "add", "arguments": {}},
            ProviderError("connection reset"),
        ],
        say("fine"),
    )
    s = Session(provider, make_toolbox(), workspace=tmp_path)
    events: list[dict] = []
    first = run(s, "one", events)
    assert first.stop == "error" and first.error == "connection reset"
    assert events[-1]["type"] == "turn_end" and events[-1]["error"] == "connection reset"
    started = {e["index"] for e in events if e["type"] == "block_start"}
    assert started == {e["index"] for e in events if e["type"] == "block_stop"}
    second = run(s, "two")
    assert second.reply == "fine"
    history = provider.sent[1]["messages"]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user"]
    assert history[1]["content"] == "one" and "partial" in history[2]["content"]
    assert not any(m.get("tool_calls") for m in history)


def test_full_history_has_no_dangling_tool_call_after_an_error(tmp_path):
    provider = Scripted(
        [{"type": "doing", "id": "x", "name": "add", "arguments": {}}, RuntimeError("cut")],
        say("ok"),
    )
    s = Session(provider, make_toolbox(), workspace=tmp_path, history="full")
    run(s, "one")
    run(s, "two")
    messages = provider.sent[1]["messages"]
    ids = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert ids == answered == ["x"]


def test_round_limit(tmp_path):
    provider = Scripted(call("add", {"a": 1, "b": 1}), repeat_last=True)
    s = Session(provider, make_toolbox(), workspace=tmp_path, max_rounds=3)
    events: list[dict] = []
    result = run(s, "loop forever", events)
    assert result.stop == "max_rounds" and len(provider.sent) == 3
    assert "round limit" in result.error
    assert events[-1] == {**events[-1], "type": "turn_end", "stop": "max_rounds", "rounds": 3}


def test_empty_prompt_is_a_clear_error_and_not_a_turn(tmp_path):
    s = Session(Scripted(), make_toolbox(), workspace=tmp_path)
    result = run(s, "   ")
    assert result.stop == "error" and "prompt is empty" in result.error
    assert len(s.conversation) == 0


def test_truncation_wins_over_tool_calls(tmp_path):
    provider = Scripted(
        [
            {"type": "doing", "id": "a", "name": "add", "arguments": {"a": 1, "b": 2}},
            {"type": "stop", "reason": "length", "truncated": True},
        ]
    )
    s = Session(provider, make_toolbox(), workspace=tmp_path)
    result = run(s, "x")
    assert result.stop == "max_tokens" and len(provider.sent) == 1


def test_write_needs_approval_and_a_denial_goes_back_to_the_model(tmp_path):
    provider = Scripted(
        call("touch", {"path": "a"}), say("ok"), call("touch", {"path": "b"}), say("ok")
    )
    s = Session(provider, make_toolbox(), workspace=tmp_path, mode="build")
    events: list[dict] = []
    run(s, "write", events)
    result = json.loads(tool_messages(provider.sent[1])[0]["content"])
    assert result["ok"] is False and "--mode auto" in result["error"]
    assert {"type": "tool_state", "index": 0, "id": "c1", "state": "declined"} in events
    run(s, "write again", settings=TurnSettings(Policy(allow=["touch"])))
    assert json.loads(tool_messages(provider.sent[3])[0]["content"]) == {"ok": True, "written": "b"}


def test_always_is_remembered_for_the_session(tmp_path):
    asked = []

    class Always:
        def approve(self, request):
            asked.append(request)
            return "always"

    provider = Scripted(
        call("touch", {"path": "a"}), say("1"), call("touch", {"path": "b"}), say("2")
    )
    s = Session(provider, make_toolbox(), workspace=tmp_path, approver=Always())
    run(s, "one")
    run(s, "two")
    assert len(asked) == 1 and asked[0].index == 0 and '"path": "a"' in asked[0].preview
    assert "touch" in s.grants.always


def test_a_prepared_call_is_asked_with_what_it_read_and_runs_exactly_that(tmp_path):
    """`Tool.prepare` reads what a call acts on before the question; the question shows
    it and the run uses it, never a later read. A failing read fails the call unasked."""
    from elelem_kernel.agent.toolbox import Tool

    state = {"code": "print('shown')"}
    asked, ran = [], []

    async def prepare(args):
        if args.get("fail"):
            raise ToolError("the notebook sent no cells")
        code = state["code"]

        async def run_it():
            ran.append(code)
            return {"ran": code}

        return f"will run:\n{code}", run_it

    class Changing:
        def approve(self, request):
            asked.append(request.preview)
            state["code"] = "print('swapped after the yes')"
            return "allow"

    box = Toolbox()
    params = {"fail": {"type": "boolean"}}
    box.put(Tool("cells", "Run cells", params, lambda a: {}, kind="execute", prepare=prepare))
    provider = Scripted(call("cells", {}), call("cells", {"fail": True}, id="c2"), say("done"))
    s = Session(provider, box, workspace=tmp_path, mode="verify", approver=Changing())
    run(s, "run them")
    first, second = (json.loads(m["content"]) for m in tool_messages(provider.sent[2]))
    assert asked == ["will run:\nprint('shown')"]
    assert ran == ["print('shown')"] and first == {"ok": True, "ran": "print('shown')"}
    assert second["ok"] is False and second["error"] == "the notebook sent no cells"


def test_modes_choose_the_offered_kinds(tmp_path):
    provider = Scripted(say("a"), say("b"))
    s = Session(provider, make_toolbox(), workspace=tmp_path, mode="plan")
    run(s, "x")
    s.set_mode("auto")
    run(s, "y")
    names = [[t["function"]["name"] for t in sent["tools"]] for sent in provider.sent]
    assert names == [["add", "boom"], ["add", "boom", "touch"]]


def test_metadata_round_trips_within_the_turn(tmp_path):
    sig = {"anthropic": {"signature": "Sig0aa=="}}
    provider = Scripted(
        [
            {"type": "thinking", "text": "hm"},
            {"type": "thinking", "text": "m", "metadata": sig},
            {
                "type": "doing",
                "id": "c1",
                "name": "add",
                "arguments": {"a": 1, "b": 1},
                "metadata": {"x": {"y": 1}},
            },
            {"type": "stop", "reason": "tool_use", "truncated": False},
        ],
        say("2"),
    )
    s = Session(provider, make_toolbox(), workspace=tmp_path)
    result = run(s, "x")
    assistant = provider.sent[1]["messages"][-2]
    assert assistant["thinking"] == [{"text": "hmm", "metadata": sig}]
    assert assistant["tool_calls"][0]["metadata"] == {"x": {"y": 1}}
    assert "Sig0aa" not in json.dumps(result.record)


def test_cancellation_ends_the_turn_as_interrupted_keeping_the_partial_reply(tmp_path):
    provider = Scripted(
        [{"type": "saying", "text": f"w{i} "} for i in range(200)], say("next"), delay=0.01
    )
    s = Session(provider, make_toolbox(), workspace=tmp_path)
    events: list[dict] = []

    async def main():
        task = asyncio.create_task(s.turn("long", renderer=events.append))
        while not any(e["type"] == "block_delta" for e in events):
            await asyncio.sleep(0.005)
        task.cancel()
        return await task

    result = asyncio.run(main())
    assert result.stop == "interrupted" and result.reply.startswith("w0 ")
    assert events[-1]["type"] == "turn_end" and events[-1]["stop"] == "interrupted"
    run(s, "again")
    sent = provider.sent[1]["messages"]
    assert "interrupted" in sent[2]["content"] and sent[1]["content"] == "long"


def test_replies_policy_sends_prompt_and_final_reply_only(tmp_path):
    provider = Scripted(call("add", {"a": 1, "b": 2}, text="let me add"), say("3"), say("ok"))
    s = Session(provider, make_toolbox(), workspace=tmp_path)
    run(s, "1+2?")
    run(s, "thanks")
    assert [(m["role"], m["content"]) for m in provider.sent[2]["messages"][1:]] == [
        ("user", "1+2?"),
        ("assistant", "3"),
        ("user", "thanks"),
    ]


def test_rerunning_a_cell_replaces_its_turn(tmp_path):
    s = Session(Scripted(say("a"), say("b")), make_toolbox(), workspace=tmp_path)
    run(s, "first", cell="cell-1")
    run(s, "second", cell="cell-1")
    assert [t["prompt"] for t in s.conversation.turns] == ["second"]


def test_rerunning_a_cell_sends_only_the_turns_above_it(tmp_path):
    provider = Scripted(say("a"), say("b"), say("c"), say("a2"))
    s = Session(provider, make_toolbox(), workspace=tmp_path)
    for prompt, cell in (("one", "c1"), ("two", "c2"), ("three", "c3")):
        run(s, prompt, cell=cell)
    run(s, "two again", cell="c2")
    sent = [m["content"] for m in provider.sent[3]["messages"][1:]]
    assert sent == ["one", "a", "two again"]
    assert [t["prompt"] for t in s.conversation.turns] == ["one", "two again", "three"]


def test_a_failing_renderer_does_not_end_the_turn(tmp_path):
    def bad(event):
        raise ValueError("view broke")

    s = Session(Scripted(say("fine")), make_toolbox(), workspace=tmp_path)
    assert asyncio.run(s.turn("x", renderer=bad)).reply == "fine"


@pytest.mark.parametrize("bad", [None, "", "not json", [1, 2]])
def test_odd_arguments_become_a_dict(tmp_path, bad):
    provider = Scripted(
        [
            {"type": "doing", "id": "a", "name": "add", "arguments": bad},
            {"type": "stop", "reason": "tool_use", "truncated": False},
        ],
        say("ok"),
    )
    s = Session(provider, make_toolbox(), workspace=tmp_path)
    run(s, "x")
    assistant = provider.sent[1]["messages"][-2]
    assert isinstance(assistant["tool_calls"][0]["arguments"], dict)
    assert json.loads(tool_messages(provider.sent[1])[0]["content"])["ok"] is False


def test_secret_values_in_tool_results_are_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET-123456")
    box = Toolbox()
    box.add("env", "Print the environment")(lambda args: {"stdout": "KEY=sk-ant-SECRET-123456\n"})
    provider = Scripted(call("env"), say("done"))
    s = Session(provider, box, workspace=tmp_path)
    events: list[dict] = []
    result = run(s, "show env", events)
    assert "sk-ant-SECRET" not in json.dumps(provider.sent[1]["messages"])
    assert "sk-ant-SECRET" not in json.dumps(result.record) and "sk-ant-SECRET" not in json.dumps(
        events
    )
    assert "[redacted: ANTHROPIC_API_KEY]" in tool_messages(provider.sent[1])[0]["content"]


def test_full_history_gives_restored_calls_without_ids_an_id(tmp_path):
    from elelem_kernel.agent.conversation import turn_messages

    record = {
        "turn": "t1",
        "prompt": "p",
        "reply": "r",
        "stop": "end_turn",
        "rounds": [
            {"text": "", "calls": [{"id": None, "name": "read", "arguments": {}, "result": "{}"}]},
            {"text": "r", "calls": []},
        ],
    }
    messages = turn_messages(record, "full")
    call_id = messages[1]["tool_calls"][0]["id"]
    assert call_id and messages[2]["tool_call_id"] == call_id


def test_arguments_recorded_as_cut_text_go_back_as_an_object():
    # A call's arguments past ARGUMENTS_LIMIT are kept as cut JSON text; the history sends
    # an object (a tool call's input is one for every provider), the text under _unparsed.
    from elelem_kernel.agent.conversation import turn_messages

    cut = '{"code": "x = 1\n…'
    calls = [
        {"id": "a", "name": "python", "arguments": cut, "result": "{}"},
        {"id": "b", "name": "read", "arguments": None, "result": "{}"},
    ]
    record = {"turn": "t1", "prompt": "p", "reply": "r", "stop": "end_turn"}
    record["rounds"] = [{"text": "", "calls": calls}, {"text": "r", "calls": []}]
    entries = turn_messages(record, "full")[1]["tool_calls"]
    assert [e["arguments"] for e in entries] == [{"_unparsed": cut}, {}]


@pytest.mark.timeout(30)  # joined once: seconds; quadratic: a minute or more
def test_long_thinking_in_small_pieces_goes_back_whole():
    # 1.6 MB of thinking in 4-character pieces, then a call: the next request carries the
    # thinking block joined once (`+=` per piece would be quadratic).
    pieces = [f"{i % 10_000:04d}" for i in range(400_000)]
    first = [{"type": "thinking", "text": p} for p in pieces]
    first.append({"type": "thinking", "text": "", "metadata": {"x": {"signature": "s"}}})
    provider = Scripted(first + call("missing"), say("done"))
    session = Session(provider, Toolbox())
    result = asyncio.run(session.turn("go"))
    assistant = provider.sent[1]["messages"][-2]
    assert assistant["thinking"] == [
        {"text": "".join(pieces), "metadata": {"x": {"signature": "s"}}}
    ]
    assert result.record["rounds"][0]["thinking"] == "".join(pieces)


def test_the_turn_end_event_carries_the_cost_the_record_has(tmp_path):
    priced = [{"type": "saying", "text": "hi"}, {"type": "usage", "input": 1000, "output": 100}]
    s = Session(Scripted(priced), make_toolbox(), workspace=tmp_path, provider_name="openai")
    s.facts.model = "gpt-4.1"
    events = []
    result = run(s, "hi", events)
    assert result.record["cost"] > 0 and events[-1]["cost"] == result.record["cost"]
    s.facts.model = "mystery-model-1"
    assert run(s, "again", events) and "cost" in events[-1] and events[-1]["cost"] is None


def test_every_change_of_mode_is_checked_by_the_session(tmp_path):
    from elelem_kernel.errors import ConfigError

    s = Session(Scripted(), make_toolbox(), workspace=tmp_path, mode="plan")
    with pytest.raises(ConfigError, match="unknown mode 'turbo'; modes: plan, build, verify, auto"):
        s.set_mode("turbo")
    assert s.mode == "plan"
    with pytest.raises(ConfigError, match="unknown mode"):
        Session(Scripted(), make_toolbox(), workspace=tmp_path, mode="wild")


def test_overridden_puts_everything_back_even_after_an_error(tmp_path, monkeypatch):
    from elelem_kernel.agent.toolbox import Toolbox as Box

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    provider = Scripted()
    s = Session(
        provider,
        make_toolbox(),
        workspace=tmp_path,
        mode="build",
        provider_name="mine",
        providers=catalog(),
    )
    original_add = s.toolbox.get("add")
    extra = Box()

    @extra.add("add", "a replacement", aliases=("plus",))
    def other_add(args):
        return {}

    @extra.add("note", "a scoped tool")
    def note(args):
        return {}

    with pytest.raises(RuntimeError, match="inside"):
        with s.overridden(
            mode="plan", tools=extra.tools.values(), provider="echo", system_prompt="x"
        ):
            assert (s.mode, s.provider_name, s.system_prompt) == ("plan", "echo", "x")
            assert s.toolbox.get("plus").fn is other_add and s.toolbox.get("note") is not None
            raise RuntimeError("inside")
    assert (s.mode, s.provider, s.provider_name, s.system_prompt) == (
        "build",
        provider,
        "mine",
        None,
    )
    assert s.toolbox.get("add") is original_add and s.toolbox.get("note") is None
    assert s.toolbox.get("plus") is None
