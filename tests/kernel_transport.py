"""Kernels the tests start talk over IPC sockets, not TCP ports.

jupyter_client picks a kernel's five TCP ports by binding port 0 and letting each go
before the kernel binds it. With tests in parallel, an outgoing connection elsewhere on
the machine can take such a port first: the kernel fails with "Address already in use"
and hangs, and `start_new_kernel` waits its full 60 s for it. A Unix socket's name is
ours alone, so nothing else can take it. IPC is a transport jupyter_client and ipykernel
support; the kernels run as they would for a person otherwise.
"""

from __future__ import annotations

import functools
import tempfile
import uuid
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager


def socket_prefix() -> str:
    """A short path no other kernel uses; the kernel's sockets are this plus `-1` to `-5`.
    (A Unix socket path must stay under 108 bytes, so not under pytest's long tmp paths.)"""
    return str(Path(tempfile.gettempdir()) / f"elk-{uuid.uuid4().hex[:12]}")


def use_ipc() -> None:
    """Make IPC the default transport of every KernelManager made in this process:
    `start_new_kernel`'s, nbclient's and the tools' own. Idempotent."""
    init = KernelManager.__init__
    if getattr(init, "over_ipc", False):
        return

    @functools.wraps(init)
    def over_ipc(self: KernelManager, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("transport", "ipc")
        if kwargs["transport"] == "ipc":
            kwargs.setdefault("ip", socket_prefix())
        init(self, *args, **kwargs)

    over_ipc.over_ipc = True  # type: ignore[attr-defined]
    KernelManager.__init__ = over_ipc  # type: ignore[method-assign]
