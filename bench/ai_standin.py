"""A stand-in for jupyter-ai's `%%ai` magic, for `python -m bench --smoke` when the
jupyter-ai venv (bench/aivenv.py) is not made: the same cell shape and the same requests
(`stream: false` by default, `-m {"streaming":true}` streams), so the benchmark's own code
runs end to end in the tests without installing jupyter-ai. Its figures mean nothing.
"""

from __future__ import annotations

import json
import os
from typing import Any


def ai(line: str, cell: str) -> None:
    """`%%ai MODEL [-m JSON]`: ask the OpenAI-format server at OPENAI_BASE_URL, show the text."""
    import httpx
    from IPython.display import Markdown, display

    words = line.split(maxsplit=2)
    stream = len(words) == 3 and json.loads(words[2]).get("streaming") is True
    body = {"model": "m", "stream": stream, "messages": [{"role": "user", "content": cell}]}
    url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
    with httpx.Client() as client, client.stream("POST", url, json=body) as r:
        if not stream:
            r.read()
            display(Markdown(r.json()["choices"][0]["message"]["content"]))
            return
        text = []
        for line_ in r.iter_lines():
            if line_.startswith("data: {"):
                for choice in json.loads(line_[6:]).get("choices") or []:
                    text.append((choice.get("delta") or {}).get("content") or "")
        display(Markdown("".join(text)))


def load_ipython_extension(ip: Any) -> None:
    ip.register_magic_function(ai, magic_kind="cell", magic_name="ai")
