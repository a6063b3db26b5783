"""Free loopback ports for the test servers (never a fixed one: tests run in parallel)."""

from __future__ import annotations

import random
import socket
from pathlib import Path

#: Linux's default ephemeral range, used when /proc does not say.
EPHEMERAL = (32768, 60999)


def ephemeral_range() -> tuple[int, int]:
    """The ports the OS hands out for outgoing connections and `bind(0)`."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return EPHEMERAL


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, below the ephemeral range.

    A server started later binds it; a port from the ephemeral range (what `bind(0)`
    gives) could meanwhile become the local end of any outgoing connection on the
    machine, and the server would fail with "Address already in use". Below the range
    only another test picking the same random port could take it.
    """
    low = min(ephemeral_range()[0], EPHEMERAL[0])
    for _ in range(200):
        port = random.randrange(max(1024, low - 12_000), low)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as sock:  # the range below is all taken: let the OS pick
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
