"""One front per shell, whichever thread asks first: a cell on the kernel's main thread and
a comm handler (the page's undo) on a subshell's thread may ask at once."""

from __future__ import annotations

import threading
import time

from elelem_kernel.jupyter import shell_front


class _Shell:
    """A shell its front can be kept for (by weak reference)."""


def test_threads_asking_at_once_get_the_same_front(monkeypatch):
    slow = shell_front.quiet_subshell_teardown

    def slowly() -> None:  # a front takes a while to make: every thread asks meanwhile
        time.sleep(0.05)
        slow()

    monkeypatch.setattr(shell_front, "quiet_subshell_teardown", slowly)
    shell = _Shell()
    start = threading.Barrier(4)
    got: list[shell_front.ShellFront] = []

    def ask() -> None:
        start.wait()
        got.append(shell_front.front_for(shell))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(got) == 4 and all(front is got[0] for front in got)
    assert shell_front.front_for(shell) is got[0]
