"""The warm-up does a first turn's first-time work beyond imports (jupyter/warm_up.py)."""

from __future__ import annotations

import json
import subprocess
import sys

#: Which of a first turn's first-time pieces are ready after the modules alone, and after
#: `import_all` (a reply's first Python code block: pygments' lexer for it).
READY = """
import importlib, json, sys
from elelem_kernel.jupyter import warm_up
for name in warm_up.MODULES:
    importlib.import_module(name)
before = "pygments.lexers.python" in sys.modules
warm_up.import_all()
print(json.dumps({"before": before, "after": "pygments.lexers.python" in sys.modules}))
"""


def test_the_warm_up_readies_a_python_code_blocks_highlighting():
    done = subprocess.run(
        [sys.executable, "-c", READY], capture_output=True, text=True, check=True, timeout=120
    )
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said == {"before": False, "after": True}


#: How many SSL contexts a first turn's HTTP clients make after `import_all`: a plain-http
#: server's (a local model) and an https one's.
CONTEXTS = """
import asyncio, json, ssl
from elelem_kernel.jupyter import warm_up
from elelem_kernel.providers.openai import OpenAIProvider
warm_up.import_all()
made = []
new = ssl.SSLContext.__new__
def counting(cls, *args, **kwargs):
    made.append(cls.__name__)
    return new(cls, *args, **kwargs)
ssl.SSLContext.__new__ = counting
async def clients():
    for url in ("http://127.0.0.1:9/v1", "https://api.example.org/v1"):
        provider = OpenAIProvider(api_key="k", base_url=url)
        provider.client()
        await provider.aclose()
asyncio.run(clients())
print(json.dumps(made))
"""


def test_after_the_warm_up_a_first_turns_client_makes_no_ssl_context():
    done = subprocess.run(
        [sys.executable, "-c", CONTEXTS], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
