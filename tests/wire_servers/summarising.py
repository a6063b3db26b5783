"""A loopback OpenAI-format model that reads what it is sent, for long-session tests.

It answers a request without tools (a compaction's summary request) with a "summary"
naming every `FACT-…` token found in the request, and any other request with a reply
naming the facts it can see, so a test can tell which facts still reach the model. The
usage it reports is the request's size in bytes / 4, like the session's estimate.
"""

from __future__ import annotations

import re

from tests.wire_servers.formats import Round, reply
from tests.wire_servers.server import Reply, WireServer

FACT = re.compile(r"FACT-\d+-[A-Z]+")


class SummarisingServer(WireServer):
    """A `WireServer` whose POST answers depend on the request (format "openai")."""

    def _next(self, method: str, path: str) -> Reply:
        if method != "POST" or not self.requests:
            return super()._next(method, path)
        request = self.requests[-1]
        body = request.body if isinstance(request.body, dict) else {}
        facts = list(dict.fromkeys(FACT.findall(request.raw.decode("utf-8", "replace"))))
        if body.get("tools"):
            text = f"I can see {len(facts)} facts: {', '.join(facts)}."
        else:
            text = f"Summary: the person told me {', '.join(facts)}."
        return reply("openai", Round(text=text, usage={"input": len(request.raw) // 4}))
