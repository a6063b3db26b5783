"""2. Against jupyter-ai: the same server and reply through `%%elelem` and through `%%ai`.

Two warm kernels: a python3 kernel of this venv with `%load_ext elelem_kernel`, and one
of the jupyter-ai venv (bench/aivenv.py) with `%load_ext jupyter_ai_magics`, both pointed
at the loopback OpenAI-format server (OPENAI_BASE_URL). The reply is the same 2,000-word
text. `%%ai openai-chat:...` sends `stream: false` by default (the server answers one JSON
completion); with `-m {"streaming":true}` it streams on the wire (the server streams the
2,000 deltas, as for ours). Cells run in turn, paired: execute → idle wall time, iopub
messages, and time from execute to the first iopub message showing reply text. Requests
carry a cell id, as JupyterLab sends them (our live view needs one). A second, paced run
sends 400 words at 200 words/s (about a fast real model) to show when text first appears.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

from bench import aivenv
from bench.common import (
    MARKER,
    REPO,
    Reply,
    Round,
    TimedServer,
    long_text,
    median,
    ms,
    paired,
    reply,
    result,
)
from bench.kernels import Kernel, Kernels

NAME = "jupyter_ai"

MODEL = "openai-chat:gpt-4o-mini"
LABELS = {
    "elelem": "%%elelem (streams)",
    "ai": "%%ai, default (stream: false)",
    "ai_stream": '%%ai -m {"streaming":true}',
}
#: The paced run: a reply of this many words, one every PACE seconds (a fast real model).
PACED_WORDS = 400
PACE = 0.005
CELLS = {
    "elelem": "%%elelem -p openai\nhi",
    "ai": f"%%ai {MODEL}\nhi",
    "ai_stream": f'%%ai {MODEL} -m {{"streaming":true}}\nhi',
}


#: The floor of any cell that streams this reply: a python3 cell of the same kernel that
#: only reads the 2,000-event stream with httpx and shows nothing.
READ_ONLY = """import httpx, os
with httpx.Client() as client:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
    with client.stream("POST", url, json=body) as r:
        for _ in r.iter_raw():
            pass
"""


def completion(text: str) -> Reply:
    """A non-streaming Chat Completions answer carrying `text`."""
    body = {
        "id": "chatcmpl-wire",
        "object": "chat.completion",
        "created": 0,
        "model": "wire",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2000, "total_tokens": 2010},
    }
    return Reply(
        200, {"content-type": "application/json"}, [json.dumps(body).encode()], stream=False
    )


def their_kernel(smoke: bool) -> tuple[str, str, dict[str, str]]:
    """The interpreter for `%%ai`, its extension and extra environment: the jupyter-ai
    venv, or for a smoke run without it, this one with the stand-in (bench/ai_standin.py)."""
    try:
        return str(aivenv.python(create=not smoke)), "jupyter_ai_magics", {}
    except FileNotFoundError:
        path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        return sys.executable, "bench.ai_standin", {"PYTHONPATH": path}


def run(
    quick: bool = False, smoke: bool = False, deltas: int | None = None, reps: int | None = None
) -> dict:
    deltas = deltas or (50 if smoke else 2000)
    reps = reps or (1 if smoke else 3 if quick else 7)
    paced_reps = 1 if quick or smoke else 3
    text = long_text(deltas)
    paced_words = 20 if smoke else PACED_WORDS
    paced_text = long_text(paced_words)
    theirs, extension, their_env = their_kernel(smoke)
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-ai-"))
    ws = tmp / "ws"
    ws.mkdir()
    kernels = Kernels(tmp / "k")
    kernels.add_python("jupyter-ai", theirs)
    runs: dict[str, list[dict]] = {name: [] for name in CELLS}
    paced: dict[str, list[dict]] = {name: [] for name in CELLS}
    data: dict = {"deltas": deltas, "reps": reps, "first_turn": {}, "extension": extension}
    try:
        with TimedServer() as server:
            env = kernels.env(**server.env("openai"), **their_env)
            with (
                kernels.start("python3", env, cwd=ws) as ours,
                kernels.start("jupyter-ai", env, cwd=ws) as ai,
            ):
                loaded = [
                    ours.cell("%load_ext elelem_kernel"),
                    ai.cell(f"%load_ext {extension}"),
                ]
                for cell in loaded:
                    if not cell.ok:
                        raise RuntimeError("; ".join(cell.errors()))
                kernel_of = {"elelem": ours, "ai": ai, "ai_stream": ai}
                read_only: list[dict] = []
                for i in range(reps + 1):
                    for name, code in CELLS.items():
                        server.queue(answer(name, text))
                        one = turn(server, kernel_of[name], code)
                        if i:
                            runs[name].append(one)
                        else:  # the first turn pays lazy imports (langchain, our session)
                            data["first_turn"][name] = one["wall"]
                    server.queue(answer("read_only", text))
                    read = turn(server, ours, READ_ONLY)
                    if i:
                        read_only.append(read)
                data["read_only"] = read_only
                for _ in range(paced_reps):
                    for name, code in CELLS.items():
                        server.queue(answer(name, paced_text, PACE))
                        paced[name].append(turn(server, kernel_of[name], code))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    data.update(runs=runs, paced=paced)
    title = f"2. Against jupyter-ai ({deltas}-word reply; paced: {paced_words} words at {1 / PACE:.0f}/s)"
    if extension != "jupyter_ai_magics":
        title += f" [{extension}: a stand-in, figures mean nothing]"
    return result("jupyter_ai", title, rows(runs, data) + paced_rows(paced), **data)


def answer(name: str, text: str, pace: float = 0.0) -> Reply:
    """The server's answer for cell `name`: one JSON body for `%%ai`'s default, else a stream.

    Paced, the stream sends a word every `pace` seconds, and the JSON body comes after as
    long as the whole stream would take (the model generating before it can answer).
    """
    if name == "ai":
        body = completion(text)
        return dataclasses.replace(body, delay=pace * len(text.split()))
    return reply("openai", Round(text=text)).slow(pace)


def turn(server: TimedServer, kernel: Kernel, code: str) -> dict:
    served = len(server.first_bytes)
    cell = kernel.cell(code, cell_id=uuid.uuid4().hex[:12])  # as JupyterLab sends it
    if not cell.ok:
        raise RuntimeError(f"{code.splitlines()[0]}: {'; '.join(cell.errors())}")
    seen = cell.first(MARKER)
    first_byte = server.first_bytes[served] if len(server.first_bytes) > served else None
    last_byte = server.last_bytes[served] if len(server.last_bytes) > served else None
    return {
        "server_done": last_byte - cell.start if last_byte else None,
        "wall": cell.wall,
        "iopub": cell.count(),
        "kinds": cell.kinds(),
        "first_text": seen - cell.start if seen else None,
        "byte_to_text": seen - first_byte if seen and first_byte else None,
        "stream": server.requests[-1].body.get("stream"),
    }


def paced_rows(paced: dict[str, list[dict]]) -> list[tuple]:
    def at(name: str, key: str) -> float:
        return ms(median([r[key] for r in paced[name] if r[key] is not None]))

    return [
        (
            f"paced: execute → first text, {label}",
            at(name, "first_text"),
            f"ms (server done at {at(name, 'server_done')} ms, idle at {at(name, 'wall')} ms)",
        )
        for name, label in LABELS.items()
    ]


def both(a: list[dict], b: list[dict], key: str) -> tuple[list[float], list[float]]:
    """`key` of the repetitions where both runs measured it, in pairs (a run that saw no
    reply text has None there, and leaves it out of the ratio instead of shifting it)."""
    kept = [
        (x[key], y[key])
        for x, y in zip(a, b, strict=True)
        if x[key] is not None and y[key] is not None
    ]
    return [x for x, _ in kept], [y for _, y in kept]


def rows(runs: dict[str, list[dict]], data: dict) -> list[tuple]:
    def col(name: str, key: str) -> list[float]:
        return [r[key] for r in runs[name] if r[key] is not None]

    out = []
    labels = LABELS
    for name, label in labels.items():
        out += [
            (label, ms(median(col(name, "wall"))), "ms, execute → idle"),
            ("  iopub messages per turn", median(col(name, "iopub")), runs[name][-1]["kinds"]),
            ("  execute → first reply text on iopub", ms(median(col(name, "first_text"))), "ms"),
            ("  first turn in the kernel", ms(data["first_turn"][name]), "ms (lazy imports)"),
        ]
    for name in ("ai", "ai_stream"):
        out.append(
            (
                f"ours ÷ {labels[name]}, wall",
                paired(*both(runs["elelem"], runs[name], "wall")),
                "× (paired runs)",
            )
        )
        out.append(
            (
                f"ours ÷ {labels[name]}, first text",
                paired(*both(runs["elelem"], runs[name], "first_text")),
                "×",
            )
        )
    floor = [r["wall"] for r in data["read_only"]]
    out += [
        ("a python3 cell only reading the stream (httpx)", ms(median(floor)), "ms: the floor"),
        (
            "  ÷ %%ai, default (stream: false), wall",
            paired(*both(data["read_only"], runs["ai"], "wall")),
            "× (any cell that streams this reply pays it)",
        ),
    ]
    return out
