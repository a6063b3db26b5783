"""`python -m tests.wire_servers FORMAT`: serve a demo round until interrupted."""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Sequence

from tests.wire_servers.formats import FORMATS, Round, reply
from tests.wire_servers.server import WireServer


def main(argv: Sequence[str] | None = None) -> None:
    """Serve a demo round in one format until interrupted; print the URL and env."""
    parser = argparse.ArgumentParser(description="Serve a demo round in one wire format.")
    parser.add_argument("format", choices=FORMATS)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default="Hello from the wire server.")
    args = parser.parse_args(argv)
    server = WireServer(port=args.port)
    server.default = reply(args.format, Round(text=args.text))
    with server:
        print(server.url, json.dumps(server.env(args.format)), flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
